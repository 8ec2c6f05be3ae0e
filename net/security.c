/* Configuration and security: the process's default options (built in, environment,
 * `tfsh server` flags), message-size limits given as byte counts, and CURVE cluster keys
 * (generation, loading, the ZAP handler that admits only key holders, the rule that a
 * non-loopback bind needs a key). */
#include "net/wire.h"
#include "base/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- byte counts --------------------------------------------------------------------- */

int net_parse_bytes(const char *s, uint64_t *out, rt_status *st) {
  const char *p = s ? s : "";
  while (isspace((unsigned char)*p)) p++;
  if (!isdigit((unsigned char)*p)) goto bad;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(p, &end, 10);
  if (errno) goto bad;
  uint64_t mul = 1;
  switch (toupper((unsigned char)*end)) {
  case 'K': mul = 1ull << 10; end++; break;
  case 'M': mul = 1ull << 20; end++; break;
  case 'G': mul = 1ull << 30; end++; break;
  case 'T': mul = 1ull << 40; end++; break;
  default: break;
  }
  if (mul > 1 && (!strcmp(end, "iB") || !strcmp(end, "ib") || !strcmp(end, "B") || !strcmp(end, "b")))
    end += strlen(end);
  else if (mul == 1 && (*end == 'B' || *end == 'b'))
    end++;
  while (isspace((unsigned char)*end)) end++;
  if (*end || v == 0 || v > UINT64_MAX / mul) goto bad;
  *out = v * mul;
  return RT_OK;
bad:
  return rt_error(st, RT_INVALID_ARGUMENT,
                  "'%s' is not a byte count (expected e.g. 1048576, 64k, 64M, 4G; at least 1)",
                  s ? s : "");
}

void net_limits_set_message_bytes(net_limits *l, uint64_t n) {
  l->max_frame = (size_t)n;
  l->max_header = (size_t)n;
}

/* ---- the process's defaults ---------------------------------------------------------- */

static pthread_mutex_t defaults_mu = PTHREAD_MUTEX_INITIALIZER;
static bool configured;
static net_options defaults;
static char *configured_key;   /* owns defaults.key_file when set by net_configure */

static void builtin_defaults(net_options *o) {
  net_limits_default(&o->limits);
  o->heartbeat_ms = 400;   /* a peer silent for 3 intervals (1.2 s) is gone */
  o->max_threads = 256;
  o->key_file = NULL;
  o->insecure = false;
}

/* $TFSH_MAX_MESSAGE_BYTES onto o: 0 or an error (o unchanged). */
static int env_limits(net_options *o, rt_status *st) {
  const char *v = getenv("TFSH_MAX_MESSAGE_BYTES");
  if (!v || !*v) return RT_OK;
  uint64_t n;
  if (net_parse_bytes(v, &n, st)) {
    rt_status_prefix(st, "TFSH_MAX_MESSAGE_BYTES: ");
    return st->code;
  }
  net_limits_set_message_bytes(&o->limits, n);
  return RT_OK;
}

void net_options_default(net_options *o) {
  pthread_mutex_lock(&defaults_mu);
  if (configured) {
    *o = defaults;
    pthread_mutex_unlock(&defaults_mu);
    return;
  }
  pthread_mutex_unlock(&defaults_mu);
  builtin_defaults(o);
  rt_status ignore;
  env_limits(o, &ignore);   /* a bad value fails net_server_new / net_client_new */
}

const char net_server_flags_help[] =
  "  --max-message-bytes N  refuse a message frame (header or payload) over N bytes:\n"
  "                      1048576, 64M, 4G (env TFSH_MAX_MESSAGE_BYTES; default 1M headers,\n"
  "                      4G payload frames). The sender gets 'message over limits'\n"
  "  --cluster-key FILE  encrypt and authenticate with the cluster key FILE made by\n"
  "                      `tfsh keygen FILE` (env TFSH_CLUSTER_KEY): only processes holding\n"
  "                      the same key can talk to this task\n"
  "  --insecure          allow listening on a non-loopback address without a cluster key\n";

int net_configure(const char *max_message_bytes, const char *key_file, bool insecure,
                  rt_status *st) {
  net_options o;
  net_options_default(&o);
  if (env_limits(&o, st)) return st->code;
  if (max_message_bytes) {
    uint64_t n;
    if (net_parse_bytes(max_message_bytes, &n, st)) {
      rt_status_prefix(st, "--max-message-bytes: ");
      return st->code;
    }
    net_limits_set_message_bytes(&o.limits, n);
  }
  char *key = NULL;
  if (key_file) {
    net_options probe = o;
    probe.key_file = key_file;
    net_key k;
    if (net_key_for(&probe, &k, st)) return st->code;
    key = xstrdup(key_file);
    o.key_file = key;
  }
  if (insecure) o.insecure = true;
  pthread_mutex_lock(&defaults_mu);
  if (key) configured_key = key;   /* kept for the process: options copy the pointer */
  defaults = o;
  configured = true;
  pthread_mutex_unlock(&defaults_mu);
  return RT_OK;
}

