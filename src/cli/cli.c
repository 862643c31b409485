/*
 * cli.c - command-line parsing: the one option parser (option tables drive
 * getopt_long and --help), the main help, and the commands that describe a
 * problem: `plan` and `eval` (which shares plan's options and handler) and
 * the problem built from them.  The options of the commands that read
 * archives and tables are in cli_read.c, sweep's in cli_sweep.c.
 */
#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "piper/graph.h"
#include "piper/units.h"

typedef pp_cli_option opt_doc;

enum {
  O_DEVICES = 1000,
  O_MEMORY,
  O_MICRO,
  O_BANDWIDTH,
  O_NODP,
  O_NOTP,
  O_NOREC,
  O_KNAP,
  O_MAXDS,
  O_MAXMEM,
  O_FORMAT,
  O_QUIET,
  O_OUT,
  O_NOARCH,
  O_FORCE,
  O_RESUME,
  O_CKPT,
  O_HELP,
  O_VERSION,
  O_SCHEDULE,
  O_UNIFORM,
  O_VIRTUAL,
  O_PLANNER,
  O_PLANFILE,
  O_PP,
  O_TP,
  O_DP,
  O_RECOMP,
  O_ZERO,
  O_GPN,
  O_INTRA
};

static const opt_doc plan_opts[] = {
    {"devices", 1, O_DEVICES, "K", "at most K devices (default: the file's maxDevices)"},
    {"memory", 1, O_MEMORY, "BYTES",
     "memory per device, e.g. 8GiB, 80GB, 1288490188.8 (default: maxMemoryPerDevice)"},
    {"microbatches", 1, O_MICRO, "N", "microbatches per batch (default: the file's mbsInBatch)"},
    {"bandwidth", 1, O_BANDWIDTH, "BYTES/s",
     "bandwidth per device, e.g. 25GiB/s (default: the file's bandwidth)"},
    {"no-dp", 0, O_NODP, NULL, "no data parallelism (d = 1 everywhere)"},
    {"no-tp", 0, O_NOTP, NULL, "no tensor parallelism (t = 1 everywhere)"},
    {"no-recompute", 0, O_NOREC, NULL, "never use a TMPC whose id is \"activation recomp\""},
    {"knapsack", 1, O_KNAP, "MODE",
     "TMPC choice per stage: greedy (the reference's heuristic, default) or exact"},
    {"schedule", 1, O_SCHEDULE, "S",
     "pipeline schedule: 2bw (no flush, Piper's objective, default), 1f1b or gpipe (flush per batch)"},
    {"uniform", 0, O_UNIFORM, NULL, "every stage has the same (d, t), as Megatron-LM/DeepSpeed/NeMo run"},
    {"virtual-stages", 1, O_VIRTUAL, "V",
     "V model chunks per device (interleaved 1f1b or looped gpipe; needs --uniform)"},
    {"planner", 1, O_PLANNER, "NAME",
     "piper (the optimal DP, default) or equi (the paper's PipeDream-2BW-like baseline)"},
    {"zero", 1, O_ZERO, "LEVEL",
     "ZeRO stage 0-3: shard optimizer state (1), also gradients (2), also weights (3) over d (default 0)"},
    {"devices-per-node", 1, O_GPN, "G",
     "two-level network: G devices per node (default: the file's devicesPerNode, else one level)"},
    {"intra-node-bandwidth", 1, O_INTRA, "BYTES/s",
     "bandwidth per device inside a node (default: the file's intraNodeBandwidth)"},
    {"max-downsets", 1, O_MAXDS, "N", "give up if the graph has more than N downsets (default 200000)"},
    {"max-memory-use", 1, O_MAXMEM, "BYTES",
     "refuse to start if the tables would need more, stop if they grow past it (default: 80% of RAM; the "
     "downsets' bitsets alone 1 GiB)"},
    {"format", 1, O_FORMAT, "FMT", "output: text (default) or json"},
    {"quiet", 0, O_QUIET, NULL, "no progress on standard error"},
    {"out", 1, O_OUT, "FILE.h5", "archive path (default: outputs/<input>-k<K>-n<N>.h5)"},
    {"no-archive", 0, O_NOARCH, NULL, "do not write an HDF5 archive"},
    {"force", 0, O_FORCE, NULL, "overwrite an existing archive"},
    {"resume", 0, O_RESUME, NULL, "continue from the checkpoint next to the archive"},
    {"checkpoint-every", 1, O_CKPT, "SECONDS",
     "checkpoint after a layer when SECONDS have passed since the last (default 60; 0 = every layer)"},
    {"help", 0, O_HELP, NULL, "show this help"},
    {"version", 0, O_VERSION, NULL, "show the version"},
};

