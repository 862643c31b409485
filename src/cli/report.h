/*
 * report.h - printing plans for people (a table) and for programs (JSON).
 */
#ifndef PIPER_REPORT_H
#define PIPER_REPORT_H

#include <stdio.h>

#include "piper/graph.h"
#include "piper/plan.h"
#include "piper/problem.h"

/* Facts about the run printed with the plan. */
typedef struct pp_run_info {
  const char *input; /* input path as given */
  int downsets;
  long long pairs;
  double seconds; /* wall time of the whole planning */
  int ranks;
  double bytes_exchanged; /* summed over ranks */
  double peak_rss;        /* bytes, largest over ranks */
  const char *archive;    /* archive written, or NULL */
  double write_seconds;   /* time spent writing it */
} pp_run_info;

/* Writes a plain-language reason why no plan is feasible into buf. */
void pp_explain_infeasible(const pp_graph *g, const pp_problem *p, char *buf, size_t n);

/* The stage table of pp_report_text (stage, layers, d, t, devices,
 * recomputing layers, load, memory / limit); stages as the checker filled
 * them. */
void pp_report_stages(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan);

/* Human-readable table of a checked plan (or the infeasibility reason). */
void pp_report_text(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
                    const pp_run_info *info);

/* The members of the JSON "stages" array (without the brackets): nodes,
 * d, t, tmpc, load (null if undefined), memory_bytes. */
void pp_report_json_stages(FILE *out, const pp_graph *g, const pp_plan *plan);

/* One JSON object on one line (see README for the schema). */
void pp_report_json(FILE *out, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
                    const pp_run_info *info);

/* pp_report_json when json is set, else pp_report_text. */
void pp_report(FILE *out, int json, const pp_graph *g, const pp_problem *p, const pp_plan *plan,
               const pp_run_info *info);

/* Throughput in the units people compare, from the input's optional
 * flopsPerSample / tokensPerSample / peakFlops (0 when absent or when the
 * time per sample is not a positive finite number). */
typedef struct pp_throughput {
  double tokens_per_second;
  double model_flops_per_device; /* FLOP/s per device used: flopsPerSample / TPS / devices */
  double mfu;                    /* model_flops_per_device / peakFlops */
} pp_throughput;

pp_throughput pp_throughput_of(const pp_graph *g, double tps, int devices_used);

/* Prints "tokens/s ..., model TFLOP/s per device ..., MFU ..." as a text
 * line or as JSON members (", \"tokens_per_second\": ..."; null for what
 * is unknown); nothing if the input has neither flopsPerSample nor
 * tokensPerSample. */
void pp_report_throughput(FILE *out, int json, const pp_graph *g, double tps, int devices_used);

/* Writes s as a JSON string literal (with quotes). */
void pp_json_string(FILE *out, const char *s);

#endif /* PIPER_REPORT_H */
