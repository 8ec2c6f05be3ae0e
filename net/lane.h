/* Internal to net/: the direct lane, a plain TCP connection beside a peer's ZeroMQ socket.
 *
 * A ZeroMQ message costs three thread wake-ups (the sender's I/O thread, the receiver's,
 * then the receiving thread); on a lane it costs one, the receiving thread's, because the
 * thread that sends writes the socket itself and the thread that waits reads it. A server
 * without a cluster key offers a lane on a second port of the address it serves, chosen
 * by the kernel; a peer without a key asks for it over ZeroMQ ("Lane"), connects, and
 * from then on sends its requests on the lane; the ZeroMQ socket stays for the asking,
 * the heartbeats and the connection's health. With a cluster key there is no lane (CURVE
 * is ZeroMQ's), nor with TFSH_LANE=0. net/PROTOCOL.md, "The direct lane", is the wire
 * spec. */
#ifndef TFSH_NET_LANE_H
#define TFSH_NET_LANE_H

#include "net/wire.h"

#define NET_LANE_MAGIC "tfshlane"   /* the hello's and the ack's first 8 bytes */
#define NET_LANE_TOKEN 16           /* bytes of a server's token and of a peer's nonce */
#define NET_LANE_HELLO (8 + 2 * NET_LANE_TOKEN)
#define NET_LANE_STAGE 65536        /* bytes a connection reads at a time */

/* Are lanes on in this process ($TFSH_LANE is not "0")? */
bool net_lane_enabled(void);

/* What a connection has read of the message in progress. */
typedef struct net_lane_rx {
  uint8_t *stage;            /* bytes read and not yet taken: [pos, end) */
  size_t pos, end;
  int part;                  /* which part of the message is being read */
  uint8_t pre[16];           /* the message's preamble */
  uint32_t nframes;
  uint64_t hlen, got;        /* the header's length; bytes of the current part so far */
  uint64_t *lens;            /* the payload frames' lengths */
  uint8_t *head, *data;      /* the header; the current payload frame */
  net_in *in;                /* the message being built */
  size_t frame;              /* index of the current payload frame */
  uint64_t id, skip;         /* a refused message: its id, the bytes left to discard */
  rt_status err;             /* why it is refused */
} net_lane_rx;

void net_lane_rx_init(net_lane_rx *rx);
void net_lane_rx_free(net_lane_rx *rx);

/* A whole message read (in, the callee's), or one refused whole (in NULL, st says why:
 * over a limit, a malformed header, no memory for a payload; id its request's id when
 * the header could be read, else 0). */
typedef void (*net_lane_got)(void *arg, net_in *in, uint64_t id, const rt_status *st);

/* Read what fd has, without blocking, calling got for each message completed, at most
 * max of them (0: no limit). 0: all read; 1: stopped at max with more to take (call
 * again, do not wait for fd); < 0: the connection is over (-errno; -EPIPE: closed). */
int net_lane_read(int fd, net_lane_rx *rx, const net_limits *lim, int max, net_lane_got got,
                  void *arg);

/* Send m (consumed, also on error) with request id, whole, before returning. While fd
 * is full, wait for room at most timeout_ms without progress (then ETIMEDOUT), calling
 * drain(arg) whenever fd is readable meanwhile (the far end may be writing to us before it
 * reads) and every 50 ms (to judge the connection by other signs: a peer cut off by the
 * network sends no end); drain returns false when the connection is over: EPIPE. 0 or an
 * errno. */
int net_lane_send(int fd, net_msg *m, uint64_t id, bool (*drain)(void *), void *arg,
                  int timeout_ms);
/* The same for ms[0, n), with ids[0, n), in one write: back to back on the wire. */
int net_lane_sendv(int fd, net_msg **ms, const uint64_t *ids, size_t n, bool (*drain)(void *),
                   void *arg, int timeout_ms);

/* A non-blocking listening socket on the host of the bound endpoint tcp://HOST:PORT, on a
 * port the kernel chooses (*port). -1 (errno set) when it cannot be made. */
int net_lane_listen(const char *endpoint, int *port);

/* Connect to port on the host of endpoint tcp://HOST:PORT, say hello with token and nonce,
 * and wait for the ack, all within timeout_ms. The non-blocking socket, or -1. */
int net_lane_connect(const char *endpoint, int port, const uint8_t *token, const uint8_t *nonce,
                     int timeout_ms);

/* Random bytes for tokens and nonces. */
void net_lane_random(uint8_t *p, size_t n);

#endif
