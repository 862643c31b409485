/*
 * main.c - the piper program: sets up MPI, dispatches to the subcommands of
 * libpiper, and finalises.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "commands.h"
#include "piper/dist.h"
#include "piper/error.h"
#include "piper/gen.h"

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
      strcmp(argv[1], "-h") == 0) {
    pp_cli_help_main(argc < 2 ? stderr : stdout);
    return argc < 2 ? PP_EXIT_INVALID : PP_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("piper %s\n", PIPER_VERSION);
    return PP_EXIT_OK;
  }
  if (strcmp(argv[1], "gen") == 0) {
    int rc = pp_gen_main(argc - 1, argv + 1, stdout, stderr);
    if (fflush(stdout) != 0 && rc == PP_EXIT_OK) rc = PP_EXIT_FAILURE;
    return rc;
  }
  int (*cmd)(pp_dist *, int, char **, FILE *, FILE *) = NULL;
  if (strcmp(argv[1], "plan") == 0)
    cmd = pp_cmd_plan;
  else if (strcmp(argv[1], "show") == 0)
    cmd = pp_cmd_show;
  else if (strcmp(argv[1], "collect") == 0)
    cmd = pp_cmd_collect;
  if (!cmd) {
    fprintf(stderr, "piper: unknown command '%s' (try 'piper help')\n", argv[1]);
    return PP_EXIT_INVALID;
  }
  if (pp_dist_init_process(&argc, &argv) != 0) {
    fprintf(stderr, "piper: error: MPI could not be initialised\n");
    return PP_EXIT_FAILURE;
  }
  pp_dist *world = pp_dist_world();
  int rc = cmd(world, argc - 1, argv + 1, stdout, stderr);
  if ((fflush(stdout) != 0 || ferror(stdout)) && rc == PP_EXIT_OK) {
    fprintf(stderr, "piper: error writing standard output\n");
    rc = PP_EXIT_FAILURE;
  }
  pp_dist_free(world);
  pp_dist_finalize_process();
  return rc;
}
