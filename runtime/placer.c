#include "runtime/placer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "runtime/device.h"
#include "runtime/op.h"

static int find_root(int *parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

static void unite(int *parent, int a, int b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a != b) parent[a < b ? b : a] = a < b ? a : b;   /* the older node is the root */
}

/* Colocation: reference inputs, resource inputs (TF's rule: an op that takes a resource
 * handle runs with the op that made it, so a variable's reads and updates run where it
 * lives) and "_class": ["loc:@name"]. */
static void build_groups(const rt_graph *g, int *parent) {
  for (int i = 0; i < g->n_nodes; i++) parent[i] = i;
  for (int i = 0; i < g->n_nodes; i++) {
    const rt_node *n = g->nodes[i];
    for (int k = 0; k < n->n_data_inputs; k++) {
      const rt_edge *e = &n->edges[k];
      const rt_node *src = g->nodes[e->node];
      if (src->out_refs[e->index] || src->out_types[e->index] == RT_RESOURCE)
        unite(parent, i, e->node);
    }
    const rt_attr_value *cls = rt_node_attr(n, "_class");
    if (cls && cls->kind == RT_ATTR_LIST_STRING)
      for (int k = 0; k < cls->list.n; k++) {
        const char *s = ((char **)cls->list.v)[k];
        if (strncmp(s, "loc:@", 5)) continue;
        const rt_node *other = rt_graph_find(g, s + 5);
        if (other) unite(parent, i, other->id);
      }
  }
}

/* TF's rule for a node with an explicit device that takes a resource handle made by a node
 * with one: the handle's device wins and the node's own request is ignored ("Ignoring device
 * specification ... because the input edge from 'v' is a reference connection and already
 * has a device field set"). An explicit "_class" colocation still conflicts. Returns the
 * maker, or -1. */
static int resource_maker_with_device(const rt_graph *g, const rt_node *n) {
  if (rt_node_attr(n, "_class")) return -1;
  for (int k = 0; k < n->n_data_inputs; k++) {
    const rt_edge *e = &n->edges[k];
    const rt_node *src = g->nodes[e->node];
    if (src->out_types[e->index] == RT_RESOURCE && src->device[0]) return e->node;
  }
  return -1;
}

static void list_devices(const char *const *devices, int n, char *buf, size_t len) {
  size_t off = (size_t)snprintf(buf, len, "[ ");
  for (int i = 0; i < n && off < len; i++)
    off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "", devices[i]);
  if (off < len) snprintf(buf + off, len - off, " ]");
}

/* The best device matching spec whose type the group has kernels for (gpu_ok: every
 * member has a GPU kernel), as TF1 ranks them: a GPU before a CPU, the default device's
 * task before others, then the first listed (GPU:0 before GPU:1); among CPUs the default
 * itself first. */
static int choose(const rt_devname *spec, const rt_devname *devs, int n, int dflt, bool gpu_ok) {
  int best = -1;
  bool best_gpu = false, best_home = false;
  /* A node that asks for nothing stays in the default device's task. */
  bool anywhere = !spec->job[0] && spec->replica < 0 && spec->task < 0 && !spec->type[0] && spec->id < 0;
  for (int i = 0; i < n; i++) {
    if (!rt_devname_matches(spec, &devs[i])) continue;
    bool gpu = !strcmp(devs[i].type, "GPU");
    if (gpu && !gpu_ok) continue;
    bool home = dflt >= 0 && devs[i].task == devs[dflt].task && devs[i].replica == devs[dflt].replica &&
                !strcmp(devs[i].job, devs[dflt].job);
    if (anywhere && dflt >= 0 && !home) continue;
    if (best < 0 || (gpu && !best_gpu) || (gpu == best_gpu && home && !best_home)) {
      best = i;
      best_gpu = gpu;
      best_home = home;
    }
  }
  if (!best_gpu && dflt >= 0 && rt_devname_matches(spec, &devs[dflt])) return dflt;
  return best;
}

/* Does every member of each group have a kernel for GPUs? (per root) */
static void group_gpu_kernels(const rt_graph *g, int *parent, bool *gpu_ok, int *no_gpu) {
  for (int i = 0; i < g->n_nodes; i++) {
    gpu_ok[i] = true;
    no_gpu[i] = -1;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    int r = find_root(parent, i);
    if (gpu_ok[r] && !rt_node_has_kernel(g->nodes[i], RT_DEV_GPU)) {
      gpu_ok[r] = false;
      no_gpu[r] = i;   /* the first member without one, for messages */
    }
  }
}

static void set_str(char **dst, const char *s) {
  free(*dst);
  *dst = xstrdup(s);
}

/* What rt_place works on: the graph, the devices, and per node (read at a group's root)
 * its union-find parent, the device chosen, the request merged and whose it was. */