/* `eval` takes the budget and model options of `plan` (same ids, same
 * handler) and the plan to evaluate. */
static const opt_doc eval_opts[] = {
    {"plan", 1, O_PLANFILE, "FILE",
     "the plan to evaluate: the JSON of `plan --format json` (\"-\": stdin) or an archive .h5"},
    {"pp", 1, O_PP, "P", "framework shorthand: P pipeline stages, layers split as Megatron-LM does"},
    {"tp", 1, O_TP, "T", "framework shorthand: tensor-parallel degree T in every stage"},
    {"dp", 1, O_DP, "D", "framework shorthand: data-parallel degree D in every stage"},
    {"recompute", 1, O_RECOMP, "all|none",
     "framework shorthand: every layer recomputes its activations, or none does (default none)"},
    {"schedule", 1, O_SCHEDULE, "S", "pipeline schedule: 2bw (default), 1f1b or gpipe, as for plan"},
    {"virtual-stages", 1, O_VIRTUAL, "V",
     "V model chunks per device (interleaved 1f1b or looped gpipe; the shorthand splits into P*V chunks)"},
    {"uniform", 0, O_UNIFORM, NULL, "flag stages whose (d, t) differ from the first stage's"},
    {"devices", 1, O_DEVICES, "K", "at most K devices (default: the file's maxDevices)"},
    {"memory", 1, O_MEMORY, "BYTES", "memory per device (default: maxMemoryPerDevice)"},
    {"microbatches", 1, O_MICRO, "N", "microbatches per batch (default: the file's mbsInBatch)"},
    {"bandwidth", 1, O_BANDWIDTH, "BYTES/s", "bandwidth per device (default: the file's bandwidth)"},
    {"no-dp", 0, O_NODP, NULL, "flag any data-parallel degree other than 1"},
    {"no-tp", 0, O_NOTP, NULL, "flag any tensor-parallel degree other than 1"},
    {"no-recompute", 0, O_NOREC, NULL, "flag any TMPC whose id is \"activation recomp\""},
    {"zero", 1, O_ZERO, "LEVEL", "ZeRO stage 0-3 for memory and synchronisation, as for plan (default 0)"},
    {"devices-per-node", 1, O_GPN, "G", "two-level network: G devices per node, as for plan"},
    {"intra-node-bandwidth", 1, O_INTRA, "BYTES/s",
     "bandwidth per device inside a node (default: the file's intraNodeBandwidth)"},
    {"format", 1, O_FORMAT, "FMT", "output: text (default) or json"},
    {"help", 0, O_HELP, NULL, "show this help"},
};

#define N_OPTS(a) ((int)(sizeof a / sizeof a[0]))

void pp_cli_print_options(FILE *out, const opt_doc *o, int n) {
  for (int i = 0; i < n; i++) {
    char left[64];
    snprintf(left, sizeof left, "--%s%s%s", o[i].name, o[i].has_arg ? " " : "",
             o[i].has_arg ? o[i].metavar : "");
    fprintf(out, "  %-26s %s\n", left, o[i].help);
  }
}

void pp_cli_print_exit_codes(FILE *out) {
  fprintf(out, "\nExit codes:\n"
               "  0   a plan was found\n"
               "  1   any other failure (I/O, out of memory, internal error)\n"
               "  2   invalid input, archive or usage\n"
               "  3   no feasible plan\n"
               "  75  stopped by SIGTERM/SIGUSR1 after a checkpoint; rerun with --resume\n");
}

