/* The direct lane's bytes: messages framed on a TCP stream, read by a small state machine
 * (a connection may deliver half a message now and the rest later), written whole with
 * sendmsg(2) and the payloads by reference. */
#include "net/lane.h"
#include "base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PRE_MAGIC "TFL1"       /* a message's first 4 bytes */
#define FRAMES_HARD_MAX 65536  /* more payload frames than this: not a tfsh peer */
#define IOV_AT_ONCE 1024       /* iovecs one sendmsg takes (Linux's UIO_MAXIOV) */

enum { PART_PRE, PART_LENS, PART_HEAD, PART_FRAME, PART_SKIP };

bool net_lane_enabled(void) {
  const char *e = getenv("TFSH_LANE");
  return !e || strcmp(e, "0") != 0;
}

void net_lane_random(uint8_t *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = getrandom(p + got, n - got, 0);
    if (r > 0) got += (size_t)r;
    else if (errno != EINTR) break;
  }
  if (got < n) {   /* no entropy source: a nonce need only differ between connections */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() << 40;
    for (size_t i = got; i < n; i++, x = x * 6364136223846793005ull + 1442695040888963407ull)
      p[i] = (uint8_t)(x >> 56);
  }
}

/* ---- receiving ----------------------------------------------------------------------- */

static void put_le(uint8_t *p, uint64_t v, int n) {
  for (int i = 0; i < n; i++, v >>= 8) p[i] = (uint8_t)v;
}

static uint64_t get_le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

void net_lane_rx_init(net_lane_rx *rx) {
  memset(rx, 0, sizeof *rx);
  rx->stage = xmalloc(NET_LANE_STAGE);
}

/* Back to waiting for a preamble, dropping what a message in progress holds. */
static void rx_reset(net_lane_rx *rx) {
  free(rx->lens);
  free(rx->data);
  if (rx->in) {
    if (rx->in->copy == rx->head) rx->in->copy = NULL;   /* still rx's: freed below */
    net_in_free(rx->in);
  }
  free(rx->head);
  rx->lens = NULL;
  rx->head = rx->data = NULL;
  rx->in = NULL;
  rx->part = PART_PRE;
  rx->got = rx->frame = 0;
  rx->id = rx->skip = 0;
  rx->err = (rt_status){0};
}

void net_lane_rx_free(net_lane_rx *rx) {
  rx_reset(rx);
  free(rx->stage);
  rx->stage = NULL;
}

/* Bring the current part to want bytes (dst NULL: discard them): from the staging buffer
 * first, then from fd (straight into dst when what is left is large). 1: complete; 0: fd
 * has nothing more now; < 0: -errno, the connection is over. */
static int fill(int fd, net_lane_rx *rx, uint8_t *dst, uint64_t want) {
  while (rx->got < want) {
    uint64_t left = want - rx->got;
    if (rx->pos < rx->end) {
      size_t n = rx->end - rx->pos < left ? rx->end - rx->pos : (size_t)left;
      if (dst) memcpy(dst + rx->got, rx->stage + rx->pos, n);
      rx->pos += n;
      rx->got += n;
      continue;
    }
    bool direct = dst && left >= NET_LANE_STAGE;
    size_t ask = direct ? (left > (uint64_t)SSIZE_MAX ? (size_t)SSIZE_MAX : (size_t)left)
                        : NET_LANE_STAGE;
    ssize_t r = read(fd, direct ? dst + rx->got : rx->stage, ask);
    if (r == 0) return -EPIPE;
    if (r < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      return -errno;
    }
    if (direct) {
      rx->got += (uint64_t)r;
    } else {
      rx->pos = 0;
      rx->end = (size_t)r;
    }
  }
  return 1;
}

/* Refuse the message in progress: discard its remaining bytes, then report st. */
static void refuse(net_lane_rx *rx, uint64_t left, const rt_status *st) {
  rx->err = *st;
  rx->skip = left;
  rx->got = 0;
  rx->part = PART_SKIP;
}

static uint64_t frames_bytes(const net_lane_rx *rx, size_t from) {
  uint64_t n = 0;
  for (size_t i = from; i < rx->nframes; i++) n += rx->lens[i];
  return n;
}

/* A payload frame's buffer (64-byte aligned, as tensors are; NULL when out of memory). */
static uint8_t *frame_alloc(uint64_t n) {
  if (n > SIZE_MAX - 64) return NULL;
  return aligned_alloc(64, ((size_t)n + 63) & ~(size_t)63);
}

