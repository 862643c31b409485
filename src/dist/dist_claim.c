/*
 * dist_claim.c - work shared among the ranks of a node (see
 * dist_internal.h): the ranks take the items of a layer's segments from
 * counters in the node's shared memory (MPI_Win_allocate_shared) with C11
 * atomic compare-and-swap, so a rank that finishes early takes more
 * instead of waiting for the slowest (the cost of an item is only
 * estimated).  Which rank computes an item does not change its table:
 * every (downset, k) is still computed exactly once and installed the same
 * way.  The same window holds a stop flag: a rank that receives a signal
 * raises it, and the others of its node abandon the layer too.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"
#include "piper/signals.h"

struct pp_dist_claim {
  MPI_Win win;
  /* [1 + n_layers * segments]: the stop flag, then per layer and segment
   * the items taken from its front (low 32 bits) and from its back (high) */
  atomic_llong *slot;
  int n_layers, segments;
};

pp_dist_claim *pp_dist_claim_new(pp_dist *d, int n_layers) {
  pp_dist_claim *c = pp_xcalloc(1, sizeof *c);
  int node_size, n_nodes;
  const int *node_of;
  MPI_Comm node = pp_dist_tables_node(pp_dist_tables_of(d), &node_size, &node_of, &n_nodes);
  int node_rank;
  MPI_Comm_rank(node, &node_rank);
  const int segments = node_size;
  const size_t bytes = sizeof(atomic_llong) * ((size_t)n_layers * (size_t)segments + 1);
  c->slot = pp_dist_node_window(node, bytes, (int)sizeof(atomic_llong), &c->win);
  c->n_layers = n_layers;
  c->segments = segments;
  if (node_rank == 0)
    for (long long i = 0; i <= (long long)n_layers * segments; i++) atomic_init(&c->slot[i], 0);
  MPI_Win_sync(c->win);
  MPI_Barrier(node);
  MPI_Win_sync(c->win);
  return c;
}

void pp_dist_claim_free(pp_dist_claim *c) {
  if (!c) return;
  MPI_Win_unlock_all(c->win);
  MPI_Win_free(&c->win);
  free(c);
}

long long pp_dist_claim_take(pp_dist_claim *c, int layer, int segment, long long len, int back) {
  if (layer < 0 || layer >= c->n_layers || segment < 0 || segment >= c->segments || len <= 0 || len > INT_MAX)
    return -1; /* no such segment: nothing to take */
  atomic_llong *v = &c->slot[1 + (long long)layer * c->segments + segment];
  long long old = atomic_load_explicit(v, memory_order_relaxed);
  for (;;) {
    const long long front = old & 0xffffffffLL, from_back = old >> 32;
    if (front + from_back >= len) return -1;
    if (atomic_compare_exchange_weak_explicit(v, &old, old + (back ? 1LL << 32 : 1), memory_order_relaxed,
                                              memory_order_relaxed))
      return back ? from_back : front;
  }
}

int pp_dist_claim_stop(pp_dist_claim *c) {
  if (pp_stop_requested(NULL)) {
    atomic_store_explicit(&c->slot[0], 1, memory_order_relaxed);
    return 1;
  }
  return atomic_load_explicit(&c->slot[0], memory_order_relaxed) != 0;
}
