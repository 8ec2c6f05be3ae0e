/* Subcommands of the tfsh binary (dispatched from main before the interpreter starts). */
#ifndef TFSH_SHELL_CMD_H
#define TFSH_SHELL_CMD_H

/* tfsh server ...: one task of a cluster, until SIGTERM/SIGINT. argv[0] is "server". */
int sh_server_main(int argc, char **argv);

#endif