void pp_cli_help_main(FILE *out) {
  fprintf(out, "usage: piper COMMAND [ARGS]\n\n"
               "Commands:\n"
               "  plan INPUT.json [options]   find the fastest pipeline/data/tensor-parallel plan\n"
               "  show FILE.h5 [options]      print a plan or the device curve from an archive\n"
               "  eval INPUT.json [options]   evaluate a given plan or framework configuration\n"
               "  gen MODEL --gpu GPU [...]   write a model graph from a model and hardware preset\n"
               "  collect FILE.h5... [--out F] gather archives of a study into one table\n"
               "  plot FILE.h5|TABLE.csv...   draw curves, plans and study heatmaps (SVG, PNG)\n"
               "  sweep GRID.tsv --out-dir D  plan every row of a grid in one run (see its --help)\n"
               "  help                        this text; `piper COMMAND --help` for a command\n");
  pp_cli_print_exit_codes(out);
}

void pp_cli_help_plan(FILE *out) {
  fprintf(out,
          "usage: piper plan INPUT.json [options]\n\n"
          "Reads a model graph in Piper's JSON format (\"-\" for standard input) and prints the plan with\n"
          "the smallest time per sample: contiguous stages, each with a data-parallel degree d (dividing\n"
          "the number of microbatches), a tensor-parallel degree t and one TMPC per layer.\n\n"
          "Options:\n");
  pp_cli_print_options(out, plan_opts, N_OPTS(plan_opts));
  fprintf(out, "\nSizes take B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000).\n");
  pp_cli_print_exit_codes(out);
}

void pp_cli_help_eval(FILE *out) {
  fprintf(out,
          "usage: piper eval INPUT.json (--plan FILE | --pp P --tp T --dp D [--recompute all|none]) "
          "[options]\n\n"
          "Evaluates one given plan under the same model and checker as `plan` instead of searching: time\n"
          "per sample and per batch, samples/s, per-stage load and memory against the limit, the bottleneck\n"
          "stage, and every rule the plan breaks (memory over the limit at a stage and by how much, devices\n"
          "over K, a d that does not divide N, a degree the options or the input do not offer).\n"
          "The shorthand builds the plan Megatron-LM runs: P stages of the same (d, t) = (D, T); the\n"
          "transformer blocks (nodes named block.<i>, as `piper gen` writes them; otherwise every node)\n"
          "split evenly in order, the first stages taking one more when P does not divide them, the\n"
          "nodes before the first block on the first stage and those after the last on the last.\n\n"
          "Options:\n");
  pp_cli_print_options(out, eval_opts, N_OPTS(eval_opts));
  fprintf(out, "\nExit codes:\n"
               "  0   the plan is feasible\n"
               "  1   any other failure\n"
               "  2   invalid input, plan file or usage\n"
               "  3   the plan breaks a rule (each one is listed)\n");
}

void pp_cli_long_options(const opt_doc *o, int n, struct option *lo) {
  for (int i = 0; i < n; i++) {
    lo[i].name = o[i].name;
    lo[i].has_arg = o[i].has_arg ? required_argument : no_argument;
    lo[i].flag = NULL;
    lo[i].val = o[i].id;
  }
  memset(&lo[n], 0, sizeof lo[n]);
}

pp_status pp_cli_parse_format(const char *v, pp_format other, pp_format *f, pp_error *err) {
  const char *name = other == PP_FORMAT_CSV ? "csv" : "json";
  if (strcmp(v, "text") == 0)
    *f = PP_FORMAT_TEXT;
  else if (strcmp(v, name) == 0)
    *f = other;
  else
    return pp_error_set(err, PP_ERR_USAGE, "--format: expected text or %s, got '%s'", name, v);
  return PP_OK;
}

pp_status pp_cli_parse_checkpoint_every(const char *v, double *seconds, pp_error *err) {
  long long s;
  pp_status st = pp_parse_int(v, 0, 100000000, "--checkpoint-every (seconds)", &s, err);
  if (!st) *seconds = (double)s;
  return st;
}

pp_status pp_cli_help_or_unknown(int id, int help_id, int *help, pp_error *err) {
  if (id != help_id && id != 'h') return pp_error_set(err, PP_ERR_USAGE, "unknown option");
  *help = 1;
  return PP_OK;
}

