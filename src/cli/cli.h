/*
 * cli.h - command-line parsing for the piper subcommands.
 *
 * One option table per subcommand drives both getopt_long and --help.
 */
#ifndef PIPER_CLI_H
#define PIPER_CLI_H

#include <stdio.h>

#include "piper/error.h"
#include "piper/problem.h"

struct option;

/* One command-line option: drives both getopt_long and the help text. */
typedef struct pp_cli_option {
  const char *name;    /* long name without dashes */
  int has_arg;         /* 1 if it takes a value */
  int id;              /* value returned by getopt_long */
  const char *metavar; /* name of the value in the help */
  const char *help;    /* one line of help */
} pp_cli_option;

/* Prints "  --name VALUE   help" lines for n options. */
void pp_cli_print_options(FILE *out, const pp_cli_option *o, int n);

/* Fills lo[n + 1] (the last entry zeroed) for getopt_long. */
void pp_cli_long_options(const pp_cli_option *o, int n, struct option *lo);

/* Called for every option found, with its table id and value (NULL for a
 * flag); returns PP_OK or an error (e.g. PP_ERR_USAGE for a bad value). */
typedef pp_status (*pp_cli_handler)(void *user, int id, const char *value, pp_error *err);

/* The one option parser of every subcommand: scans argv[1..argc) with
 * getopt_long over the n options of the table o (at most 48) and the
 * one-letter aliases of shorts (getopt syntax, e.g. "ho:"; the handler gets
 * the letter as id), calling h for each, and collects the positional
 * arguments into pos (at most max_pos; their number in *n_pos).  Returns
 * PP_OK, h's error, or PP_ERR_USAGE naming an unknown option, a missing
 * value or an extra argument.  Not reentrant (getopt's state); may be called
 * again on the same argv. */
pp_status pp_cli_getopt(int argc, char **argv, const pp_cli_option *o, int n, const char *shorts,
                        pp_cli_handler h, void *user, const char **pos, int max_pos, int *n_pos,
                        pp_error *err);

/* The last step of every handler: id help_id (--help) or 'h' sets *help
 * and returns PP_OK; any other id is PP_ERR_USAGE "unknown option". */
pp_status pp_cli_help_or_unknown(int id, int help_id, int *help, pp_error *err);

/* The exit-code table of plan and show, for their --help. */
void pp_cli_print_exit_codes(FILE *out);

typedef enum pp_format { PP_FORMAT_TEXT = 0, PP_FORMAT_JSON = 1, PP_FORMAT_CSV = 2 } pp_format;

/* --format's value: "text" or the command's other format (other: JSON for
 * plan, eval and show, CSV for collect) into *f, else PP_ERR_USAGE naming
 * both. */
pp_status pp_cli_parse_format(const char *v, pp_format other, pp_format *f, pp_error *err);

/* --checkpoint-every's value: whole seconds, 0 (every layer) to 10^8, into
 * *seconds; PP_ERR_USAGE otherwise (plan and sweep). */
pp_status pp_cli_parse_checkpoint_every(const char *v, double *seconds, pp_error *err);

/* Arguments of `piper plan`.  Overrides are < 0 when not given. */
typedef struct pp_plan_args {
  const char *input;
  long long devices;
  double memory;
  long long microbatches;
  double bandwidth;
  int no_dp, no_tp, no_recompute;
  pp_knapsack_mode knapsack;
  pp_schedule schedule;     /* --schedule (default 2bw) */
  int uniform;              /* --uniform */
  long long virtual_stages; /* --virtual-stages; 0 = not given */
  pp_planner planner;
  long long zero;             /* ZeRO stage 0..3 */
  long long devices_per_node; /* -1 = the file's (or none) */
  double intra_bandwidth;     /* -1 = the file's */
  long long max_downsets;
  double max_memory_use; /* bytes the tables may use; 0 = 80% of RAM */
  pp_format format;
  int quiet;
  const char *out; /* archive path, NULL = default */
  int no_archive;
  int force;
  int resume;
  double checkpoint_every; /* seconds; 0 = every layer */
  int checkpoint_every_set;
  int help, version;
} pp_plan_args;

/* Parses argv (argv[0] is "plan").  Returns PP_OK, or PP_ERR_USAGE with a
 * message.  Strings point into argv. */
pp_status pp_cli_parse_plan(int argc, char **argv, pp_plan_args *a, pp_error *err);

/* Parses a --schedule value ("2bw", "1f1b", "gpipe") into *out; PP_ERR_USAGE
 * naming the value otherwise. */
pp_status pp_cli_parse_schedule(const char *v, pp_schedule *out, pp_error *err);

/* --planner's value: "piper" or "equi" into *out, else PP_ERR_USAGE
 * (plan, eval and sweep). */
