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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piper/bitset.h"
#include "piper/signals.h"
#include "piper/units.h"

/* Stop requests (pp_stop_requested) are polled after about this much work,
 * so that a long enumeration or pair count ends within a fraction of a
 * second, and a small input runs to the DP (whose layers checkpoint). */
#define STOP_POLL_WORK (1LL << 20)

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

/* Appends a set; grows storage and the hash table as needed, the storage
 * never past limit + 1 sets. */
static void push_set(pp_downsets *ds, int *cap, long long limit, const uint64_t *bits, int size) {
  if (ds->count == *cap) {
    long long want = (long long)*cap * 2;
    if (want > limit + 1) want = limit + 1;
    if (want <= *cap) want = (long long)*cap + 1;
    *cap = (int)want;
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

double pp_downsets_bytes_each(int n_nodes) {
  /* the bitset, the size, and up to four hash slots (the table doubles at
   * half full) */
  return 8.0 * pp_bits_words(n_nodes) + sizeof(int) * 5.0;
}

/* The successors of every node as one list (CSR): succ[first[v] ..
 * first[v + 1]) are v's.  n + 1 + edges ints, where a bitset per node
 * would take n * n / 8 bytes (1.25 GB at 100,000 nodes). */
typedef struct succ_lists {
  int *first, *succ;
} succ_lists;

static succ_lists succ_build(const pp_graph *g) {
  succ_lists s = {pp_xcalloc((size_t)g->n_nodes + 2, sizeof(int)),
                  pp_xmalloc(sizeof(int) * ((size_t)g->n_edges + 1))};
  for (int e = 0; e < g->n_edges; e++) s.first[g->edges[e].src + 2]++;
  for (int v = 0; v < g->n_nodes; v++) s.first[v + 2] += s.first[v + 1];
  for (int e = 0; e < g->n_edges; e++) s.succ[s.first[g->edges[e].src + 1]++] = g->edges[e].dst;
  return s; /* first[v] now starts v's list */
}

/* 1 if v is not in set and every successor of v is. */
static int addable(const succ_lists *s, const uint64_t *set, int v) {
  if (pp_bit_get(set, v)) return 0;
  for (int i = s->first[v]; i < s->first[v + 1]; i++)
    if (!pp_bit_get(set, s->succ[i])) return 0;
  return 1;
}

/* The number of downsets the limits allow for g (see
 * pp_downsets_enumerate_within), and whether memory is what limits it. */
static long long count_limit(const pp_graph *g, long long max_count, double max_bytes, int *by_memory) {
  *by_memory = 0;
  if (max_bytes <= 0) return max_count;
  const double fixed = 4.0 * ((double)g->n_nodes + (double)g->n_edges + 8);
  const double fit = (max_bytes - fixed) / pp_downsets_bytes_each(g->n_nodes);
  if (fit >= (double)max_count) return max_count;
  *by_memory = 1;
  return fit < 1 ? 0 : (long long)fit;
}

static pp_status too_many(const pp_graph *g, long long max_count, double max_bytes, long long limit,
                          int by_memory, const char *found, pp_error *err) {
  char each[32], bytes[32];
  pp_format_bytes(pp_downsets_bytes_each(g->n_nodes), each, sizeof each);
  pp_format_bytes(max_bytes, bytes, sizeof bytes);
  if (by_memory)
    return pp_error_set(err, PP_ERR_LIMIT,
                        "the graph has more than %lld downsets (%s): at %s each (a bitset of %d nodes), "
                        "--max-memory-use %s holds no more; raise it if you have the memory",
                        limit, found, each, g->n_nodes, bytes);
  return pp_error_set(err, PP_ERR_LIMIT,
                      "the graph has more than %lld downsets (%s); raise --max-downsets if you have "
                      "the time and memory",
                      max_count, found);
}

pp_status pp_downsets_enumerate_within(const pp_graph *g, long long max_count, double max_bytes,
                                       pp_downsets **out, pp_error *err) {
  assert(g && out);
  *out = NULL;
  int by_memory;
  const long long limit = count_limit(g, max_count, max_bytes, &by_memory);
  char found[160];
  if ((long long)g->n_nodes + 1 > limit) { /* refused before allocating anything */
    snprintf(found, sizeof found,
             "a graph of %d nodes has at least %lld: the suffixes of a topological order", g->n_nodes,
             (long long)g->n_nodes + 1);
    return too_many(g, max_count, max_bytes, limit, by_memory, found, err);
  }
  int cap;
  pp_downsets *ds = alloc_empty(g->n_nodes, &cap);
  int W = ds->words;
  succ_lists sl = succ_build(g);
  uint64_t *cand = pp_xmalloc(sizeof(uint64_t) * (size_t)W);
  memset(cand, 0, sizeof(uint64_t) * (size_t)W);
  push_set(ds, &cap, limit, cand, 0);
  ds->layer_start[0] = 0;
  pp_status st = PP_OK;
  long long work = 0;
  for (int size = 0; size < g->n_nodes && !st; size++) {
    int begin = ds->layer_start[size], end = ds->count;
    ds->layer_start[size + 1] = end;
    for (int i = begin; i < end && !st; i++) {
      int sig;
      work += g->n_nodes; /* a flag read per ~10^6 candidates: small inputs never stop here */
      if (work >= STOP_POLL_WORK && !(work = 0) && pp_stop_requested(&sig)) {
        st = pp_error_set(err, PP_ERR_INTERRUPTED,
                          "stopped by signal %d while enumerating the downsets (%d so far, at sets of %d of "
                          "%d nodes); nothing saved",
                          sig, ds->count, size + 1, g->n_nodes);
        break;
      }
      for (int v = 0; v < g->n_nodes; v++) {
        const uint64_t *set = pp_downset_bits(ds, i);
        if (!addable(&sl, set, v)) continue;
        memcpy(cand, set, sizeof(uint64_t) * (size_t)W);
        pp_bit_set(cand, v);
        if (pp_downsets_find(ds, cand) >= 0) continue;
        if (ds->count >= limit) {
          snprintf(found, sizeof found, "stopped counting at %d, while at sets of %d of %d nodes", ds->count,
                   size + 1, g->n_nodes);
          st = too_many(g, max_count, max_bytes, limit, by_memory, found, err);
          break;
        }
        push_set(ds, &cap, limit, cand, size + 1);
      }
    }
  }
  free(sl.first);
  free(sl.succ);
  free(cand);
  if (st) {
    pp_downsets_free(ds);
    return st;
  }
  ds->layer_start[g->n_nodes + 1] = ds->count;
  *out = ds;
  return PP_OK;
}

pp_status pp_downsets_enumerate(const pp_graph *g, long long max_count, pp_downsets **out, pp_error *err) {
  return pp_downsets_enumerate_within(g, max_count, 0, out, err);
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
    push_set(ds, &cap, (long long)count, b, size);
  }
  for (int s = prev + 1; s <= n_nodes + 1; s++) ds->layer_start[s] = ds->count;
  *out = ds;
  return PP_OK;
}

/* Above this many maximal elements a downset's sub-downsets are tested one
 * by one instead (2^12 lookups are about as many as the subset tests of
 * GNMT's larger downsets). */
#define MAX_MAXIMAL 12

/* below[i] (the downsets strictly inside downset i) by inclusion and
 * exclusion over i's maximal elements M, the nodes m with I \ {m} a
 * downset: a downset strictly inside I lies inside some I \ {m}, and one
 * inside I \ {m} for every m of S lies inside I \ S, a downset, so
 *   below(I) = sum over S in M, S not empty, of (-1)^(|S| + 1) (below(I \ S) + 1).
 * The sets I \ S come before I (they are smaller).  Returns -1 where I has
 * more than MAX_MAXIMAL maximal elements or a set I \ S is not among the
 * downsets (a family that is not every downset of a graph); *work grows
 * by the lookups made.  scratch holds words words. */
static long long below_by_maximal(const pp_downsets *ds, int i, const long long *below, uint64_t *scratch,
                                  long long *work) {
  const int words = ds->words;
  const uint64_t *bi = pp_downset_bits(ds, i);
  uint64_t *set = scratch;
  int m[MAX_MAXIMAL], n_m = 0;
  memcpy(set, bi, sizeof(uint64_t) * (size_t)words);
  for (int w = 0; w < words; w++)
    for (uint64_t rest = bi[w]; rest; rest &= rest - 1) {
      const int v = w * 64 + __builtin_ctzll(rest);
      pp_bit_clear(set, v);
      (*work)++;
      if (pp_downsets_find(ds, set) >= 0) {
        if (n_m == MAX_MAXIMAL) return -1;
        m[n_m++] = v;
      }
      pp_bit_set(set, v);
    }
  long long total = 0;
  for (unsigned mask = 1; mask < (1u << n_m); mask++) {
    for (int x = 0; x < n_m; x++)
      if (mask & (1u << x)) pp_bit_clear(set, m[x]);
    const int j = pp_downsets_find(ds, set);
    for (int x = 0; x < n_m; x++)
      if (mask & (1u << x)) pp_bit_set(set, m[x]);
    (*work)++;
    if (j < 0 || j >= i) return -1;
    const long long term = below[j] + 1;
    total += __builtin_popcount(mask) % 2 ? term : -term;
  }
  return total;
}

long long pp_downsets_count_pairs(const pp_downsets *ds, long long *counts) {
  assert(ds);
  long long total = 0, work = 0;
  long long *below = pp_xmalloc(sizeof(long long) * ((size_t)ds->count + 1));
  uint64_t *scratch = pp_xmalloc(sizeof(uint64_t) * ((size_t)ds->words + 1));
  for (int i = 0; i < ds->count; i++) {
    if (work >= STOP_POLL_WORK && !(work = 0) && pp_stop_requested(NULL)) {
      total = -1;
      break;
    }
    const int end = ds->layer_start[ds->size[i]];
    /* (few smaller downsets: testing them costs less than finding I's
     * maximal elements, a lookup per node of I) */
    long long c = end > 4 * ds->size[i] ? below_by_maximal(ds, i, below, scratch, &work) : -1;
    if (c < 0) { /* one by one */
      const uint64_t *bi = pp_downset_bits(ds, i);
      work += end; /* a flag read per ~10^6 subset tests */
      c = 0;
      for (int j = 0; j < end; j++)
        if (pp_bits_subset(pp_downset_bits(ds, j), bi, ds->words)) c++;
    }
    below[i] = c;
    if (counts) counts[i] = c;
    total += c;
  }
  free(below);
  free(scratch);
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
