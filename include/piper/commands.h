/*
 * commands.h - the subcommands of the piper program, as library entry points.
 *
 * Each takes its arguments (argv[0] is the subcommand name), the standard
 * output and log streams, and returns the process exit code.  main.c only
 * sets up the process (MPI) and dispatches.
 */
#ifndef PIPER_COMMANDS_H
#define PIPER_COMMANDS_H

#include <stdio.h>

/* `piper plan`: plan one input.  Collective over all ranks of the run. */
int pp_cmd_plan(int argc, char **argv, FILE *out, FILE *log);

#endif /* PIPER_COMMANDS_H */
