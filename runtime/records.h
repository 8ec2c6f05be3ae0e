/* TFRecord framing, the container of TensorBoard's event files: each record is
 *   u64 length | u32 masked CRC32C of the length | data | u32 masked CRC32C of the data
 * (little-endian, runtime/bundle.h's masked CRC32C). Records are written whole with one
 * fwrite each; the reader checks both checksums and names the file and the record's offset
 * in every error. */
#ifndef TFSH_RECORDS_H
#define TFSH_RECORDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/status.h"

/* Append one record; 0, or -1 with errno set. */
int rt_record_write(FILE *f, const void *data, size_t n);

/* The record at *off of buf (n bytes, the whole file): its data in *data / *len (pointing
 * into buf), *off moved past it. 1 with a record, 0 at the end, -1 on a damaged record
 * (DATA_LOSS naming what and the offset). */
int rt_record_next(const unsigned char *buf, size_t n, size_t *off, const char *what, const unsigned char **data,
                   size_t *len, rt_status *st);

#endif
