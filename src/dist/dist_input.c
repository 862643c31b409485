/*
 * dist_input.c - the input graph and its downsets, produced by rank 0 and
 * shared with every rank (see include/piper/dist.h).
 */
#include <stdint.h>
#include <stdlib.h>

#include "dist_internal.h"
#include "piper/bitset.h"

/* The graph travels as its file's bytes (a flag, then the bytes):
 * with flag 1 they are the file as read (pp_graph_read_plain) and every
 * rank, rank 0 too, parses them side by side (pp_dist_to_all); with flag 0
 * rank 0 has parsed the file as a stream (standard input, a device, a file
 * too large to read at once, one with a NUL byte) and the others parse the
 * text it read. */
typedef struct graph_job {
  const char *path;
  FILE *warn;
  int produced; /* this rank produced the bytes (rank 0) */
  pp_graph *g;
} graph_job;

static pp_status graph_produce(void *user, pp_pack *out, pp_error *err) {
  graph_job *j = user;
  j->produced = 1;
  char *text;
  size_t len;
  if (out && pp_graph_read_plain(j->path, &text, &len)) {
    pp_pack_i32(out, 1);
    pp_pack_bytes(out, text, len);
    free(text);
    return PP_OK;
  }
  pp_status st = pp_graph_load_file(j->path, j->warn, &j->g, err);
  if (!st && out) {
    pp_pack_i32(out, 0);
    pp_pack_bytes(out, j->g->source_text, j->g->source_len);
  }
  return st;
}

/* On rank 0 the warnings go to its stream, and a failure is reported as
 * the stream's parse reports it (the same bytes, the same verdict; only
 * the wording of a syntax error's position may differ). */
static pp_status graph_consume(void *user, pp_unpack *in, pp_error *err) {
  graph_job *j = user;
  int plain;
  if (pp_unpack_int_in(in, 0, 1, &plain))
    return pp_error_set(err, PP_ERR_INTERNAL, "the input received from rank 0 is malformed");
  if (j->produced && !plain) return PP_OK; /* parsed already */
  const size_t len = pp_unpack_left(in);
  pp_status st =
      pp_graph_load_buffer(j->path, pp_unpack_skip(in, len), len, j->produced ? j->warn : NULL, &j->g, err);
  if (st && j->produced) {
    pp_graph *again = NULL;
    if (pp_graph_load_file(j->path, NULL, &again, err) == PP_OK) /* the same bytes fail alike */
      st = pp_error_set(err, PP_ERR_INPUT, "%s: changed while it was read", j->path);
    pp_graph_free(again);
  }
  return st;
}

pp_status pp_dist_load_graph(pp_dist *d, const char *path, FILE *warn, pp_graph **out, pp_error *err) {
  graph_job j = {path, warn, 0, NULL};
  pp_status st = pp_dist_to_all(d, graph_produce, graph_consume, &j, err);
  if (st) {
    pp_graph_free(j.g);
    j.g = NULL;
  }
  *out = j.g;
  return st;
}

typedef struct downsets_job {
  const pp_graph *g;
  long long max_count;
  double max_bytes;
  pp_downsets *ds;
} downsets_job;

static pp_status downsets_produce(void *user, pp_pack *out, pp_error *err) {
  downsets_job *j = user;
  pp_status st = pp_downsets_enumerate_within(j->g, j->max_count, j->max_bytes, &j->ds, err);
  if (!st && out) {
    pp_pack_i32(out, j->ds->count);
    pp_pack_bytes(out, j->ds->bits, sizeof(uint64_t) * (size_t)j->ds->count * (size_t)j->ds->words);
  }
  return st;
}

static pp_status downsets_consume(void *user, pp_unpack *in, pp_error *err) {
  downsets_job *j = user;
  const size_t words = (size_t)pp_bits_words(j->g->n_nodes);
  int count;
  if (pp_unpack_int_in(in, 1, INT32_MAX, &count) ||
      pp_unpack_left(in) != sizeof(uint64_t) * words * (size_t)count)
    return pp_error_set(err, PP_ERR_INTERNAL, "the downsets received from rank 0 are malformed");
  /* copied: the bytes need not be aligned for uint64_t */
  uint64_t *bits = pp_xmalloc(sizeof(uint64_t) * words * (size_t)count + 1);
  pp_unpack_bytes(in, bits, sizeof(uint64_t) * words * (size_t)count);
  pp_status st = pp_downsets_from_bits(j->g->n_nodes, count, bits, &j->ds, err);
  free(bits);
  return st;
}

pp_status pp_dist_downsets(pp_dist *d, const pp_graph *g, long long max_count, double max_bytes,
                           pp_downsets **out, pp_error *err) {
  downsets_job j = {g, max_count, max_bytes, NULL};
  pp_status st = pp_dist_from_root(d, downsets_produce, downsets_consume, &j, err);
  if (st) {
    pp_downsets_free(j.ds);
    j.ds = NULL;
  }
  *out = j.ds;
  return st;
}
