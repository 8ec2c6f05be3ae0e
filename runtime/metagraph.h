/* MetaGraphDefs (a Saver's .meta file, tf.train.export_meta_graph) in TensorFlow's binary
 * format through protobuf-c (runtime/proto/meta_graph.proto): the GraphDef (as its bytes,
 * for runtime/graphdef.c), the SaverDef, the collections and the MetaInfoDef's version
 * fields; and VariableDef, what TF keeps in a variable collection's bytes_list. Damaged
 * input is reported with the offset where its wire format breaks (rt_pb_check). */
#ifndef TFSH_METAGRAPH_H
#define TFSH_METAGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/status.h"

typedef enum rt_mg_kind { RT_MG_NODES = 1, RT_MG_BYTES, RT_MG_INT64, RT_MG_FLOAT } rt_mg_kind;

typedef struct rt_mg_collection {
  char *key;
  rt_mg_kind kind;
  int n;
  char **v;          /* NODES, BYTES: the values (BYTES: len[i] bytes, NUL added) */
  size_t *len;
  int64_t *i;        /* INT64 */
  double *f;         /* FLOAT */
} rt_mg_collection;

typedef struct rt_metagraph {
  unsigned char *graph_def;   /* the GraphDef's binary form (malloc'd; NULL when none) */
  size_t graph_def_len;
  bool has_saver;
  char *filename_tensor_name, *save_tensor_name, *restore_op_name;
  int max_to_keep, version;
  bool sharded;
  double keep_hours;
  char *meta_graph_version, *tensorflow_version;
  int n_tags;
  char **tags;
  bool stripped_default_attrs;
  int n_coll;
  rt_mg_collection *coll;
} rt_metagraph;

/* `what` names the file in errors. */
int rt_metagraph_decode(const unsigned char *p, size_t n, const char *what, rt_metagraph *mg, rt_status *st);
/* The strings of mg are the caller's; *out is malloc'd. */
int rt_metagraph_encode(const rt_metagraph *mg, unsigned char **out, size_t *n, rt_status *st);
void rt_metagraph_clear(rt_metagraph *mg);

typedef struct rt_variable_def {
  char *variable_name, *initial_value_name, *initializer_name, *snapshot_name;
  bool is_resource, trainable;
} rt_variable_def;

int rt_variable_def_decode(const unsigned char *p, size_t n, const char *what, rt_variable_def *v, rt_status *st);
int rt_variable_def_encode(const rt_variable_def *v, unsigned char **out, size_t *n, rt_status *st);
void rt_variable_def_clear(rt_variable_def *v);

/* Messages whose wire format rt_pb_check walks into (the rest are bytes to it). */
typedef enum rt_pb_msg { RT_PB_GRAPH_DEF = 1, RT_PB_META_GRAPH_DEF, RT_PB_VARIABLE_DEF } rt_pb_msg;
/* Where p stops being a well-formed message of kind m: true with *off (from the start of
 * p) and *why ("a length past the end", ...) at the first break, false when none is
 * found. */
bool rt_pb_check(const unsigned char *p, size_t n, rt_pb_msg m, size_t *off, const char **why);
/* The error for input that protobuf-c refused: "WHAT: not a KIND (damaged at offset N: WHY)". */
int rt_pb_error(rt_status *st, const unsigned char *p, size_t n, rt_pb_msg m, const char *what, const char *kind);

#endif