typedef struct place_st {
  rt_graph *g;
  const char *const *devices;
  int n_devices, dflt;             /* dflt: the default device's index, -1 if none */
  const rt_place_opts *o;
  rt_status *st;
  int *parent, *chosen, *owner;    /* owner: node whose request set the group's */
  rt_devname *devs, *spec;
  bool *gpu_ok;                    /* every member of the group has a GPU kernel */
  int *no_gpu;                     /* else the first that has none, for messages */
} place_st;

/* The requests of each group, merged at its root; a group already placed keeps its device. */
static int merge_requests(place_st *p) {
  rt_graph *g = p->g;
  const char *const *devices = p->devices;
  int n = g->n_nodes, n_devices = p->n_devices, rc = RT_OK;
  const rt_place_opts *o = p->o;
  rt_status *st = p->st;
  int *parent = p->parent, *chosen = p->chosen, *owner = p->owner;
  rt_devname *spec = p->spec;
  /* Merge the requests of each group at its root; a group already placed keeps its device. */
  for (int i = 0; i < n; i++) {
    rt_devname_clear(&spec[i]);
    chosen[i] = -1;
    owner[i] = -1;
  }
  const char *last_dev = NULL;
  rt_devname last_req;
  for (int i = 0; i < n && !rc; i++) {
    const rt_node *nd = g->nodes[i];
    int r = find_root(parent, i);
    if (nd->assigned) {
      for (int d = 0; d < n_devices; d++)
        if (!strcmp(devices[d], nd->assigned)) chosen[r] = d;
      continue;
    }
    rt_devname req;
    if (last_dev && !strcmp(last_dev, nd->device)) {
      req = last_req;   /* nodes in one device scope ask alike: parse it once */
    } else if ((rc = rt_devname_parse(nd->device, &req, st))) {
      rt_status_prefix(st, "node '%s': ", nd->name);
      break;
    } else {
      last_dev = nd->device;
      last_req = req;
    }
    /* A soft request (made by a device function) yields to the group's explicit one. */
    if (nd->device[0] && owner[r] >= 0 && rt_node_bool(nd, "_device_soft", false)) continue;
    if (nd->device[0]) {
      rt_devname merged = spec[r];
      rt_devname_merge(&merged, &req);
      /* Two explicit requests in one group that disagree: keep the first unless soft. */
      if (owner[r] >= 0 && !rt_devname_matches(&spec[r], &merged) &&
          resource_maker_with_device(g, nd) >= 0)
        continue;   /* the resource's device wins */
      if (owner[r] >= 0 && !rt_devname_matches(&spec[r], &merged) && !o->soft) {
        char a[160], b[160];
        rc = rt_error(st, RT_INVALID_ARGUMENT,
                      "Cannot colocate nodes '%s' and '%s': '%s' asks for %s but '%s' for %s",
                      g->nodes[owner[r]]->name, nd->name, g->nodes[owner[r]]->name,
                      rt_devname_str(&spec[r], a, sizeof a), nd->name,
                      rt_devname_str(&req, b, sizeof b));
        break;
      }
      if (owner[r] < 0) {
        spec[r] = merged;
        owner[r] = i;
      }
    }
  }
  return rc;
}

