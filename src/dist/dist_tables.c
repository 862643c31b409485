/*
 * dist_tables.c - one copy of the DP tables per node (see
 * include/piper/dist.h, pp_dist_solve).
 *
 * The working ranks of a node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED)
 * keep the tables in MPI-3 shared memory (MPI_Win_allocate_shared), each
 * table once, as a position-independent block (pp_stairs_flat_write), and
 * every rank of the node reads it through its own header
 * (pp_dp_view_table).  Per layer:
 *   - the sizes, stop flags and times go to every working rank (a small
 *     all-gather);
 *   - the packed parts of a node's ranks are all-gathered within the node;
 *   - the node leaders (one rank per node) all-gather their nodes' parts,
 *     the only traffic between nodes, and broadcast them within the node;
 *   - the node's ranks split the layer's downsets into ranges of about
 *     equal bytes; each joins the parts of its range and writes the tables
 *     into the node's window, after those of the ranks before it; then all
 *     view them all.
 * The tables are the ones every rank computed before (the same parts,
 * joined in the same order), so the answer does not depend on the number of
 * ranks or nodes; who joins and writes a table changes only the time.
 * Memory per node: one copy of the tables, plus per rank its scratch and
 * one layer's received parts.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"

/* New windows hold at least this much (or the layer, or half of what the
 * node already holds): few windows, and no page is touched before use. */
#define MIN_WINDOW ((size_t)64 << 20)

struct pp_dist_tables {
  MPI_Comm node; /* the working ranks of this node */
  int node_rank, node_size;
  MPI_Comm leaders; /* the node leaders (node_rank 0); MPI_COMM_NULL elsewhere */
  int n_nodes;      /* number of nodes (leaders) */
  int *node_worker; /* [node_size] worker index of each rank of the node */
  int *node_of;     /* [workers] node index of each working rank */
  MPI_Win *wins;    /* the node's windows, oldest first */
  char **bases;     /* their addresses in this process */
  int n_wins, cap_wins;
  size_t used, size;    /* bytes used and allocated in the newest window */
  double held;          /* bytes of table blocks in all windows */
  int *counts, *displs; /* [max(node_size, n_nodes)] scratch */
  char *nbuf, *abuf;    /* leader: the node's parts, every node's parts */
  size_t ncap, acap;
};

/* Collective over the working ranks. */
static pp_dist_tables *tables_new(pp_dist *d) {
  pp_dist_tables *t = pp_xcalloc(1, sizeof *t);
  MPI_Comm_split_type(d->wcomm, MPI_COMM_TYPE_SHARED, d->worker, MPI_INFO_NULL, &t->node);
  MPI_Comm_rank(t->node, &t->node_rank);
  if (d->node_group > 0) { /* emulated smaller nodes (still sharing memory): tests of the leaders' path */
    MPI_Comm part;
    MPI_Comm_split(t->node, t->node_rank / d->node_group, t->node_rank, &part);
    MPI_Comm_free(&t->node);
    t->node = part;
    MPI_Comm_rank(t->node, &t->node_rank);
  }
  MPI_Comm_size(t->node, &t->node_size);
  MPI_Comm_split(d->wcomm, t->node_rank == 0 ? 0 : MPI_UNDEFINED, d->worker, &t->leaders);
  int node_index = 0;
  if (t->leaders != MPI_COMM_NULL) {
    MPI_Comm_rank(t->leaders, &node_index);
    MPI_Comm_size(t->leaders, &t->n_nodes);
  }
  int meta[2] = {node_index, t->n_nodes};
  MPI_Bcast(meta, 2, MPI_INT, 0, t->node);
  t->n_nodes = meta[1];
  t->node_worker = pp_xmalloc(sizeof(int) * (size_t)t->node_size);
  MPI_Allgather(&d->worker, 1, MPI_INT, t->node_worker, 1, MPI_INT, t->node);
  t->node_of = pp_xmalloc(sizeof(int) * (size_t)d->workers);
  MPI_Allgather(&meta[0], 1, MPI_INT, t->node_of, 1, MPI_INT, d->wcomm);
  const int n = t->node_size > t->n_nodes ? t->node_size : t->n_nodes;
  t->counts = pp_xmalloc(sizeof(int) * (size_t)n);
  t->displs = pp_xmalloc(sizeof(int) * (size_t)n);
  return t;
}