static void frame_free(void *data, void *hint) {
  (void)hint;
  free(data);
}

/* The preamble has been read: check its magic and frame count, then read the lengths. */
static int take_pre(net_lane_rx *rx) {
  if (memcmp(rx->pre, PRE_MAGIC, 4)) return -EPROTO;
  rx->nframes = (uint32_t)get_le(rx->pre + 4, 4);
  rx->hlen = get_le(rx->pre + 8, 8);
  if (rx->nframes > FRAMES_HARD_MAX) return -EPROTO;
  rx->lens = rx->nframes ? xcalloc(rx->nframes, sizeof *rx->lens) : NULL;
  rx->part = PART_LENS;
  rx->got = 0;
  return 0;
}

static void take_lens(net_lane_rx *rx, const net_limits *lim) {
  uint8_t *raw = (uint8_t *)rx->lens;   /* read as bytes, little-endian on the wire */
  for (size_t i = rx->nframes; i-- > 0;) rx->lens[i] = get_le(raw + 8 * i, 8);
  rt_status st = {0};
  uint64_t total = rx->hlen;
  for (size_t i = 0; i < rx->nframes; i++)
    total = total + rx->lens[i] < total ? UINT64_MAX : total + rx->lens[i];
  rx->got = 0;
  if (rx->hlen > lim->max_header) {
    rt_error(&st, RT_RESOURCE_EXHAUSTED,
             "message over limits: header of %llu bytes exceeds max_header %zu",
             (unsigned long long)rx->hlen, lim->max_header);
    refuse(rx, total, &st);
  } else if (rx->nframes > lim->max_frames) {
    rt_error(&st, RT_RESOURCE_EXHAUSTED,
             "message over limits: more than %zu payload frames (max_frames)", lim->max_frames);
    refuse(rx, total, &st);
  } else if (!(rx->head = malloc(rx->hlen ? rx->hlen : 1))) {
    rt_error(&st, RT_RESOURCE_EXHAUSTED, "cannot allocate %llu bytes for a header",
             (unsigned long long)rx->hlen);
    refuse(rx, total, &st);
  } else {
    rx->part = PART_HEAD;
  }
}

/* The header has been read: parse it; 0 to go on with the frames, else refused. */
static void take_head(net_lane_rx *rx, const net_limits *lim) {
  rt_status st = {0};
  rx->in = net_in_alloc();
  rx->in->copy = rx->head;   /* the header's bytes live as long as the message */
  rx->got = 0;
  if (net_in_parse_at(rx->in, rx->head, rx->hlen, lim, &rx->id, &st)) {
    refuse(rx, frames_bytes(rx, 0), &st);
    return;
  }
  rx->head = NULL;   /* the message's now */
  for (size_t i = 0; i < rx->nframes; i++)
    if (rx->lens[i] > lim->max_frame) {
      rt_error(&st, RT_RESOURCE_EXHAUSTED,
               "message over limits: payload frame %zu of %llu bytes exceeds max_frame %zu", i,
               (unsigned long long)rx->lens[i], lim->max_frame);
      refuse(rx, frames_bytes(rx, 0), &st);
      return;
    }
  if (rx->nframes) rx->in->frames = xcalloc(rx->nframes, sizeof *rx->in->frames);
  rx->frame = 0;
  rx->part = PART_FRAME;
}

/* A payload frame has been read (or has no bytes): attach it. */
static void take_frame(net_lane_rx *rx) {
  net_frame *f = net_frame_new();
  if (rx->data) zmq_msg_init_data(&f->zm, rx->data, rx->lens[rx->frame], frame_free, NULL);
  rx->data = NULL;
  rx->in->frames[rx->in->nframes++] = f;
  rx->frame++;
  rx->got = 0;
}

