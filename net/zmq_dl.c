/* ZeroMQ, loaded on its first call (base/dl.h): every zmq_* function the project calls is
 * defined here under its own name, loading libzmq once and jumping to the real one. The
 * binary exports none of them (it is not linked -rdynamic, and no library on its link
 * line wants them: unit/test_dl checks), so libzmq's calls to itself stay inside libzmq.
 * A process that never opens a socket (tfsh -c, tfsh lint) never maps ZeroMQ, libstdc++
 * or Kerberos. */
#include <zmq.h>

#include <pthread.h>
#include <stdint.h>

#include "base/dl.h"

#ifndef TFSH_ZMQ_SONAME
#define TFSH_ZMQ_SONAME "libzmq.so.5"
#endif

/* X(return type, name, parameters, arguments) */
#define ZMQ_FNS(X)                                                                          \
  X(void *, zmq_ctx_new, (void), ())                                                        \
  X(void *, zmq_socket, (void *c, int type), (c, type))                                     \
  X(int, zmq_close, (void *s), (s))                                                         \
  X(int, zmq_bind, (void *s, const char *addr), (s, addr))                                  \
  X(int, zmq_connect, (void *s, const char *addr), (s, addr))                               \
  X(int, zmq_setsockopt, (void *s, int o, const void *v, size_t n), (s, o, v, n))           \
  X(int, zmq_getsockopt, (void *s, int o, void *v, size_t *n), (s, o, v, n))                \
  X(int, zmq_socket_monitor, (void *s, const char *addr, int events), (s, addr, events))    \
  X(int, zmq_send, (void *s, const void *b, size_t n, int f), (s, b, n, f))                 \
  X(int, zmq_recv, (void *s, void *b, size_t n, int f), (s, b, n, f))                       \
  X(int, zmq_poll, (zmq_pollitem_t *items, int n, long timeout), (items, n, timeout))       \
  X(int, zmq_msg_init, (zmq_msg_t *m), (m))                                                 \
  X(int, zmq_msg_init_data, (zmq_msg_t *m, void *d, size_t n, zmq_free_fn *f, void *h),     \
    (m, d, n, f, h))                                                                        \
  X(int, zmq_msg_send, (zmq_msg_t *m, void *s, int f), (m, s, f))                           \
  X(int, zmq_msg_recv, (zmq_msg_t *m, void *s, int f), (m, s, f))                           \
  X(int, zmq_msg_close, (zmq_msg_t *m), (m))                                                \
  X(void *, zmq_msg_data, (zmq_msg_t *m), (m))                                              \
  X(size_t, zmq_msg_size, (const zmq_msg_t *m), (m))                                        \
  X(int, zmq_msg_more, (const zmq_msg_t *m), (m))                                           \
  X(const char *, zmq_strerror, (int e), (e))                                               \
  X(int, zmq_curve_keypair, (char *pub, char *sec), (pub, sec))                             \
  X(int, zmq_curve_public, (char *pub, const char *sec), (pub, sec))                        \
  X(char *, zmq_z85_encode, (char *d, const uint8_t *b, size_t n), (d, b, n))               \
  X(uint8_t *, zmq_z85_decode, (uint8_t * d, const char *s), (d, s))

#define SLOT(ret, name, params, args) static ret(*p_##name) params;
ZMQ_FNS(SLOT)
#undef SLOT

static void load(void) {
#define NAME(ret, name, params, args) #name,
#define ADDR(ret, name, params, args) (void *)&p_##name,
  static const char *const names[] = {ZMQ_FNS(NAME)};
  void *const slots[] = {ZMQ_FNS(ADDR)};
#undef NAME
#undef ADDR
  dl_require(TFSH_ZMQ_SONAME, "libzmq5", names, slots, sizeof names / sizeof *names);
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

#define TRAMPOLINE(ret, name, params, args) \
  ret name params {                         \
    pthread_once(&once, load);              \
    return p_##name args;                   \
  }
ZMQ_FNS(TRAMPOLINE)
#undef TRAMPOLINE