pp_dist_tables *pp_dist_tables_of(pp_dist *d) {
  if (!d->tables) d->tables = tables_new(d);
  return d->tables;
}

void pp_dist_release_tables(pp_dist *d) {
  pp_dist_tables *t = d->tables;
  if (!t) return;
  for (int i = 0; i < t->n_wins; i++) {
    MPI_Win_unlock_all(t->wins[i]);
    MPI_Win_free(&t->wins[i]);
  }
  free(t->wins);
  free(t->bases);
  MPI_Comm_free(&t->node);
  if (t->leaders != MPI_COMM_NULL) MPI_Comm_free(&t->leaders);
  free(t->node_worker);
  free(t->node_of);
  free(t->counts);
  free(t->displs);
  free(t->nbuf);
  free(t->abuf);
  free(t);
  d->tables = NULL;
}

MPI_Comm pp_dist_tables_node(pp_dist_tables *t, int *node_size, const int **node_of, int *n_nodes) {
  *node_size = t->node_size;
  *node_of = t->node_of;
  *n_nodes = t->n_nodes;
  return t->node;
}

double pp_dist_shared_bytes(const pp_dist *d) { return d->tables ? d->tables->held : 0; }

static void grow(char **buf, size_t *cap, size_t need) {
  if (need < *cap) return;
  free(*buf);
  *cap = need + 1;
  *buf = pp_xmalloc(*cap);
}

void pp_dist_tables_gather(pp_dist *d, const long long *info, const char *buf, size_t len, const char **rbuf,
                           size_t *rlen) {
  pp_dist_tables *t = pp_dist_tables_of(d);
  MPI_Request req;
  long long nsum = 0, sum = 0;
  for (int i = 0; i < t->node_size; i++) {
    t->counts[i] = (int)info[3 * t->node_worker[i]];
    t->displs[i] = (int)nsum;
    nsum += info[3 * t->node_worker[i]];
  }
  for (int w = 0; w < d->workers; w++) sum += info[3 * w];
  grow(&t->nbuf, &t->ncap, (size_t)nsum);
  MPI_Iallgatherv(buf, (int)len, MPI_BYTE, t->nbuf, t->counts, t->displs, MPI_BYTE, t->node, &req);
  pp_dist_wait_quietly(&req);
  *rbuf = t->nbuf;
  *rlen = (size_t)nsum;
  if (t->n_nodes == 1) return;
  grow(&t->abuf, &t->acap, (size_t)sum);
  if (t->node_rank == 0) { /* the leaders exchange their nodes' parts */
    for (int j = 0; j < t->n_nodes; j++) t->counts[j] = 0;
    for (int w = 0; w < d->workers; w++) t->counts[t->node_of[w]] += (int)info[3 * w];
    for (int j = 0, at = 0; j < t->n_nodes; j++) {
      t->displs[j] = at;
      at += t->counts[j];
    }
    MPI_Iallgatherv(t->nbuf, (int)nsum, MPI_BYTE, t->abuf, t->counts, t->displs, MPI_BYTE, t->leaders, &req);
    pp_dist_wait_quietly(&req);
  }
  MPI_Ibcast(t->abuf, (int)sum, MPI_BYTE, 0, t->node, &req); /* and pass them on within the node */
  pp_dist_wait_quietly(&req);
  *rbuf = t->abuf;
  *rlen = (size_t)sum;
}

/* The leader's sink: keeps the joined tables of the layer until their size
 * is known. */
typedef struct held {
  const pp_dp *dp;
  int a, n;
  pp_stairs **tab; /* [b - a] */
  size_t bytes;
} held;

static pp_status hold(void *user, int id, pp_stairs *table, pp_error *err) {
  held *h = user;
  pp_dp_index_table(h->dp, table);
  h->tab[id - h->a] = table;
  h->bytes += pp_stairs_flat_bytes(table);
  h->n++;
  return PP_OK;
}

