/* The interactive shell: line editing (libedit), history, completion, `name?` help and
 * IPython-style magics. */
#ifndef TFSH_SHELL_REPL_H
#define TFSH_SHELL_REPL_H

#include <stdbool.h>
#include <stddef.h>

#include "shell/py/value.h"

/* A magic is a line starting with %NAME; fn gets the rest of the line (trimmed) and returns
 * 0, or -1 with an exception pending (the shell prints it). Other layers register theirs
 * (%cluster, %placement, ...) from their init function; help is one line for %help. */
typedef int (*sh_magic_fn)(const char *args);
void sh_magic_register(const char *name, sh_magic_fn fn, const char *help);

/* A context completer for Tab (e.g. device strings inside tf.device("...")): given the
 * line up to the cursor, return a new list of str candidates for the text between
 * *word_start and the cursor, or NULL (no exception) to let the shell complete names and
 * attributes. Completers are asked in registration order. */
typedef sh_obj *(*sh_completer_fn)(const char *line, size_t cursor, size_t *word_start);
void sh_completer_register(sh_completer_fn fn);

/* While the prompt waits for a key, call fn every interval_ms, and call on_ready(fd)
 * whenever fd is readable (e.g. a ZeroMQ socket's ZMQ_FD), so cluster state can be
 * followed live; such callbacks print with sh_print_async. */
void sh_repl_add_idle_hook(void (*fn)(void), int interval_ms);
void sh_repl_watch_fd(int fd, void (*on_ready)(int fd));

/* Run the interactive loop on the terminal until Ctrl-D or exit(); returns the exit status. */
int sh_repl_run(void);

/* Ctrl-C sets sh_interrupted (the evaluator raises KeyboardInterrupt) instead of killing
 * the process. Installed for scripts too, so `except KeyboardInterrupt:` works. */
void sh_install_sigint(void);

/* True while the shell is waiting for input at the prompt (async output must redraw). */
int sh_repl_idle(void);
/* True once the interactive loop runs (not for a script). */
bool sh_repl_running(void);

#endif
