/* A count per string (TF1's Graph._names_in_use: name -> times used), for the path that
 * names every node: open addressing on the strings' hashes, the strings in pooled blocks
 * that live as long as the table. Nothing is removed. */
#ifndef TFSH_BASE_COUNTS_H
#define TFSH_BASE_COUNTS_H

#include <stdint.h>

typedef struct counts counts;

counts *counts_new(void);
void counts_free(counts *c);
int64_t counts_get(const counts *c, const char *s);   /* 0 when s is absent */
void counts_set(counts *c, const char *s, int64_t count);
int64_t counts_size(const counts *c);                   /* strings held */

#endif