/* A device per group, then given to every unplaced member, with the reason. */
static int assign_groups(place_st *p) {
  rt_graph *g = p->g;
  int n = g->n_nodes, n_devices = p->n_devices, dflt = p->dflt, rc = RT_OK;
  int *chosen = p->chosen, *owner = p->owner, *no_gpu = p->no_gpu;
  bool *gpu_ok = p->gpu_ok;
  /* Choose a device per group, then give it to every unplaced member. */
  rt_devname explicit_spec;
  char explicit_reason[256];
  bool have_explicit = false;
  for (int i = 0; i < n && !rc; i++) {
    rt_node *nd = g->nodes[i];
    int r = find_root(p->parent, i);
    if (nd->assigned) continue;
    char reason[256] = "";
    if (chosen[r] < 0) {
      rt_devname s = p->spec[r];
      /* A GPU asked for by a group with a member that has no GPU kernel. */
      bool kernel_missing = !gpu_ok[r] && !strcmp(s.type, "GPU");
      int d = kernel_missing ? -1 : choose(&s, p->devs, n_devices, dflt, gpu_ok[r]);
      if (d >= 0) {
        char b[160];
        const rt_node *who = owner[r] >= 0 ? g->nodes[owner[r]] : NULL;
        const char *why = who ? rt_node_string(who, "_device_reason", NULL) : NULL;
        if (!who) {
          snprintf(reason, sizeof reason, "default");
        } else if (why) {
          snprintf(reason, sizeof reason, "%s", why);
        } else if (have_explicit && !memcmp(&s, &explicit_spec, sizeof s)) {
          memcpy(reason, explicit_reason, sizeof reason);   /* the last group's request */
        } else {
          snprintf(reason, sizeof reason, "explicit %s", rt_devname_str(&s, b, sizeof b));
          explicit_spec = s;
          memcpy(explicit_reason, reason, sizeof reason);
          have_explicit = true;
        }
      } else if (p->o->soft) {
        char b[160];
        rt_devname_str(&s, b, sizeof b);
        s.type[0] = '\0';
        s.id = -1;
        d = choose(&s, p->devs, n_devices, dflt, gpu_ok[r]);
        if (d < 0) d = dflt >= 0 ? dflt : 0;
        if (kernel_missing)
          snprintf(reason, sizeof reason, "soft placement fallback from %s: no GPU kernel for %s (%s)", b,
                   g->nodes[no_gpu[r]]->op, g->nodes[no_gpu[r]]->name);
        else
          snprintf(reason, sizeof reason, "soft placement fallback from %s", b);
      } else if (kernel_missing) {
        char b[160];
        const rt_node *who = g->nodes[owner[r] >= 0 ? owner[r] : i], *culprit = g->nodes[no_gpu[r]];
        if (culprit == who)
          rc = rt_error(p->st, RT_INVALID_ARGUMENT,
                        "Cannot assign a device for operation '%s': Could not satisfy explicit device "
                        "specification '%s' because no supported kernel for GPU devices is available.",
                        who->name, rt_devname_str(&s, b, sizeof b));
        else
          rc = rt_error(p->st, RT_INVALID_ARGUMENT,
                        "Cannot assign a device for operation '%s': Could not satisfy explicit device "
                        "specification '%s' because no supported kernel for GPU devices is available "
                        "for '%s' (op: %s), colocated with it.",
                        who->name, rt_devname_str(&s, b, sizeof b), culprit->name, culprit->op);
        break;
      } else {
        char b[160], list[2048];
        const rt_node *who = g->nodes[owner[r] >= 0 ? owner[r] : i];
        list_devices(p->devices, n_devices, list, sizeof list);
        rc = rt_error(p->st, RT_INVALID_ARGUMENT,
                      "Cannot assign a device for operation '%s': Operation was explicitly "
                      "assigned to %s but available devices are %s. Make sure the device "
                      "specification refers to a valid device.",
                      who->name, rt_devname_str(&s, b, sizeof b), list);
        break;
      }
      chosen[r] = d;
      set_str(&g->nodes[r]->reason, reason);
    }
    set_str(&nd->assigned, p->devices[chosen[r]]);
    if (r != i) {
      char buf[300];
      snprintf(buf, sizeof buf, "colocated with %s", g->nodes[r]->name);
      set_str(&nd->reason, buf);
    }
  }
  return rc;
}

int rt_place(rt_graph *g, const char *const *devices, int n_devices, const rt_place_opts *o,
             rt_status *st) {
  int n = g->n_nodes, rc = RT_OK;
  int *parent = xcalloc((size_t)n + 1, sizeof *parent);
  int *chosen = xcalloc((size_t)n + 1, sizeof *chosen);
  rt_devname *devs = xcalloc((size_t)n_devices + 1, sizeof *devs);
  rt_devname *spec = xcalloc((size_t)n + 1, sizeof *spec);
  int *owner = xcalloc((size_t)n + 1, sizeof *owner);  /* node whose request set the group's */
  bool *gpu_ok = xcalloc((size_t)n + 1, sizeof *gpu_ok);
  int *no_gpu = xcalloc((size_t)n + 1, sizeof *no_gpu);
  int dflt = -1;
  for (int i = 0; i < n_devices; i++) {
    rt_devname_parse(devices[i], &devs[i], NULL);
    if (o->default_device && !strcmp(devices[i], o->default_device)) dflt = i;
  }
  build_groups(g, parent);

  place_st p = {g, devices, n_devices, dflt, o, st, parent, chosen, owner, devs, spec, gpu_ok, no_gpu};
  rc = merge_requests(&p);
  /* GPU kernels matter where there is a GPU, or a group asks for one */
  bool gpu = false;
  for (int i = 0; i < n_devices && !gpu; i++) gpu = !strcmp(devs[i].type, "GPU");
  for (int i = 0; i < n && !gpu; i++) gpu = parent[i] == i && !strcmp(spec[i].type, "GPU");
  if (gpu) group_gpu_kernels(g, parent, gpu_ok, no_gpu);
  if (!rc) rc = assign_groups(&p);
  free(parent);
  free(chosen);
  free(devs);
  free(spec);
  free(owner);
  free(gpu_ok);
  free(no_gpu);
  return rc;
}
