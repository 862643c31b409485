/*
 * cli_sweep.c - the options of `piper sweep`: one table (pp_cli_option)
 * drives pp_cli_getopt and --help, as for the other commands in cli.c.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "piper/units.h"

enum { S_OUTDIR = 2000, S_PART, S_MAXDS, S_MAXMEM, S_CKPT, S_PLANNER, S_QUIET, S_HELP };

static const pp_cli_option sweep_opts[] = {
    {"out-dir", 1, S_OUTDIR, "DIR", "where every row's NAME.h5 (archive) and NAME.txt (plan) go (required)"},
    {"part", 1, S_PART, "I/N",
     "run only the groups of rows numbered I, I+N, I+2N, ... (0 <= I < N; for job arrays)"},
    {"max-downsets", 1, S_MAXDS, "N", "give up on a graph with more than N downsets (default 200000)"},
    {"max-memory-use", 1, S_MAXMEM, "BYTES",
     "refuse a group whose tables would need more, stop one whose tables grow past it (default: 80% of "
     "RAM; the downsets' bitsets alone 1 GiB)"},
    {"checkpoint-every", 1, S_CKPT, "SECONDS",
     "checkpoint a group's DP after a layer when SECONDS have passed (default 60; 0 = every layer)"},
    {"planner", 1, S_PLANNER, "NAME",
     "piper (default: the DP) or equi (the paper's PipeDream-2BW-like baseline), as for plan"},
    {"quiet", 0, S_QUIET, NULL, "no progress or per-row lines on standard error"},
    {"help", 0, S_HELP, NULL, "show this help"},
};
#define N_SWEEP ((int)(sizeof sweep_opts / sizeof sweep_opts[0]))

void pp_cli_help_sweep(FILE *out) {
  fprintf(out,
          "usage: piper sweep GRID.tsv --out-dir DIR [options]\n"
          "       mpirun -np P piper sweep GRID.tsv --out-dir DIR [options]\n\n"
          "Plans every row of a grid (the tab-separated format of jobs/sweep.sbatch: a header naming\n"
          "input devices memory bandwidth microbatches flags [name], then one row per plan) in one run.\n"
          "Rows that differ only in devices form a group answered by one DP at the group's largest\n"
          "budget (as `piper show --devices` does); each row still gets DIR/NAME.h5 and DIR/NAME.txt.\n"
          "Under MPI the groups are spread over teams of ranks (one rank per team when there are\n"
          "enough groups). A row whose NAME.txt exists is skipped, and an interrupted group resumes\n"
          "from its checkpoint, so rerunning the same command finishes what is missing. A bad row is\n"
          "reported as GRID:LINE: ... and the others still run. Afterwards:\n"
          "  piper collect DIR/*.h5 --format csv\n\n"
          "Options:\n");
  pp_cli_print_options(out, sweep_opts, N_SWEEP);
  fprintf(out, "\nExit codes:\n"
               "  0   every row produced a plan or proved none feasible\n"
               "  1   a row failed for another reason (I/O, internal error); the others ran\n"
               "  2   usage, an invalid grid header, or a bad row (its value or input); the others ran\n"
               "  75  stopped by SIGTERM/SIGUSR1 after checkpointing; rerun the same command\n");
}

static pp_status parse_part(const char *v, pp_sweep_args *a, pp_error *err) {
  int i, n, used = 0;
  if (sscanf(v, "%d/%d%n", &i, &n, &used) != 2 || v[used] != '\0' || n < 1 || i < 0 || i >= n)
    return pp_error_set(err, PP_ERR_USAGE, "--part: expected I/N with 0 <= I < N, got '%s'", v);
  a->part = i;
  a->parts = n;
  return PP_OK;
}

static pp_status handle(void *ap, int id, const char *v, pp_error *err) {
  pp_sweep_args *a = ap;
  switch (id) {
  case S_OUTDIR:
    a->out_dir = v;
    return PP_OK;
  case S_PART:
    return parse_part(v, a, err);
  case S_MAXDS:
    return pp_parse_int(v, 1, 100000000, "--max-downsets", &a->max_downsets, err);
  case S_MAXMEM:
    return pp_parse_size(v, 0, "--max-memory-use", &a->max_memory_use, err);
  case S_CKPT:
    return pp_cli_parse_checkpoint_every(v, &a->checkpoint_every, err);
  case S_PLANNER:
    return pp_cli_parse_planner(v, &a->planner, err);
  case S_QUIET:
    a->quiet = 1;
    return PP_OK;
  }
  return pp_cli_help_or_unknown(id, S_HELP, &a->help, err);
}

pp_status pp_cli_parse_sweep(int argc, char **argv, pp_sweep_args *a, pp_error *err) {
  memset(a, 0, sizeof *a);
  a->parts = 1;
  a->max_downsets = 200000;
  a->checkpoint_every = 60;
  const char *pos[1];
  int n_pos;
  pp_status st = pp_cli_getopt(argc, argv, sweep_opts, N_SWEEP, "h", handle, a, pos, 1, &n_pos, err);
  if (st) return st;
  if (n_pos == 1) a->grid = pos[0];
  if (a->help) return PP_OK;
  if (!a->grid) return pp_error_set(err, PP_ERR_USAGE, "missing the grid file (try 'piper sweep --help')");
  if (!a->out_dir)
    return pp_error_set(err, PP_ERR_USAGE, "--out-dir DIR is required (try 'piper sweep --help')");
  return PP_OK;
}
