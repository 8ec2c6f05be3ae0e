/* A small socket module: the host names launch code asks for (gethostname, getfqdn,
 * gethostbyname). Scripts build clusters from them; tfsh's own wire needs no sockets here. */
#define _GNU_SOURCE
#include <netdb.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "shell/lang/interp.h"

static sh_obj *s_gethostname(ARGS) {
  if (argc) return sh_raise(sh_TypeError, "gethostname() takes no arguments (%d given)", argc);
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) < 0) return sh_raise(sh_OSError, "gethostname failed");
  return sh_str(buf);
}

/* The canonical name of name (default: this host), as Python's getfqdn: the resolver's
 * canonical name, or name itself when it cannot be resolved. */
static sh_obj *s_getfqdn(ARGS) {
  if (argc > 1) return sh_raise(sh_TypeError, "getfqdn() takes at most 1 argument (%d given)", argc);
  char host[256] = {0};
  const char *name = argc && argv[0] != SH_NONE ? sh_as_cstr(argv[0]) : "";
  if (!name) return NULL;
  if (!name[0] || !strcmp(name, "0.0.0.0")) {
    if (gethostname(host, sizeof host - 1) < 0) return sh_raise(sh_OSError, "gethostname failed");
    name = host;
  }
  /* Python: the host name of the address's reverse lookup, or its first alias with a dot */
  struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;
  if (getaddrinfo(name, NULL, &hints, &res) != 0 || !res) return sh_str(name);
  struct in_addr a = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
  freeaddrinfo(res);
  struct hostent *h = gethostbyaddr(&a, sizeof a, AF_INET);
  if (!h || !h->h_name) return sh_str(name);
  if (!strchr(h->h_name, '.'))
    for (char **al = h->h_aliases; al && *al; al++)
      if (strchr(*al, '.')) return sh_str(*al);
  return sh_str(h->h_name);
}

static sh_obj *s_gethostbyname(ARGS) {
  if (argc != 1) return sh_raise(sh_TypeError, "gethostbyname() takes exactly one argument (%d given)", argc);
  const char *name = sh_as_cstr(argv[0]);
  if (!name) return NULL;
  struct addrinfo hints = {.ai_family = AF_INET}, *res = NULL;
  if (getaddrinfo(name, NULL, &hints, &res) != 0 || !res)
    return sh_raise(sh_OSError, "[Errno -2] Name or service not known: '%s'", name);
  char buf[INET_ADDRSTRLEN] = {0};
  inet_ntop(AF_INET, &((struct sockaddr_in *)res->ai_addr)->sin_addr, buf, sizeof buf);
  freeaddrinfo(res);
  return sh_str(buf);
}

static const sh_method socket_funcs[] = {
  {"gethostname", s_gethostname, "gethostname()", "This host's name."},
  {"getfqdn", s_getfqdn, "getfqdn(name='')", "The fully qualified name of name (default: this host)."},
  {"gethostbyname", s_gethostbyname, "gethostbyname(hostname)", "The IPv4 address of hostname, as a string."},
  {NULL},
};

sh_obj *sh_mod_socket_init(void) {
  sh_obj *m = sh_module_new("socket");
  sh_module_add_funcs(m, socket_funcs);
  return m;
}
