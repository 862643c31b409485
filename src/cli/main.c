/*
 * main.c - the piper program: sets up MPI, dispatches to the subcommands of
 * libpiper, and finalises.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli.h"
#include "commands.h"
#include "piper/dist.h"
#include "piper/error.h"
#include "piper/gen.h"
#include "piper/signals.h"

/* The environment is read here only and passed down as parameters. */

/* 1 if the variable is set to "1". */
static int env_flag(const char *name) {
  const char *v = getenv(name);
  return v && strcmp(v, "1") == 0;
}

/* 1 if an MPI launcher started this process, from the variables launchers
 * set in the processes they start: Open MPI's mpirun (OMPI_COMM_WORLD_SIZE),
 * PMIx servers such as srun --mpi=pmix or prterun (PMIX_RANK), PMI-1/2 (srun
 * --mpi=pmi2, MPICH's hydra: PMI_RANK, PMI_SIZE, PMI_FD).  PIPER_MPI=1 or
 * PIPER_MPI=0 overrides the guess. */
static int launched_by_mpi(void) {
  static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "PMI_FD"};
  const char *force = getenv("PIPER_MPI");
  if (force && (strcmp(force, "0") == 0 || strcmp(force, "1") == 0)) return force[0] == '1';
  for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

/* The DP frees a layer's scratch tables and allocates the next layer's of
 * about the same size, many MB each.  glibc's malloc maps such blocks
 * afresh from the system and gives freed memory back at once, so every
 * layer paid its page faults again (BERT-32 at K = 2048: 56 000 faults,
 * 0.14 s of system time); with blocks up to 32 MB taken from the heap and
 * the heap not trimmed, 36 000 and 0.08 s, for 8% more peak memory.
 * Only plan and sweep run the DP; the readers keep glibc's defaults (a
 * damaged archive that makes HDF5 read out of bounds is then likelier to
 * fault in the checking child than to read whatever a larger heap holds). */
static void tune_malloc(void) {
#ifdef __GLIBC__
  (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

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
  int (*cmd)(pp_dist *, const pp_cmd_env *, int, char **, FILE *, FILE *) = NULL;
  if (strcmp(argv[1], "plan") == 0)
    cmd = pp_cmd_plan;
  else if (strcmp(argv[1], "show") == 0)
    cmd = pp_cmd_show;
  else if (strcmp(argv[1], "eval") == 0)
    cmd = pp_cmd_eval;
  else if (strcmp(argv[1], "collect") == 0)
    cmd = pp_cmd_collect;
  else if (strcmp(argv[1], "sweep") == 0)
    cmd = pp_cmd_sweep;
  else if (strcmp(argv[1], "plot") == 0)
    cmd = pp_cmd_plot;
  if (!cmd) {
    fprintf(stderr, "piper: unknown command '%s' (try 'piper help')\n", argv[1]);
    return PP_EXIT_INVALID;
  }
  /* stop requests are recorded from here on, also while MPI starts */
  if (cmd == pp_cmd_plan || cmd == pp_cmd_sweep) {
    tune_malloc();
    pp_signals_install();
  }
  if (pp_dist_init_process(&argc, &argv, launched_by_mpi()) != 0) {
    fprintf(stderr, "piper: error: MPI could not be initialised\n");
    return PP_EXIT_FAILURE;
  }
  pp_set_fatal_hook(pp_dist_abort_all); /* out of memory: exit 1 on every rank */
  pp_dist *world = pp_dist_world(env_flag("PIPER_ALL_RANKS_WORK"));
  const char *node_size = getenv("PIPER_EMULATE_NODE_SIZE");
  pp_dist_emulate_node_size(world, node_size ? atoi(node_size) : 0);
  pp_dist_use_mpi_windows(world, env_flag("PIPER_MPI_WINDOWS"));
  pp_cmd_env env = {.debug_dist = getenv("PIPER_DEBUG_DIST") != NULL,
                    .path = getenv("PATH"),
                    .mpi_pml = getenv("OMPI_MCA_pml"),
                    .pmix_gds = getenv("PMIX_MCA_gds")};
  int rc = cmd(world, &env, argc - 1, argv + 1, stdout, stderr);
  if ((fflush(stdout) != 0 || ferror(stdout)) && rc == PP_EXIT_OK) {
    fprintf(stderr, "piper: error writing standard output\n");
    rc = PP_EXIT_FAILURE;
  }
  pp_dist_free(world);
  pp_dist_finalize_process();
  return rc;
}