/* ---- key files ----------------------------------------------------------------------- */

static bool z85_key(const char *s) {
  uint8_t bin[32];
  return strlen(s) == 40 && zmq_z85_decode(bin, s) != NULL;
}

static int load_key(const char *path, const char *origin, net_key *k, rt_status *st) {
  snprintf(k->path, sizeof k->path, "%s", path);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return rt_error(st, RT_FAILED_PRECONDITION, "cannot read the cluster key %s%s: %s", path,
                    origin, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
    close(fd);
    return rt_error(st, RT_FAILED_PRECONDITION, "the cluster key %s%s is not a regular file",
                    path, origin);
  }
  if (sb.st_mode & 077) {
    close(fd);
    return rt_error(st, RT_PERMISSION_DENIED,
                    "the cluster key %s%s is readable by others (mode %04o): chmod 600 %s",
                    path, origin, (unsigned)(sb.st_mode & 07777), path);
  }
  char buf[4096];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n < 0) n = 0;
  buf[n] = '\0';
  k->pub[0] = k->sec[0] = '\0';
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    while (isspace((unsigned char)*line)) line++;
    if (*line == '#' || !*line) continue;
    char *eq = strchr(line, '=');
    if (!eq) continue;
    char *name = line, *val = eq + 1;
    for (char *e = eq; e > name && isspace((unsigned char)e[-1]);) *--e = '\0';
    *eq = '\0';
    while (isspace((unsigned char)*val)) val++;
    for (char *e = val + strlen(val); e > val && isspace((unsigned char)e[-1]);) *--e = '\0';
    if (!strcmp(name, "public-key") && strlen(val) < sizeof k->pub) strcpy(k->pub, val);
    if (!strcmp(name, "secret-key") && strlen(val) < sizeof k->sec) strcpy(k->sec, val);
  }
  char derived[41];
  if (!z85_key(k->pub) || !z85_key(k->sec) || zmq_curve_public(derived, k->sec) ||
      strcmp(derived, k->pub))
    return rt_error(st, RT_INVALID_ARGUMENT,
                    "the cluster key %s%s is not a tfsh cluster key (expected the public-key "
                    "and secret-key lines `tfsh keygen` writes)", path, origin);
  k->on = true;
  return RT_OK;
}

int net_key_for(const net_options *o, net_key *k, rt_status *st) {
  memset(k, 0, sizeof *k);
  net_options probe;
  builtin_defaults(&probe);
  if (env_limits(&probe, st)) return st->code;
  if (o->key_file) return *o->key_file ? load_key(o->key_file, "", k, st) : RT_OK;
  const char *env = getenv("TFSH_CLUSTER_KEY");
  if (!env || !*env) return RT_OK;
  return load_key(env, " (TFSH_CLUSTER_KEY)", k, st);
}

int net_keygen(const char *path, rt_status *st) {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec))
    return rt_error(st, RT_UNIMPLEMENTED, "cannot make a CURVE key: %s (libzmq without CURVE?)",
                    zmq_strerror(errno));
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    return rt_error(st, errno == EEXIST ? RT_ALREADY_EXISTS : RT_FAILED_PRECONDITION,
                    "cannot write the cluster key %s: %s%s", path, strerror(errno),
                    errno == EEXIST ? " (remove it first to make a new key)" : "");
  fchmod(fd, 0600);   /* whatever the umask */
  char text[512];
  int len = snprintf(text, sizeof text,
                     "# tfsh cluster key (ZeroMQ CURVE keypair, Z85). Every task and client of\n"
                     "# the cluster needs it: TFSH_CLUSTER_KEY=%s or --cluster-key. Keep it\n"
                     "# secret: whoever holds it can run code on the cluster's tasks.\n"
                     "public-key = %s\nsecret-key = %s\n",
                     path, pub, sec);
  bool ok = write(fd, text, (size_t)len) == len;
  ok = close(fd) == 0 && ok;
  if (!ok) {
    int e = errno;
    unlink(path);
    return rt_error(st, RT_DATA_LOSS, "cannot write the cluster key %s: %s", path, strerror(e));
  }
  return RT_OK;
}

int net_keygen_main(int argc, char **argv) {
  if (argc != 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fputs("usage: tfsh keygen FILE\n"
          "  write a new cluster key (a CURVE keypair) to FILE, mode 0600. Give it to every\n"
          "  task and client of the cluster (TFSH_CLUSTER_KEY=FILE, or tfsh server\n"
          "  --cluster-key FILE): their traffic is encrypted and no one without it gets in.\n",
          argc == 2 ? stdout : stderr);
    return argc == 2 ? 0 : 2;
  }
  rt_status st;
  if (net_keygen(argv[1], &st)) {
    fprintf(stderr, "tfsh keygen: %s\n", st.msg);
    return 1;
  }
  printf("wrote a cluster key to %s (mode 0600); start every task with TFSH_CLUSTER_KEY=%s\n",
         argv[1], argv[1]);
  return 0;
}

