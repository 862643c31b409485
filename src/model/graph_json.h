/*
 * graph_json.h - what the files of the JSON reader share: the conversion of
 * a document into a graph (graph_json.c, called by graph_load.c), the
 * parsing state and the typed reads of JSON values whose errors name the
 * file and the JSON path (graph_json_get.c).  Private to src/model.
 */
#ifndef PIPER_MODEL_GRAPH_JSON_H
#define PIPER_MODEL_GRAPH_JSON_H

#include <jansson.h>
#include <stdio.h>

#include "piper/graph.h"

#define PATH_MAX_LEN 512

/* Parsing state: the graph under construction and where errors go. */
typedef struct parser {
  const char *file;
  pp_error *err;
  FILE *warn;
  pp_graph *g;
  long long *sorted_ids; /* [n_nodes] ascending, for id -> index */
  int *sorted_idx;       /* [n_nodes] node index of sorted_ids[i] */
} parser;

/* Converts a parsed document into a new graph *out named name (warnings to
 * warn, if not NULL); borrows root.  The caller gives the graph its source
 * text (graph_load.c).  PP_ERR_INPUT naming the JSON path, or PP_OK. */
pp_status pp_json_build_graph(const char *name, const json_t *root, FILE *warn, pp_graph **out,
                              pp_error *err);

/* Sets p->err to PP_ERR_INPUT "FILE: PATH: what" (no ": " after an empty
 * path) and returns PP_ERR_INPUT. */
pp_status pp_json_fail(parser *p, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* v with the fewest digits (up to 17) that read back as v. */
typedef struct num_text {
  char s[40];
} num_text;
num_text pp_json_show(double v);

/* "an object", "an array", "a string", ... for messages. */
const char *pp_json_type_name(const json_t *j);

/* Reads a finite number >= 0 (> 0 when positive) at obj.key into *out;
 * PP_ERR_INPUT naming path.key otherwise (missing, wrong type, range). */
pp_status pp_json_number(parser *p, const json_t *obj, const char *key, const char *path, int positive,
                         double *out);

/* The same for an optional key: PP_OK with *present = 0 when absent. */
pp_status pp_json_optional_number(parser *p, const json_t *obj, const char *key, const char *path,
                                  int positive, double *out, int *present);

/* Reads an integer in [lo, hi] at obj.key (integral reals accepted);
 * PP_ERR_INPUT naming path.key otherwise. */
pp_status pp_json_int(parser *p, const json_t *obj, const char *key, const char *path, long long lo,
                      long long hi, long long *out);

/* Parses an object key that must be a canonical decimal integer in
 * [lo, hi]: 0 and *out, or -1. */
int pp_json_key_int(const char *s, long long lo, long long hi, long long *out);

/* Writes path["key"] into buf[n], the key quoted as JSON would and cut
 * after 40 characters. */
void pp_json_key_path(char *buf, size_t n, const char *path, const char *key);

#endif /* PIPER_MODEL_GRAPH_JSON_H */
