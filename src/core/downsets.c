/*
 * downsets.c - enumerating the successor-closed node sets of a DAG.
 *
 * Enumeration is breadth first by size: every downset of size j + 1 is a
 * downset of size j plus one node all of whose successors it contains.  A hash
 * table removes repeats.  The result is deterministic: within a layer, sets
 * appear in the order they are first generated from the previous layer.
 */
#include "piper/downsets.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"

static void table_build(pp_downsets *ds, uint64_t n_slots) {
  free(ds->slots);
  ds->n_slots = n_slots;
  ds->slots = pp_xmalloc(sizeof *ds->slots * n_slots);
  for (uint64_t i = 0; i < n_slots; i++) ds->slots[i] = -1;
  for (int i = 0; i < ds->count; i++) {
    uint64_t h = pp_bits_hash(pp_downset_bits(ds, i), ds->words) & (n_slots - 1);
    while (ds->slots[h] >= 0) h = (h + 1) & (n_slots - 1);
    ds->slots[h] = i;
  }
}

int pp_downsets_find(const pp_downsets *ds, const uint64_t *bits) {
  assert(ds && bits);
  uint64_t mask = ds->n_slots - 1;
  uint64_t h = pp_bits_hash(bits, ds->words) & mask;
  while (ds->slots[h] >= 0) {
    if (memcmp(pp_downset_bits(ds, ds->slots[h]), bits, sizeof(uint64_t) * (size_t)ds->words) == 0)
      return ds->slots[h];
    h = (h + 1) & mask;
  }
  return -1;
}

/* Appends a set; grows storage and the hash table as needed. */
static void push_set(pp_downsets *ds, int *cap, const uint64_t *bits, int size) {
  if (ds->count == *cap) {
    *cap *= 2;
    ds->bits = pp_xrealloc(ds->bits, sizeof(uint64_t) * (size_t)ds->words * (size_t)*cap);
    ds->size = pp_xrealloc(ds->size, sizeof(int) * (size_t)*cap);
  }
  memcpy(ds->bits + (size_t)ds->count * (size_t)ds->words, bits, sizeof(uint64_t) * (size_t)ds->words);
  ds->size[ds->count] = size;
  ds->count++;
  if ((uint64_t)ds->count * 2 > ds->n_slots) {
    table_build(ds, ds->n_slots * 2);
  } else {
    uint64_t h = pp_bits_hash(bits, ds->words) & (ds->n_slots - 1);
    while (ds->slots[h] >= 0) h = (h + 1) & (ds->n_slots - 1);
    ds->slots[h] = ds->count - 1;
  }
}

static pp_downsets *alloc_empty(int n_nodes, int *cap) {
  pp_downsets *ds = pp_xcalloc(1, sizeof *ds);
  ds->n_nodes = n_nodes;
  ds->words = pp_bits_words(n_nodes);
  *cap = 64;
  ds->bits = pp_xmalloc(sizeof(uint64_t) * (size_t)ds->words * (size_t)*cap);
  ds->size = pp_xmalloc(sizeof(int) * (size_t)*cap);
  ds->n_layers = n_nodes + 1;
  ds->layer_start = pp_xcalloc((size_t)ds->n_layers + 1, sizeof(int));
  table_build(ds, 64);
  return ds;
}

pp_status pp_downsets_enumerate(const pp_graph *g, long long max_count, pp_downsets **out, pp_error *err) {
  assert(g && out);
  *out = NULL;
  int cap;
  pp_downsets *ds = alloc_empty(g->n_nodes, &cap);
  int W = ds->words;
  /* succ_mask[v]: the successors of v */
  uint64_t *succ = pp_xcalloc((size_t)g->n_nodes * (size_t)W, sizeof(uint64_t));
  for (int e = 0; e < g->n_edges; e++) pp_bit_set(succ + (size_t)g->edges[e].src * W, g->edges[e].dst);
  uint64_t *cand = pp_xmalloc(sizeof(uint64_t) * (size_t)W);
  memset(cand, 0, sizeof(uint64_t) * (size_t)W);
  push_set(ds, &cap, cand, 0);
  ds->layer_start[0] = 0;
  for (int size = 0; size < g->n_nodes; size++) {
    int begin = ds->layer_start[size], end = ds->count;
    ds->layer_start[size + 1] = end;
    for (int i = begin; i < end; i++) {
      for (int v = 0; v < g->n_nodes; v++) {
        const uint64_t *set = pp_downset_bits(ds, i);
        if (pp_bit_get(set, v) || !pp_bits_subset(succ + (size_t)v * W, set, W)) continue;
        memcpy(cand, set, sizeof(uint64_t) * (size_t)W);
        pp_bit_set(cand, v);
        if (pp_downsets_find(ds, cand) >= 0) continue;
        if (ds->count >= max_count) {
          pp_error_set(
              err, PP_ERR_LIMIT,
              "the graph has more than %lld downsets (stopped counting at %d, while at sets of %d of %d "
              "nodes); raise --max-downsets if you have the time and memory",
              max_count, ds->count, size + 1, g->n_nodes);
          free(succ);
          free(cand);
          pp_downsets_free(ds);
          return PP_ERR_LIMIT;
        }
        push_set(ds, &cap, cand, size + 1);
      }
    }
  }
  ds->layer_start[g->n_nodes + 1] = ds->count;
  free(succ);
  free(cand);
  *out = ds;
  return PP_OK;
}

pp_status pp_downsets_from_bits(int n_nodes, int count, const uint64_t *bits, pp_downsets **out,
                                pp_error *err) {
  assert(n_nodes >= 1 && count >= 0 && (bits || count == 0) && out);
  *out = NULL;
  int cap;
  pp_downsets *ds = alloc_empty(n_nodes, &cap);
  int prev = 0;
  for (int i = 0; i < count; i++) {
    const uint64_t *b = bits + (size_t)i * (size_t)ds->words;
    int size = pp_bits_count(b, ds->words);
    if (size < prev || size > n_nodes || pp_downsets_find(ds, b) >= 0 || (i == 0 && size != 0)) {
      pp_downsets_free(ds);
      return pp_error_set(err, PP_ERR_INPUT, "downset %d is out of order or repeated", i);
    }
    for (int s = prev + 1; s <= size; s++) ds->layer_start[s] = ds->count;
    prev = size;
    push_set(ds, &cap, b, size);
  }
  for (int s = prev + 1; s <= n_nodes + 1; s++) ds->layer_start[s] = ds->count;
  *out = ds;
  return PP_OK;
}

long long pp_downsets_count_pairs(const pp_downsets *ds, long long *counts) {
  assert(ds);
  long long total = 0;
  for (int i = 0; i < ds->count; i++) {
    long long c = 0;
    const uint64_t *bi = pp_downset_bits(ds, i);
    int end = ds->layer_start[ds->size[i]];
    for (int j = 0; j < end; j++)
      if (pp_bits_subset(pp_downset_bits(ds, j), bi, ds->words)) c++;
    if (counts) counts[i] = c;
    total += c;
  }
  return total;
}

void pp_downsets_free(pp_downsets *ds) {
  if (!ds) return;
  free(ds->bits);
  free(ds->size);
  free(ds->layer_start);
  free(ds->slots);
  free(ds);
}
