/*
 * downsets.h - enumeration of the downsets of the model graph.
 *
 * Following the reference planner, a "downset" here is a set of nodes closed
 * under successors: if v is in it, so is every successor of v.  It is the
 * tail of a pipeline; the dynamic programme places a stage I \ J in front of
 * the stages of a smaller downset J.  Downsets are stored sorted by size, so
 * the downsets of one size (a "layer") are contiguous and depend only on
 * earlier layers.  Index 0 is the empty set; the last index is the full set.
 */
#ifndef PIPER_DOWNSETS_H
#define PIPER_DOWNSETS_H

#include <stdint.h>

#include "piper/error.h"
#include "piper/graph.h"

typedef struct pp_downsets {
  int n_nodes;
  int words;        /* uint64 words per set */
  int count;        /* number of downsets (including the empty set) */
  uint64_t *bits;   /* [count * words], sorted by size */
  int *size;        /* [count] number of nodes */
  int n_layers;     /* sizes 0..n_nodes: n_nodes + 1 layers */
  int *layer_start; /* [n_layers + 1]: layer i is [layer_start[i], layer_start[i+1]) */
  /* lookup table: open addressing over indices */
  int *slots;
  uint64_t n_slots; /* power of two */
} pp_downsets;

/* Enumerates every downset of g.  Fails with PP_ERR_LIMIT when more than
 * max_count exist, saying how many were found before stopping.  On success
 * *out owns the result (free with pp_downsets_free). */
pp_status pp_downsets_enumerate(const pp_graph *g, long long max_count, pp_downsets **out, pp_error *err);

/* Builds the structure from count sets already sorted by size (as produced
 * by pp_downsets_enumerate, e.g. received from another rank or an archive).
 * Copies bits.  Returns PP_ERR_INPUT if they are not sorted by size or a set
 * repeats. */
pp_status pp_downsets_from_bits(int n_nodes, int count, const uint64_t *bits, pp_downsets **out,
                                pp_error *err);

/* Returns the index of the downset with exactly these bits, or -1. */
int pp_downsets_find(const pp_downsets *ds, const uint64_t *bits);

static inline const uint64_t *pp_downset_bits(const pp_downsets *ds, int i) {
  return ds->bits + (size_t)i * (size_t)ds->words;
}

/* Counts, for every downset I, its proper sub-downsets J (J a strict
 * subset of I); writes them to counts[count] and returns the total number
 * of pairs.  Used to estimate work. */
long long pp_downsets_count_pairs(const pp_downsets *ds, long long *counts);

/* Frees ds and its arrays (NULL is a no-op). */
void pp_downsets_free(pp_downsets *ds);

#endif /* PIPER_DOWNSETS_H */