/* ---- CURVE --------------------------------------------------------------------------- */

/* The ZAP handler: ZeroMQ asks it about every CURVE handshake on a server socket of this
 * process's context. Each server's ZAP domain is its own public key; a client is admitted
 * when its public key is that same key (the shared cluster keypair). Knowing the public
 * key alone is not enough: the handshake proves the client holds the secret key too. */
static void *zap_main(void *arg) {
  void *rep = arg;
  for (;;) {
    zmq_msg_t part[8];   /* the first 8 frames; any further ones are dropped */
    int n = 0, more = 1;
    while (more) {
      zmq_msg_t extra, *m = n < 8 ? &part[n] : &extra;
      zmq_msg_init(m);
      if (zmq_msg_recv(m, rep, 0) < 0) {
        zmq_msg_close(m);
        if (errno == EINTR) continue;
        for (int i = 0; i < n; i++) zmq_msg_close(&part[i]);
        return NULL;   /* the context is never terminated: not reached */
      }
      more = zmq_msg_more(m);
      if (m == &extra) zmq_msg_close(m);
      else n++;
    }
    /* version, request_id, domain, address, routing_id, mechanism, credentials... */
    bool ok = false;
    if (n >= 7 && zmq_msg_size(&part[5]) == 5 && !memcmp(zmq_msg_data(&part[5]), "CURVE", 5) &&
        zmq_msg_size(&part[6]) == 32 && zmq_msg_size(&part[2]) == 40) {
      char client[41];
      if (zmq_z85_encode(client, zmq_msg_data(&part[6]), 32))
        ok = !memcmp(client, zmq_msg_data(&part[2]), 40);
    }
    const char *code = ok ? "200" : "400";
    const char *text = ok ? "OK" : "not the cluster key";
    zmq_send(rep, "1.0", 3, ZMQ_SNDMORE);
    zmq_send(rep, n > 1 ? zmq_msg_data(&part[1]) : "", n > 1 ? zmq_msg_size(&part[1]) : 0,
             ZMQ_SNDMORE);
    zmq_send(rep, code, 3, ZMQ_SNDMORE);
    zmq_send(rep, text, strlen(text), ZMQ_SNDMORE);
    zmq_send(rep, "", 0, ZMQ_SNDMORE);
    zmq_send(rep, "", 0, 0);
    for (int i = 0; i < n; i++) zmq_msg_close(&part[i]);
  }
}

static pthread_once_t zap_once = PTHREAD_ONCE_INIT;
static int zap_err;

static void zap_start(void) {
  void *rep = zmq_socket(net_ctx(), ZMQ_REP);
  int zero = 0;
  pthread_t t;
  if (!rep || zmq_setsockopt(rep, ZMQ_LINGER, &zero, sizeof zero) ||
      zmq_bind(rep, "inproc://zeromq.zap.01")) {
    zap_err = errno ? errno : EINVAL;
    return;
  }
  if ((zap_err = pthread_create(&t, NULL, zap_main, rep))) return;
  pthread_detach(t);
}

int net_curve_server(void *sock, const net_key *k) {
  pthread_once(&zap_once, zap_start);
  if (zap_err) return zap_err;
  int one = 1;
  if (zmq_setsockopt(sock, ZMQ_CURVE_SERVER, &one, sizeof one) ||
      zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->sec, 40) ||
      zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, k->pub, 40))
    return errno;
  return 0;
}

int net_curve_client(void *sock, const net_key *k) {
  if (zmq_setsockopt(sock, ZMQ_CURVE_SERVERKEY, k->pub, 40) ||
      zmq_setsockopt(sock, ZMQ_CURVE_PUBLICKEY, k->pub, 40) ||
      zmq_setsockopt(sock, ZMQ_CURVE_SECRETKEY, k->sec, 40))
    return errno;
  return 0;
}

bool net_endpoint_local(const char *ep) {
  if (strncmp(ep, "tcp://", 6)) return true;   /* ipc, inproc: this machine only */
  const char *host = ep + 6;
  const char *colon = strrchr(host, ':');
  size_t len = colon ? (size_t)(colon - host) : strlen(host);
  char h[256];
  if (len >= sizeof h) return false;
  memcpy(h, host, len);
  h[len] = '\0';
  return !strncmp(h, "127.", 4) || !strcmp(h, "localhost") || !strcmp(h, "::1") ||
         !strcmp(h, "[::1]") || !strcmp(h, "lo") || !strcmp(h, "ip6-localhost");
}
