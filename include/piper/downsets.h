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
 * *out owns the result (free with pp_downsets_free); on failure *out is
 * NULL.  Pure (no I/O, not collective). */
pp_status pp_downsets_enumerate(const pp_graph *g, long long max_count, pp_downsets **out, pp_error *err);

/* The same within max_bytes of memory as well (0: no byte limit): a
 * downset takes pp_downsets_bytes_each(n_nodes) bytes, its bitset growing
 * with the nodes, so the count allowed is also at most max_bytes over that.
 * A graph of n nodes has at least n + 1 downsets; if the limits allow fewer
 * it is refused (PP_ERR_LIMIT) before anything is allocated, and storage
 * never grows past the limit, so a very wide input costs at most max_bytes
 * (plus its parse).  The message says which limit was met and, for memory,
 * the bytes per downset.  A stop request (pp_stop_requested, checked after
 * about 2^20 candidate nodes) ends it with PP_ERR_INTERRUPTED. */
pp_status pp_downsets_enumerate_within(const pp_graph *g, long long max_count, double max_bytes,
                                       pp_downsets **out, pp_error *err);

/* Bytes one downset of a graph of n_nodes takes in a pp_downsets: its
 * bitset (8 bytes per 64 nodes), its size and its hash slots. */
double pp_downsets_bytes_each(int n_nodes);

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
 * of pairs.  Used to estimate work.  ds must hold every downset of a graph
 * (pp_downsets_enumerate, or its bits through pp_downsets_from_bits): the
 * count goes by inclusion and exclusion over I's maximal elements where
 * they are few and I has many smaller downsets to test.  Returns -1
 * (counts then partly written) if a stop is requested
 * (pp_stop_requested), checked after about 2^20 lookups or subset tests. */
long long pp_downsets_count_pairs(const pp_downsets *ds, long long *counts);

/* Frees ds and its arrays (NULL is a no-op). */
void pp_downsets_free(pp_downsets *ds);

#endif /* PIPER_DOWNSETS_H */