int net_lane_read(int fd, net_lane_rx *rx, const net_limits *lim, int max, net_lane_got got,
                  void *arg) {
  int done = 0, r;
  for (;;) {
    switch (rx->part) {
    case PART_PRE:
      if (max && done == max) return rx->pos < rx->end ? 1 : 0;
      if ((r = fill(fd, rx, rx->pre, sizeof rx->pre)) <= 0) return r;
      if ((r = take_pre(rx))) return r;
      break;
    case PART_LENS:
      if ((r = fill(fd, rx, (uint8_t *)rx->lens, 8 * (uint64_t)rx->nframes)) <= 0) return r;
      take_lens(rx, lim);
      break;
    case PART_HEAD:
      if ((r = fill(fd, rx, rx->head, rx->hlen)) <= 0) return r;
      take_head(rx, lim);
      break;
    case PART_FRAME:
      if (rx->frame == rx->nframes) {
        net_in *in = rx->in;
        uint64_t id = rx->id;
        rx->in = NULL;
        rx_reset(rx);
        got(arg, in, id, NULL);
        done++;
        break;
      }
      if (rx->lens[rx->frame] && !rx->data && rx->got == 0 &&
          !(rx->data = frame_alloc(rx->lens[rx->frame]))) {
        rt_status st = {0};
        rt_error(&st, RT_RESOURCE_EXHAUSTED, "cannot allocate %llu bytes for a payload frame",
                 (unsigned long long)rx->lens[rx->frame]);
        refuse(rx, frames_bytes(rx, rx->frame), &st);
        break;
      }
      if ((r = fill(fd, rx, rx->data, rx->lens[rx->frame])) <= 0) return r;
      take_frame(rx);
      break;
    case PART_SKIP:
      if ((r = fill(fd, rx, NULL, rx->skip)) <= 0) return r;
      {
        rt_status st = rx->err;
        uint64_t id = rx->id;
        rx_reset(rx);
        got(arg, NULL, id, &st);
        done++;
      }
      break;
    }
  }
}

/* ---- sending ------------------------------------------------------------------------- */

#define SEND_TICK_MS 50   /* a send waiting for room calls drain at least this often */

/* Write iov[0, n) whole. */
static int write_all(int fd, struct iovec *iov, size_t n, bool (*drain)(void *), void *arg,
                     int timeout_ms) {
  int64_t since = net_now_ms();   /* the last progress */
  while (n) {
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = n < IOV_AT_ONCE ? n : IOV_AT_ONCE};
    ssize_t w = sendmsg(fd, &mh, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return errno;
      int64_t left = since + timeout_ms - net_now_ms();
      if (left <= 0) return ETIMEDOUT;
      struct pollfd pf = {.fd = fd, .events = POLLOUT | (drain ? POLLIN : 0)};
      int pr = poll(&pf, 1, drain && left > SEND_TICK_MS ? SEND_TICK_MS : (int)left);
      if (pr < 0 && errno != EINTR) return errno;
      if (drain && (pr == 0 || (pf.revents & POLLIN)) && !drain(arg)) return EPIPE;
      continue;
    }
    since = net_now_ms();
    size_t left = (size_t)w;
    while (n && left >= iov->iov_len) left -= iov->iov_len, iov++, n--;
    if (n) {
      iov->iov_base = (uint8_t *)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
  return 0;
}

int net_lane_sendv(int fd, net_msg **ms, const uint64_t *ids, size_t n, bool (*drain)(void *),
                   void *arg, int timeout_ms) {
  size_t nio = 0, nlen = 0;
  for (size_t j = 0; j < n; j++) nio += 3 + ms[j]->nframes, nlen += 2 + ms[j]->nframes;
  /* per message: the preamble (2 words) and the frames' lengths, then the iovecs */
  uint64_t words_here[64], *words = nlen <= 64 ? words_here : xmalloc(nlen * 8);
  struct iovec iov_here[64], *iov = nio <= 64 ? iov_here : xmalloc(nio * sizeof *iov);
  size_t k = 0, w = 0;
  for (size_t j = 0; j < n; j++) {
    net_msg *m = ms[j];
    const void *head;
    size_t hlen, nf = m->nframes;
    net_msg_seal(m, ids[j], &head, &hlen);
    uint8_t *pre = (uint8_t *)&words[w];
    memcpy(pre, PRE_MAGIC, 4);
    put_le(pre + 4, nf, 4);
    put_le(pre + 8, hlen, 8);
    uint8_t *lens = (uint8_t *)&words[w + 2];
    for (size_t i = 0; i < nf; i++) put_le(lens + 8 * i, m->frames[i].len, 8);
    iov[k++] = (struct iovec){pre, 16 + 8 * nf};
    iov[k++] = (struct iovec){(void *)head, hlen};
    for (size_t i = 0; i < nf; i++)
      if (m->frames[i].len) iov[k++] = (struct iovec){m->frames[i].data, m->frames[i].len};
    w += 2 + nf;
  }
  int e = write_all(fd, iov, k, drain, arg, timeout_ms);
  if (words != words_here) free(words);
  if (iov != iov_here) free(iov);
  for (size_t j = 0; j < n; j++) net_msg_free(ms[j]);   /* sent or not, done with */
  return e;
}

int net_lane_send(int fd, net_msg *m, uint64_t id, bool (*drain)(void *), void *arg,
                  int timeout_ms) {
  return net_lane_sendv(fd, &m, &id, 1, drain, arg, timeout_ms);
}

/* ---- connections --------------------------------------------------------------------- */

/* HOST of tcp://HOST:PORT into host (brackets of [v6] dropped); false if not tcp. */
static bool endpoint_host(const char *ep, char *host, size_t n) {
  if (strncmp(ep, "tcp://", 6)) return false;
  const char *h = ep + 6, *colon = strrchr(h, ':');
  if (!colon || colon == h) return false;
  size_t len = (size_t)(colon - h);
  if (h[0] == '[' && colon[-1] == ']') h++, len -= 2;
  if (len >= n) return false;
  memcpy(host, h, len);
  host[len] = 0;
  if (!strcmp(host, "*")) snprintf(host, n, "0.0.0.0");
  return true;
}

static struct addrinfo *resolve(const char *ep, int port, bool passive) {
  char host[256], serv[16];
  if (!endpoint_host(ep, host, sizeof host)) return NULL;
  snprintf(serv, sizeof serv, "%d", port);
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                           .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0)};
  struct addrinfo *ai = NULL;
  if (getaddrinfo(host, serv, &hints, &ai)) return NULL;
  return ai;
}