pp_status pp_cli_getopt(int argc, char **argv, const pp_cli_option *o, int n, const char *shorts,
                        pp_cli_handler h, void *user, const char **pos, int max_pos, int *n_pos,
                        pp_error *err) {
  struct option lo[49];
  char opts[32];
  if (n > 48 || strlen(shorts) > sizeof opts - 2)
    return pp_error_set(err, PP_ERR_INTERNAL, "option table too large (%d entries, \"%s\")", n, shorts);
  pp_cli_long_options(o, n, lo);
  snprintf(opts, sizeof opts, "+%s", shorts); /* +: stop at the first positional, resume after it */
  *n_pos = 0;
  optind = 0; /* glibc: a full restart of the scan */
  opterr = 0;
  for (;;) {
    int c = getopt_long(argc, argv, opts, lo, NULL);
    if (c == -1) {
      if (optind < argc) {
        if (*n_pos >= max_pos)
          return pp_error_set(err, PP_ERR_USAGE, "unexpected argument '%s'", argv[optind]);
        pos[(*n_pos)++] = argv[optind++];
        continue;
      }
      break;
    }
    if (c == '?') {
      const char *bad = argv[optind - 1];
      for (int i = 0; optopt && i < n; i++)
        if (optopt == o[i].id) return pp_error_set(err, PP_ERR_USAGE, "option '%s' needs a value", bad);
      if (optopt && strchr(shorts, optopt))
        return pp_error_set(err, PP_ERR_USAGE, "option '%s' needs a value", bad);
      if (optopt) return pp_error_set(err, PP_ERR_USAGE, "unknown option '-%c'", optopt);
      return pp_error_set(err, PP_ERR_USAGE, "unknown option '%s'", bad);
    }
    pp_status st = h(user, c, optarg, err);
    if (st) return st;
  }
  return PP_OK;
}

static pp_status plan_handler(void *ap, int id, const char *v, pp_error *err) {
  pp_plan_args *a = ap;
  switch (id) {
  case O_DEVICES:
    return pp_parse_int(v, 1, PP_MAX_DEVICES, "--devices", &a->devices, err);
  case O_MEMORY:
    return pp_parse_size(v, 0, "--memory", &a->memory, err);
  case O_MICRO:
    return pp_parse_int(v, 1, PP_MAX_MICROBATCHES, "--microbatches", &a->microbatches, err);
  case O_BANDWIDTH:
    return pp_parse_size(v, 1, "--bandwidth", &a->bandwidth, err);
  case O_NODP:
    a->no_dp = 1;
    return PP_OK;
  case O_NOTP:
    a->no_tp = 1;
    return PP_OK;
  case O_NOREC:
    a->no_recompute = 1;
    return PP_OK;
  case O_KNAP:
    if (strcmp(v, "greedy") == 0)
      a->knapsack = PP_KNAPSACK_GREEDY;
    else if (strcmp(v, "exact") == 0)
      a->knapsack = PP_KNAPSACK_EXACT;
    else
      return pp_error_set(err, PP_ERR_USAGE, "--knapsack: expected greedy or exact, got '%s'", v);
    return PP_OK;
  case O_SCHEDULE:
    return pp_cli_parse_schedule(v, &a->schedule, err);
  case O_UNIFORM:
    a->uniform = 1;
    return PP_OK;
  case O_VIRTUAL:
    return pp_parse_int(v, 1, 1024, "--virtual-stages", &a->virtual_stages, err);
  case O_PLANNER:
    return pp_cli_parse_planner(v, &a->planner, err);
  case O_ZERO:
    return pp_parse_int(v, 0, 3, "--zero", &a->zero, err);
  case O_GPN:
    return pp_parse_int(v, 1, PP_MAX_DEVICES, "--devices-per-node", &a->devices_per_node, err);
  case O_INTRA:
    return pp_parse_size(v, 1, "--intra-node-bandwidth", &a->intra_bandwidth, err);
  case O_MAXDS:
    return pp_parse_int(v, 1, 100000000, "--max-downsets", &a->max_downsets, err);
  case O_MAXMEM:
    return pp_parse_size(v, 0, "--max-memory-use", &a->max_memory_use, err);
  case O_FORMAT:
    return pp_cli_parse_format(v, PP_FORMAT_JSON, &a->format, err);
  case O_QUIET:
    a->quiet = 1;
    return PP_OK;
  case O_OUT:
    a->out = v;
    return PP_OK;
  case O_NOARCH:
    a->no_archive = 1;
    return PP_OK;
  case O_FORCE:
    a->force = 1;
    return PP_OK;
  case O_RESUME:
    a->resume = 1;
    return PP_OK;
  case O_CKPT:
    a->checkpoint_every_set = 1;
    return pp_cli_parse_checkpoint_every(v, &a->checkpoint_every, err);
  case O_VERSION:
    a->version = 1;
    return PP_OK;
  }
  return pp_cli_help_or_unknown(id, O_HELP, &a->help, err);
}

