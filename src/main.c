/*
 * main.c - the piper program: dispatches to the subcommands of libpiper.
 */
#include <stdio.h>
#include <string.h>

#include "piper/cli.h"
#include "piper/commands.h"
#include "piper/error.h"
#include "piper/gen.h"

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    pp_cli_help_main(argc < 2 ? stderr : stdout);
    return argc < 2 ? PP_EXIT_INVALID : PP_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("piper %s\n", PIPER_VERSION);
    return PP_EXIT_OK;
  }
  int rc;
  if (strcmp(argv[1], "plan") == 0) {
    rc = pp_cmd_plan(argc - 1, argv + 1, stdout, stderr);
  } else if (strcmp(argv[1], "gen") == 0) {
    rc = pp_gen_main(argc - 1, argv + 1, stdout, stderr);
  } else {
    fprintf(stderr, "piper: unknown command '%s' (try 'piper help')\n", argv[1]);
    return PP_EXIT_INVALID;
  }
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "piper: error writing standard output\n");
    if (rc == PP_EXIT_OK) rc = PP_EXIT_FAILURE;
  }
  return rc;
}