/* Collective over the node: a window with room for need more bytes. */
static void ensure_room(pp_dist_tables *t, size_t need) {
  if (t->n_wins > 0 && t->size - t->used >= need) return;
  size_t size = need > MIN_WINDOW ? need : MIN_WINDOW;
  if ((double)size < t->held / 2) size = (size_t)(t->held / 2);
  size = (size + 4095) & ~(size_t)4095;
  if (t->n_wins == t->cap_wins) {
    t->cap_wins = t->cap_wins ? 2 * t->cap_wins : 8;
    t->wins = pp_xrealloc(t->wins, sizeof *t->wins * (size_t)t->cap_wins);
    t->bases = pp_xrealloc(t->bases, sizeof *t->bases * (size_t)t->cap_wins);
  }
  MPI_Win win;
  void *mine;
  MPI_Win_allocate_shared(t->node_rank == 0 ? (MPI_Aint)size : 0, 1, MPI_INFO_NULL, t->node, &mine, &win);
  MPI_Aint got;
  int unit;
  void *base;
  MPI_Win_shared_query(win, 0, &got, &unit, &base);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
  t->wins[t->n_wins] = win;
  t->bases[t->n_wins] = base;
  t->n_wins++;
  t->used = 0;
  t->size = size;
}

/* Writes the held tables at base, one after the other. */
static void write_blocks(const held *h, char *base) {
  size_t at = 0;
  for (int i = 0; i < h->n; i++) {
    pp_stairs_flat_write(h->tab[i], base + at);
    at += pp_stairs_flat_bytes(h->tab[i]);
  }
}

/* Collective over the node: every rank's status and table bytes, in
 * got[2 * node_size]. */
static void share_sizes(pp_dist_tables *t, pp_status st, size_t bytes, unsigned long long *got) {
  unsigned long long my[2] = {(unsigned long long)st, bytes};
  MPI_Request req;
  MPI_Iallgather(my, 2, MPI_UNSIGNED_LONG_LONG, got, 2, MPI_UNSIGNED_LONG_LONG, t->node, &req);
  pp_dist_wait_quietly(&req);
}

/* The node's ranks share the install: each joins the downsets of its
 * range (pp_layer_install_cuts: about equal bytes) and writes them into
 * the node's window after those of the ranks before it, so that the
 * layer's tables lie in id order; once all have written, every rank views
 * them all. */
pp_status pp_dist_tables_install(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                                 pp_status bad_code, const char *what, pp_error *err) {
  pp_dist_tables *t = pp_dist_tables_of(d);
  const int m = b - a, me = t->node_rank;
  int *cut = pp_xmalloc(sizeof(int) * ((size_t)t->node_size + 1));
  unsigned long long *got = pp_xmalloc(sizeof *got * 2 * (size_t)t->node_size);
  pp_layer_install_cuts(buf, len, a, b, t->node_size, cut);
  held h = {dp, cut[me], 0, pp_xcalloc((size_t)(cut[me + 1] - cut[me]) + 1, sizeof(pp_stairs *)), 0};
  pp_status st =
      pp_layer_install_range(buf, len, a, b, cut[me], cut[me + 1], K, dp, hold, &h, bad_code, what, err);
  share_sizes(t, st, h.bytes, got);
  size_t total = 0, before = 0;
  int failed = 0;
  for (int i = 0; i < t->node_size; i++) {
    failed |= got[2 * i] != PP_OK;
    if (i < me) before += (size_t)got[2 * i + 1];
    total += (size_t)got[2 * i + 1];
  }
  if (failed) {
    st = pp_dist_agree_on(t->node, me, st, err);
  } else {
    ensure_room(t, total); /* collective when a window is added: every rank decides alike */
    MPI_Win win = t->wins[t->n_wins - 1];
    char *base = t->bases[t->n_wins - 1] + t->used;
    write_blocks(&h, base + before);
    MPI_Win_sync(win); /* the writes, then the node's barrier, then the reads */
    MPI_Request req;
    MPI_Ibarrier(t->node, &req);
    pp_dist_wait_quietly(&req);
    MPI_Win_sync(win);
    size_t at = 0;
    for (int i = 0; i < m; i++) {
      pp_dp_view_table(dp, a + i, base + at);
      at += pp_stairs_flat_bytes(pp_dp_table(dp, a + i));
    }
    t->used += total;
    t->held += (double)total;
  }
  for (int i = 0; i < h.n; i++) pp_stairs_free(h.tab[i]);
  free(h.tab);
  free(cut);
  free(got);
  return st;
}