pp_status pp_cli_parse_planner(const char *v, pp_planner *out, pp_error *err);

/* The combinations of schedule options a command accepts: virtual stages
 * (> 1) need uniform and 1f1b.  PP_OK or PP_ERR_USAGE saying why. */
pp_status pp_cli_check_schedule(pp_schedule schedule, int uniform, long long virtual_stages, pp_error *err);

/* Prints the help of `piper plan` (generated from the option table). */
void pp_cli_help_plan(FILE *out);

/* Arguments of `piper show`. */
typedef struct pp_show_args {
  const char *archive;
  long long devices; /* < 0: the stored plan */
  int curve;
  long long dp_sum; /* --dp-sum: bound on the sum of d; < 0: none */
  int curve_dp_sum; /* --curve-dp-sum */
  pp_format format;
  int help;
} pp_show_args;

pp_status pp_cli_parse_show(int argc, char **argv, pp_show_args *a, pp_error *err);
void pp_cli_help_show(FILE *out);

/* Arguments of `piper collect`. */
typedef struct pp_collect_args {
  const char **files; /* the archives, pointers into argv (array owned: free) */
  int n_files;
  const char *study; /* --out STUDY.h5, or NULL */
  pp_format format;  /* --format: text or csv */
  int help;
} pp_collect_args;

/* Parses `piper collect` arguments (argv[0] = "collect").  PP_OK (with
 * a->files allocated: the caller frees it, also on failure) or PP_ERR_USAGE
 * saying why (no archive, bad --format, unknown option). */
pp_status pp_cli_parse_collect(int argc, char **argv, pp_collect_args *a, pp_error *err);
void pp_cli_help_collect(FILE *out);

/* Arguments of `piper plot`. */
#define PP_PLOT_MAX_FILES 64
typedef struct pp_plot_args {
  const char *files[PP_PLOT_MAX_FILES]; /* archives (.h5) and study tables (.csv), in order */
  int n_files;
  const char *out_dir; /* default "." */
  const char *x, *y;   /* heatmap columns (default devices, memory_bytes) */
  const char *study;   /* --study NAME: a heatmap of the archives given, or NULL */
  int no_png;
  int help;
} pp_plot_args;

/* Parses argv (argv[0] is "plot"); PP_ERR_USAGE with a message. */
pp_status pp_cli_parse_plot(int argc, char **argv, pp_plot_args *a, pp_error *err);
void pp_cli_help_plot(FILE *out);

/* Arguments of `piper eval`: the budget options of `plan` and the plan to
 * evaluate, from a file or from framework sizes. */
typedef struct pp_eval_args {
  pp_plan_args budget;   /* input, budget and model options, format */
  const char *plan_file; /* --plan PLAN.json|ARCHIVE.h5, or NULL */
  long long pp, tp, dp;  /* the framework shorthand; < 0 when not given */
  int recompute;         /* --recompute all (1) or none (0, default) */
} pp_eval_args;

/* Parses argv (argv[0] is "eval").  Exactly one of --plan and --pp/--tp/--dp
 * (all three) is required.  Returns PP_OK, or PP_ERR_USAGE. */
pp_status pp_cli_parse_eval(int argc, char **argv, pp_eval_args *a, pp_error *err);
void pp_cli_help_eval(FILE *out);

/* Fills p from the graph's own budgets, overridden by those given in a (the
 * parser has range-checked them).  Returns PP_OK; PP_ERR_USAGE if
 * --devices-per-node and --intra-node-bandwidth lack each other (counting
 * the input's fields) or --planner equi meets --zero or a two-level network;
 * PP_ERR_INPUT, naming the JSON path, if a TMPC list's degree exceeds
 * --devices-per-node or a TMPC lacks a part that --zero shards. */
struct pp_graph;
pp_status pp_cli_make_problem(const pp_plan_args *a, const struct pp_graph *g, pp_problem *p, pp_error *err);

/* Arguments of `piper sweep`. */
typedef struct pp_sweep_args {
  const char *grid;
  const char *out_dir;
  int part, parts; /* --part I/N: this run's share of the groups (0/1 when not given) */
  long long max_downsets;
  double max_memory_use;   /* 0 = 80% of RAM */
  double checkpoint_every; /* seconds */
  pp_planner planner;      /* --planner (default piper) */
  int quiet, help;
} pp_sweep_args;

/* Parses argv (argv[0] is "sweep"); PP_ERR_USAGE with a message. */
pp_status pp_cli_parse_sweep(int argc, char **argv, pp_sweep_args *a, pp_error *err);
void pp_cli_help_sweep(FILE *out);

/* Prints the top-level usage. */
void pp_cli_help_main(FILE *out);

#endif /* PIPER_CLI_H */
