/* A cluster: jobs of tasks, each task a server address (TF1's ClusterSpec, resolved). */
#ifndef TFSH_CLUSTER_H
#define TFSH_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>

#include "base/status.h"

typedef struct rt_task_addr {
  char *job;
  int index;
  char *addr;      /* "host:port", or a ZeroMQ endpoint ("inproc://...", "tcp://...") */
} rt_task_addr;

typedef struct rt_cluster {
  int n;
  rt_task_addr *tasks;
} rt_cluster;

rt_cluster *rt_cluster_new(void);
void rt_cluster_free(rt_cluster *c);
rt_cluster *rt_cluster_copy(const rt_cluster *c);
/* Add a task; a duplicate (job, index) replaces the address. */
void rt_cluster_add(rt_cluster *c, const char *job, int index, const char *addr);
const rt_task_addr *rt_cluster_find(const rt_cluster *c, const char *job, int index);
/* ZeroMQ endpoint for an address: "host:port" → "tcp://host:port"; URLs pass through,
 * "grpc://" and "tfs://" are stripped to tcp. */
void rt_endpoint(const char *addr, char *buf, size_t n);
/* "/job:J/replica:0/task:I" */
void rt_task_name(const char *job, int index, char *buf, size_t n);

#endif

/* A cluster spec from text: JSON {"ps": ["h:p"], "worker": {"0": "h:p"}} or the legacy
 * form "ps|h:p;h:p,worker|h:p" (white space around job names and addresses ignored), the
 * tasks as written: each malformed entry (an address that is not a string, a task index
 * that is not a number, a job that is neither a list nor an object, a legacy part without
 * '|') is passed to problem() and skipped. The message names the entry and its fix, with
 * no prefix (callers add theirs: "cluster spec: "). Nothing is checked beyond the form:
 * job names, addresses and shared addresses are rt_cluster_check's (and `tfsh lint`'s).
 * NULL, after one problem, only when the JSON does not parse or is not an object. */
typedef void (*rt_cluster_problem_fn)(void *ctx, const char *msg);
rt_cluster *rt_cluster_parse_each(const char *text, rt_cluster_problem_fn problem, void *ctx);
/* rt_cluster_parse_each, its first problem as the error ("cluster spec: ..."), then at
 * least one task and rt_cluster_check: valid job names and "host:port" addresses, no two
 * tasks on one address (both named in the error). */
rt_cluster *rt_cluster_parse(const char *text, rt_status *st);
/* TF_CONFIG: {"cluster": {...}, "task": {"type": "worker", "index": 0}}. job/index may be
 * NULL; *job gets "" and *index -1 when the task part is absent. */
rt_cluster *rt_cluster_from_tf_config(const char *json, char *job, size_t job_len, int *index,
                                      rt_status *st);
/* Re-check a cluster: valid names and addresses, no shared address. */
int rt_cluster_check(const rt_cluster *c, rt_status *st);
/* A job name: letters, digits and _, not starting with a digit. */
bool rt_cluster_valid_job(const char *s);
/* "host:port" with a numeric port up to 65535, or a URL tfsh accepts. */
bool rt_cluster_valid_address(const char *s);
/* Tasks of a job (0 if none). */
int rt_cluster_num_tasks(const rt_cluster *c, const char *job);
/* "ps, worker" */
void rt_cluster_jobs(const rt_cluster *c, char *buf, size_t n);
