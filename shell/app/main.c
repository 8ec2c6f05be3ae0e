/* The program entry: argument parsing and dispatch, nothing else. */
#define _GNU_SOURCE
#include <malloc.h>
#ifdef TFSH_MIMALLOC
#include <mimalloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/alloc.h"
#include "ops/ops.h"          /* BLIS set up before numpy can start it */
#include "shell/app/cmd.h"
#include "shell/py/lang.h"
#include "shell/app/repl.h"

int main(int argc, char **argv) {
  /* Tensor buffers of many MiB come and go every step, and fresh pages cost ~14 us per
   * 4 KiB to touch on these machines: what is freed stays mapped for reuse. */
#ifdef TFSH_MIMALLOC
  /* mimalloc maps and unmaps each block beyond its segments (a 64 MiB tensor: 2x the
   * step's time) unless it comes from a committed arena, which it never gives back: one
   * as large as the machine's memory (address space; pages cost only once touched), at
   * most half of an address-space limit (ulimit -v), or a quarter of that where strict
   * overcommit refuses it; failing both, mimalloc's own mapping. */
  mi_option_disable(mi_option_allow_decommit);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  size_t arena = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
  struct rlimit as;
  if (!getrlimit(RLIMIT_AS, &as) && as.rlim_cur != RLIM_INFINITY && arena > as.rlim_cur / 2)
    arena = as.rlim_cur / 2;
  if (arena && mi_reserve_os_memory(arena, true, true)) mi_reserve_os_memory(arena / 4, true, true);
#else
  /* glibc would mmap and unmap each big buffer; one arena, since a thread's own holds at
   * most 64 MiB (big tensors received on ZeroMQ's I/O thread would be fresh mmaps). */
  mallopt(M_MMAP_THRESHOLD, 512 << 20);
  mallopt(M_ARENA_MAX, 1);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  /* -u (python's unbuffered flag, before the rest): nothing to do, stdio is unbuffered
   * already (shell/py/interp.c); dropped so that the rest reads as without it. */
  while (argc > 1 && !strcmp(argv[1], "-u")) {
    argv[1] = argv[0];
    argv++;
    argc--;
  }
  if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) { sh_cmd_help(); return 0; }
  if (argc > 1 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
    printf("tfsh %s\n", TFSH_VERSION);
    return 0;
  }
  /* ---- subcommands (commands.c) dispatch here, before the interpreter starts ---- */
  const sh_subcommand *cmd = argc > 1 ? sh_cmd_find(argv[1]) : NULL;
  if (cmd) return cmd->main(argc - 1, argv + 1);

  op_cpu_blas_init();
  if (argc > 1 && argv[1][0] == '-' && argv[1][1]) return sh_cmd_usage_error("unknown option %s", argv[1]);

  if (argc > 1 && strcmp(argv[1], "-")) {   /* a script file */
    if (access(argv[1], R_OK) != 0) {
      fprintf(stderr, "tfsh: can't open file '%s': [Errno 2] No such file or directory\n", argv[1]);
      return 2;
    }
    sh_init(argc - 1, argv + 1);
    sh_install_sigint();
    int rc = sh_exec_file(argv[1], NULL);
    return sh_cmd_finish(rc < 0 ? sh_report_error() : 0);
  }

  if (argc == 1 && isatty(STDIN_FILENO)) {   /* the interactive shell */
    char *sargv[] = {""};
    sh_init(1, sargv);
    return sh_cmd_finish(sh_repl_run());
  }

  /* a script on stdin, like `python3 < script.py` */
  char *sargv_stdin[] = {argc > 1 ? "-" : ""};
  sh_init(argc > 1 ? argc - 1 : 1, argc > 1 ? argv + 1 : sargv_stdin);
  sh_install_sigint();
  char *src = sh_cmd_read_all(stdin);
  int rc = sh_exec_string(src, "<stdin>", NULL);
  free(src);
  return sh_cmd_finish(rc < 0 ? sh_report_error() : 0);
}