int net_lane_listen(const char *endpoint, int *port) {
  struct addrinfo *ai = resolve(endpoint, 0, true);
  if (!ai) {
    errno = EINVAL;
    return -1;
  }
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_storage sa;
  socklen_t len = sizeof sa;
  if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64) ||
      getsockname(fd, (struct sockaddr *)&sa, &len)) {
    int e = errno;
    if (fd >= 0) close(fd);
    freeaddrinfo(ai);
    errno = e;
    return -1;
  }
  freeaddrinfo(ai);
  *port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
                                         : ((struct sockaddr_in *)&sa)->sin_port);
  return fd;
}

/* Wait for fd to be ready for events until deadline (net_now_ms); false on timeout. */
static bool wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - net_now_ms();
    if (left <= 0) return false;
    struct pollfd pf = {.fd = fd, .events = events};
    int r = poll(&pf, 1, (int)left);
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

/* Connect fd to a and say hello; true when the ack came before deadline. */
static bool hello_at(int fd, const struct addrinfo *a, const uint8_t *hello, int64_t deadline) {
  int one = 1, err = 0;
  socklen_t elen = sizeof err;
  if (connect(fd, a->ai_addr, a->ai_addrlen) && errno != EINPROGRESS) return false;
  if (!wait_fd(fd, POLLOUT, deadline) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err)
    return false;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (send(fd, hello, NET_LANE_HELLO, MSG_NOSIGNAL) != NET_LANE_HELLO) return false;
  uint8_t ack[8];
  size_t have = 0;
  while (have < sizeof ack) {
    if (!wait_fd(fd, POLLIN, deadline)) return false;
    ssize_t r = read(fd, ack + have, sizeof ack - have);
    if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) return false;
    if (r > 0) have += (size_t)r;
  }
  return !memcmp(ack, NET_LANE_MAGIC, 8);
}

int net_lane_connect(const char *endpoint, int port, const uint8_t *token, const uint8_t *nonce,
                     int timeout_ms) {
  int64_t deadline = net_now_ms() + timeout_ms;
  struct addrinfo *ai = resolve(endpoint, port, false);
  uint8_t hello[NET_LANE_HELLO];
  memcpy(hello, NET_LANE_MAGIC, 8);
  memcpy(hello + 8, token, NET_LANE_TOKEN);
  memcpy(hello + 8 + NET_LANE_TOKEN, nonce, NET_LANE_TOKEN);
  int fd = -1;
  /* IPv4 first, as ZeroMQ resolves (localhost may name ::1 first, where nothing listens) */
  for (int v6 = 0; v6 < 2 && fd < 0; v6++)
    for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
      if ((a->ai_family == AF_INET6) != v6) continue;
      fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      if (fd >= 0 && !hello_at(fd, a, hello, deadline)) {
        close(fd);
        fd = -1;
      }
    }
  if (ai) freeaddrinfo(ai);
  return fd;
}