pp_status pp_cli_parse_plan(int argc, char **argv, pp_plan_args *a, pp_error *err) {
  memset(a, 0, sizeof *a);
  a->devices = a->microbatches = -1;
  a->memory = a->bandwidth = -1;
  a->devices_per_node = -1;
  a->intra_bandwidth = -1;
  a->max_downsets = 200000;
  const char *pos[1];
  int n_pos;
  pp_status st =
      pp_cli_getopt(argc, argv, plan_opts, N_OPTS(plan_opts), "h", plan_handler, a, pos, 1, &n_pos, err);
  if (st) return st;
  if (a->help || a->version) return PP_OK;
  if (n_pos != 1) return pp_error_set(err, PP_ERR_USAGE, "missing the input file (try 'piper plan --help')");
  a->input = pos[0];
  if (a->out && a->no_archive) return pp_error_set(err, PP_ERR_USAGE, "--out and --no-archive contradict");
  if (a->resume && a->planner == PP_PLANNER_EQUI)
    return pp_error_set(err, PP_ERR_USAGE,
                        "--resume: the equi planner takes no checkpoints (it runs in seconds)");
  if (a->planner == PP_PLANNER_EQUI && (a->schedule != PP_SCHEDULE_2BW || a->virtual_stages > 1))
    return pp_error_set(err, PP_ERR_USAGE, "--planner equi: models the 2bw schedule only (as in the paper)");
  return pp_cli_check_schedule(a->schedule, a->uniform, a->virtual_stages, err);
}

pp_status pp_cli_parse_planner(const char *v, pp_planner *out, pp_error *err) {
  if (strcmp(v, "piper") == 0)
    *out = PP_PLANNER_PIPER;
  else if (strcmp(v, "equi") == 0)
    *out = PP_PLANNER_EQUI;
  else
    return pp_error_set(err, PP_ERR_USAGE, "--planner: expected piper or equi, got '%s'", v);
  return PP_OK;
}

pp_status pp_cli_parse_schedule(const char *v, pp_schedule *out, pp_error *err) {
  if (pp_schedule_from_name(v, out) == 0) return PP_OK;
  return pp_error_set(err, PP_ERR_USAGE, "--schedule: expected 2bw, 1f1b or gpipe, got '%s'", v);
}

pp_status pp_cli_check_schedule(pp_schedule schedule, int uniform, long long virtual_stages, pp_error *err) {
  if (virtual_stages > 1 && schedule == PP_SCHEDULE_2BW)
    return pp_error_set(err, PP_ERR_USAGE,
                        "--virtual-stages %lld needs a synchronous schedule (--schedule 1f1b or gpipe); 2bw "
                        "has no flush to interleave",
                        virtual_stages);
  if (virtual_stages > 1 && !uniform)
    return pp_error_set(err, PP_ERR_USAGE,
                        "--virtual-stages %lld needs --uniform (every chunk of every device has the same d "
                        "and t)",
                        virtual_stages);
  return PP_OK;
}

static pp_status eval_handler(void *ap, int id, const char *v, pp_error *err) {
  pp_eval_args *a = ap;
  switch (id) {
  case O_PLANFILE:
    a->plan_file = v;
    return PP_OK;
  case O_PP:
    return pp_parse_int(v, 1, PP_MAX_DEVICES, "--pp", &a->pp, err);
  case O_TP:
    return pp_parse_int(v, 1, PP_MAX_DEVICES, "--tp", &a->tp, err);
  case O_DP:
    return pp_parse_int(v, 1, PP_MAX_DEVICES, "--dp", &a->dp, err);
  case O_RECOMP:
    if (strcmp(v, "all") == 0)
      a->recompute = 1;
    else if (strcmp(v, "none") == 0)
      a->recompute = 0;
    else
      return pp_error_set(err, PP_ERR_USAGE, "--recompute: expected all or none, got '%s'", v);
    return PP_OK;
  }
  return plan_handler(&a->budget, id, v, err);
}

pp_status pp_cli_parse_eval(int argc, char **argv, pp_eval_args *a, pp_error *err) {
  memset(a, 0, sizeof *a);
  a->budget.devices = a->budget.microbatches = -1;
  a->budget.memory = a->budget.bandwidth = -1;
  a->budget.no_archive = 1;
  a->pp = a->tp = a->dp = -1;
  a->recompute = -1;
  const char *pos[1];
  int n_pos;
  pp_status st =
      pp_cli_getopt(argc, argv, eval_opts, N_OPTS(eval_opts), "h", eval_handler, a, pos, 1, &n_pos, err);
  if (st) return st;
  if (a->budget.help) return PP_OK;
  if (n_pos != 1) return pp_error_set(err, PP_ERR_USAGE, "missing the input file (try 'piper eval --help')");
  a->budget.input = pos[0];
  int any = a->pp > 0 || a->tp > 0 || a->dp > 0 || a->recompute >= 0;
  if (a->plan_file && any)
    return pp_error_set(err, PP_ERR_USAGE,
                        "--plan and the shorthand (--pp, --tp, --dp, --recompute) contradict");
  if (!a->plan_file && !(a->pp > 0 && a->tp > 0 && a->dp > 0))
    return pp_error_set(err, PP_ERR_USAGE, "give --plan FILE, or all of --pp, --tp and --dp");
  if (a->recompute < 0) a->recompute = 0;
  if (!a->plan_file && a->budget.virtual_stages > 1) a->budget.uniform = 1; /* the shorthand is uniform */
  return pp_cli_check_schedule(a->budget.schedule, a->budget.uniform, a->budget.virtual_stages, err);
}

pp_status pp_cli_make_problem(const pp_plan_args *a, const pp_graph *g, pp_problem *p, pp_error *err) {
  memset(p, 0, sizeof *p);
  p->devices = (int)(a->devices > 0 ? a->devices : g->max_devices);
  p->memory = a->memory > 0 ? a->memory : g->max_memory;
  p->microbatches = (int)(a->microbatches > 0 ? a->microbatches : g->microbatches);
  p->bandwidth = a->bandwidth > 0 ? a->bandwidth : g->bandwidth;
  p->no_dp = a->no_dp;
  p->no_tp = a->no_tp;
  p->no_recompute = a->no_recompute;
  p->knapsack = a->knapsack;
  p->schedule = a->schedule;
  p->uniform = a->uniform;
  p->virtual_stages = a->virtual_stages > 1 ? (int)a->virtual_stages : 1;
  p->planner = a->planner;
  p->zero = (int)a->zero;
  p->devices_per_node = (int)(a->devices_per_node > 0 ? a->devices_per_node : g->devices_per_node);
  p->intra_bandwidth = a->intra_bandwidth > 0 ? a->intra_bandwidth : g->intra_bandwidth;
  if (p->devices_per_node > 0 && !(p->intra_bandwidth > 0))
    return pp_error_set(
        err, PP_ERR_USAGE,
        "--devices-per-node needs --intra-node-bandwidth (the input has no intraNodeBandwidth)");
  if (p->devices_per_node == 0 && a->intra_bandwidth > 0)
    return pp_error_set(err, PP_ERR_USAGE,
                        "--intra-node-bandwidth needs --devices-per-node (the input has no devicesPerNode)");
  pp_status st;
  if (a->devices_per_node > 0 &&
      (st = pp_graph_check_node_size(g, p->devices_per_node, "--devices-per-node", err)))
    return st;
  if (p->zero > 0 && (st = pp_graph_check_zero(g, p->zero, err))) return st;
  if (p->planner == PP_PLANNER_EQUI && (p->zero > 0 || p->devices_per_node > 0))
    return pp_error_set(err, PP_ERR_USAGE,
                        "--planner equi models neither --zero nor a two-level network (devicesPerNode)");
  return PP_OK;
}
