/*
 * dist_tables.c - one copy of the DP tables per node (see
 * include/piper/dist.h, pp_dist_solve).
 *
 * The working ranks of a node (MPI_Comm_split_type MPI_COMM_TYPE_SHARED)
 * keep the tables in memory they share (blocks of their own on huge pages,
 * pp_shared_pages, or MPI-3 shared windows where those cannot be), each
 * table once, as a position-independent block (pp_stairs_flat_write), and
 * every rank of the node reads it through its own header
 * (pp_dp_view_table).  Per layer:
 *   - the sizes, stop flags and times go to every working rank (a small
 *     all-gather);
 *   - the packed parts of a node's ranks are all-gathered within the node;
 *   - the node leaders (one rank per node) all-gather their nodes' parts,
 *     the only traffic between nodes, and broadcast them within the node;
 *   - the node's ranks split the layer's parts into ranges of about equal
 *     bytes; each makes the final rows of the parts of its range and writes
 *     them into the node's window; then all view them all.
 * When the working ranks are one node, each keeps the parts it computed
 * and only their tails (pp_stairs_pack_tail) are all-gathered: each rank
 * makes the final rows of its own parts from the tails of the parts before
 * them and writes them into the window (pp_dist_tables_install_kept).
 * The tables are the ones every rank computed before (the same parts,
 * joined in the same order), so the answer does not depend on the number of
 * ranks or nodes; who joins and writes a table changes only the time.
 * Memory per node: one copy of the tables, plus per rank its scratch and
 * one layer's received parts.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "dist_internal.h"
#include "piper/pages.h"

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
  /* The node's windows, oldest first: blocks of memory its ranks share
   * (pp_shared_pages), or, where they cannot, MPI windows. */
  pp_shared_pages *blocks; /* [cap_wins]: window i is this block if it has a base, */
  MPI_Win *wins;           /* else this MPI window (MPI_Win_allocate_shared) */
  char **bases;            /* their addresses in this process */
  int n_wins, cap_wins;
  int mpi_windows;      /* the node's ranks could not share a block (or were told not to): MPI windows */
  size_t used, size;    /* bytes used and allocated in the newest window */
  size_t mapped;        /* bytes of the newest window this rank has mapped in (pp_dist_tables_prefault) */
  char *read_only;      /* the newest window is read-only in this process below this address */
  size_t last_total;    /* bytes the last layer placed */
  double held;          /* bytes of table blocks in all windows */
  int *counts, *displs; /* [max(node_size, n_nodes)] scratch */
  char *nbuf, *abuf;    /* leader: the node's parts, every node's parts */
  size_t ncap, acap;
  int *scratch; /* [scratch_cap]: the headers and row offsets of this rank's pieces (write_pieces) */
  size_t scratch_cap;
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
  t->mpi_windows = d->mpi_windows;
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
    if (t->blocks[i].base) {
      pp_shared_pages_free(&t->blocks[i]);
      continue;
    }
    MPI_Win_unlock_all(t->wins[i]);
    MPI_Win_free(&t->wins[i]);
  }
  free(t->blocks);
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
  free(t->scratch);
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

/* Collective over the node: a block of size bytes that the node's ranks
 * share, made by its first rank and attached by the others (all agree
 * whether each could); returns 0, or -1 with nothing kept if one could
 * not: from then on the node takes MPI windows.  Why blocks of its own:
 * their huge pages (pp_shared_pages_map_in), which MPI's windows do not
 * get where the system keeps shared memory on small pages (Linux's
 * default shmem_enabled = never). */
static int add_block(pp_dist_tables *t, size_t size, pp_shared_pages *b) {
  long long msg[6] = {0, 0, 0, 0, 0, 0}; /* made, bytes, then the handle */
  pp_shared_handle h = {0, 0, 0, 0};
  *b = (pp_shared_pages){.fd = -1};
  if (t->node_rank == 0 && pp_shared_pages_new(size, b, &h) == 0)
    msg[0] = 1, msg[1] = (long long)b->size, msg[2] = h.pid, msg[3] = h.fd, msg[4] = h.dev, msg[5] = h.ino;
  MPI_Bcast(msg, 6, MPI_LONG_LONG, 0, t->node);
  int ok = msg[0] != 0, all = 0;
  if (ok && t->node_rank != 0)
    ok = pp_shared_pages_attach((pp_shared_handle){msg[2], msg[3], msg[4], msg[5]}, (size_t)msg[1], b) == 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, t->node); /* (the maker keeps it open until here) */
  if (all) return 0;
  pp_shared_pages_free(b);
  return -1;
}

/* (the errors of the allocation come back to be reported as out of memory;
 * every other MPI error stays fatal) */
void *pp_dist_node_window(MPI_Comm node, size_t bytes, int unit, MPI_Win *win) {
  int node_rank;
  MPI_Comm_rank(node, &node_rank);
  void *mine, *base;
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  const int rc =
      MPI_Win_allocate_shared(node_rank == 0 ? (MPI_Aint)bytes : 0, unit, MPI_INFO_NULL, node, &mine, win);
  MPI_Comm_set_errhandler(node, MPI_ERRORS_ARE_FATAL);
  if (rc != MPI_SUCCESS) pp_fatal_out_of_memory(bytes);
  MPI_Aint got;
  int got_unit;
  MPI_Win_shared_query(*win, 0, &got, &got_unit, &base);
  MPI_Win_lock_all(MPI_MODE_NOCHECK, *win);
  return base;
}

/* Collective over the node: a window with room for need more bytes. */
static void ensure_room(pp_dist_tables *t, size_t need) {
  if (t->n_wins > 0 && t->size - t->used >= need) return;
  size_t size = need > MIN_WINDOW ? need : MIN_WINDOW;
  if ((double)size < t->held / 2) size = (size_t)(t->held / 2);
  size = (size + 4095) & ~(size_t)4095;
  if (t->n_wins == t->cap_wins) {
    t->cap_wins = t->cap_wins ? 2 * t->cap_wins : 8;
    t->blocks = pp_xrealloc(t->blocks, sizeof *t->blocks * (size_t)t->cap_wins);
    t->wins = pp_xrealloc(t->wins, sizeof *t->wins * (size_t)t->cap_wins);
    t->bases = pp_xrealloc(t->bases, sizeof *t->bases * (size_t)t->cap_wins);
  }
  const int at = t->n_wins;
  if (!t->mpi_windows && add_block(t, size, &t->blocks[at]) == 0) {
    t->bases[at] = t->blocks[at].base;
    size = t->blocks[at].size;
  } else {
    t->mpi_windows = 1; /* (the blocks so far, if any, stay) */
    t->blocks[at] = (pp_shared_pages){.fd = -1};
    t->bases[at] = pp_dist_node_window(t->node, size, 1, &t->wins[at]);
  }
  t->n_wins++;
  t->used = 0;
  t->mapped = 0;
  t->read_only = t->bases[at];
  t->size = size;
}

/* The unit of pp_dist_tables_prefault: on small pages 16 pages, about
 * 65 us of mapping in on the 2-core VM of bench/ (4 us a page), so that a
 * wait ends at most that late (256 KB -> 64 KB: BERT-32 at K = 2048 on 2
 * ranks, the exchange's time beyond the install 29.8 -> 24.9 ms per rank,
 * mean of 31 runs); on a block's huge pages, one of them. */
#define PREFAULT_CHUNK ((size_t)64 << 10)

/* The newest window's block, or NULL if it is an MPI window. */
static pp_shared_pages *newest_block(pp_dist_tables *t) {
  pp_shared_pages *b = &t->blocks[t->n_wins - 1];
  return b->base ? b : NULL;
}

/* The end of what this rank has mapped in of the newest window, or of its
 * finished tables if further. */
static size_t mapped_end(const pp_dist_tables *t) { return t->mapped > t->used ? t->mapped : t->used; }

/* Maps in the newest window's bytes before end that this rank has not
 * mapped in yet (a block's on huge pages, pp_shared_pages_map_in; an MPI
 * window's with pp_map_in); returns 1 if it did, 0 if there were none or
 * the system refused.  place_pieces maps a layer's blocks in with one call
 * before its pieces are written, its own and the other ranks' (which it
 * reads from the next layer on), rather than a call per array of every
 * piece (GNMT at K = 16: 18,000 tables of 1.8 KB on average) and a fault
 * per page of the rest. */
static int map_in_upto(pp_dist_tables *t, size_t end) {
  const size_t from = mapped_end(t);
  pp_shared_pages *b = newest_block(t);
  if (end <= from) return 0;
  if (b ? pp_shared_pages_map_in(b, from, end) != 0
        : pp_map_in(t->bases[t->n_wins - 1] + from, end - from) != 0)
    return 0;
  t->mapped = end;
  return 1;
}

int pp_dist_tables_prefault(pp_dist *d) {
  pp_dist_tables *t = d->tables;
  if (!t || t->n_wins == 0) return 0;
  const pp_shared_pages *b = newest_block(t);
  const size_t step = b && b->huge ? b->huge : PREFAULT_CHUNK;
  const size_t ahead = t->last_total > ((size_t)4 << 20) ? 2 * t->last_total : ((size_t)8 << 20);
  const size_t from = mapped_end(t);
  size_t to = t->used + ahead < t->size ? t->used + ahead : t->size;
  if (to > from + step) to = from + step;
  return map_in_upto(t, to);
}

/* Makes the newest window read-only in this process up to the last whole
 * page of its finished tables (once every rank has written them): a stray
 * write into a finished table faults instead of changing it.  On a block,
 * whole huge pages only (a part of one made read-only would be remapped
 * as small pages).  On an MPI window's small pages, on a virtual machine
 * whose hypervisor shadows the guest's page tables, a first read of a
 * shared page also costs 1.4-1.8 us mapped read-only against 4.2-4.8 us
 * mapped writable (bench/bench_pages.sh), and every rank reads the pages
 * the others wrote. */
static void seal(pp_dist_tables *t) {
  char *end = t->bases[t->n_wins - 1] + t->used;
  const pp_shared_pages *b = newest_block(t);
  t->read_only = pp_pages_read_only(t->read_only, (size_t)(end - t->read_only), b ? b->huge : 0);
}

/* This rank's writes to the newest window, made visible to the node's
 * ranks that read it after a barrier that follows (and the barrier's,
 * before reads that follow it): MPI_Win_sync for an MPI window, a full
 * fence for a block. */
static void sync_window(pp_dist_tables *t) {
  if (newest_block(t))
    atomic_thread_fence(memory_order_seq_cst);
  else
    MPI_Win_sync(t->wins[t->n_wins - 1]);
}

/* Writes this rank's pieces (those of place_pieces) into the layer's
 * blocks at base + off[id - a] (pp_pages_copy).  On small pages (an MPI
 * window, or a block the system would not give huge pages) in one copy by
 * the kernel: the pages they fill are not touched through this process's
 * writable mapping, only read later through a read-only one (seal), which
 * costs about half as much in all on a shadow-paging virtual machine
 * (bench/results-pages.txt: 3.5 against 6.5 us a page written, sealed and
 * read; BERT-32 at K = 2048 on 2 ranks 0.963x the wall time then).  On a
 * block's huge pages, one mapping a 2 MiB page, by memcpy, which runs at
 * about twice the kernel's copy (BERT-32 at K = 2048 on 2 ranks: a rank's
 * install 0.040 -> 0.021 s, bench/results-node.txt). */
static void write_pieces(pp_dist_tables *t, char *base, const size_t *off, int a, int K,
                         const pp_layer_part *parts, int n, const int *idx, pp_stairs *const *piece,
                         const int *skip, int n_mine, const pp_flat_counts *whole,
                         const pp_flat_counts *before) {
  size_t ints = 0;
  for (int x = 0; x < n_mine; x++) ints += pp_stairs_flat_scratch_ints(piece[x], skip[x]);
  if (ints > t->scratch_cap) {
    free(t->scratch);
    t->scratch_cap = 2 * ints;
    t->scratch = pp_xmalloc(sizeof(int) * t->scratch_cap);
  }
  pp_span *spans = pp_xmalloc(sizeof *spans * ((size_t)n_mine * PP_FLAT_SPANS + 1));
  int n_spans = 0;
  int *scratch = t->scratch;
  for (int x = 0; x < n_mine; x++) {
    const int i = idx[x], at = parts[i].id - a, last = i + 1 == n || parts[i + 1].id != parts[i].id;
    n_spans += pp_stairs_flat_spans(piece[x], skip[x], base + off[at], 0, K, whole[at], before[i],
                                    parts[i].k_first == 0, last, scratch, spans + n_spans);
    scratch += pp_stairs_flat_scratch_ints(piece[x], skip[x]);
  }
  const pp_shared_pages *b = newest_block(t);
  pp_pages_copy(spans, n_spans, !(b && b->huge && !b->small));
  free(spans);
}

/* Collective over the node: places this rank's pieces in the node's window
 * and views the layer's tables.  The pieces are those of the parts idx[x]
 * of parts[n] (pp_layer_parts of the layer: sorted, covering a..b-1),
 * piece[x] from row skip[x] on (pp_layer_piece), x < n_mine; the node's
 * ranks together hold every part's piece.  All learn every piece's size,
 * lay the downsets' blocks out in id order, each block's pieces in k
 * order, and each writes its own pieces where they belong; once all have
 * written, every rank views them all.  The blocks are those one rank
 * joining every table would write. */
static void place_pieces(pp_dist_tables *t, pp_dp *dp, int a, int b, int K, const pp_layer_part *parts, int n,
                         const int *idx, pp_stairs *const *piece, const int *skip, int n_mine) {
  const int m = b - a;
  long long *all = pp_xcalloc(3 * (size_t)n + 1, sizeof(long long)); /* rows, steps, fresh of part i at 3 i */
  for (int x = 0; x < n_mine; x++) {
    const pp_flat_counts c = pp_stairs_flat_counts(piece[x], skip[x]);
    all[3 * idx[x]] = (long long)c.rows;
    all[3 * idx[x] + 1] = (long long)c.steps;
    all[3 * idx[x] + 2] = (long long)c.fresh;
  }
  MPI_Request req;
  MPI_Iallreduce(MPI_IN_PLACE, all, 3 * n, MPI_LONG_LONG, MPI_SUM, t->node, &req); /* one rank's each */
  pp_dist_wait_quietly(&req);
  size_t *off = pp_xmalloc(sizeof(size_t) * ((size_t)m + 1));
  pp_flat_counts *whole = pp_xcalloc((size_t)m + 1, sizeof *whole),
                 *before = pp_xmalloc(sizeof *before * ((size_t)n + 1));
  for (int i = 0; i < n; i++) {
    pp_flat_counts *w = &whole[parts[i].id - a];
    before[i] = *w;
    *w = (pp_flat_counts){w->rows + (size_t)all[3 * i], w->steps + (size_t)all[3 * i + 1],
                          w->fresh + (size_t)all[3 * i + 2]};
  }
  size_t total = 0;
  for (int x = 0; x < m; x++) {
    off[x] = total;
    total += pp_stairs_flat_size(whole[x]);
  }
  ensure_room(t, total); /* collective when a window is added: every rank decides alike */
  map_in_upto(t, t->used + total);
  char *base = t->bases[t->n_wins - 1] + t->used;
  write_pieces(t, base, off, a, K, parts, n, idx, piece, skip, n_mine, whole, before);
  sync_window(t); /* the writes, then the node's barrier, then the reads */
  MPI_Ibarrier(t->node, &req);
  pp_dist_wait_quietly(&req);
  sync_window(t);
  for (int x = 0; x < m; x++) pp_dp_view_table(dp, a + x, base + off[x]);
  t->used += total;
  seal(t);
  t->last_total = total;
  t->held += (double)total;
  free(all);
  free(off);
  free(whole);
  free(before);
}

/* The node's ranks share the install: the layer's parts (pp_layer_parts,
 * the same on every rank) are cut into ranges of about equal bytes
 * (pp_layer_part_cuts), so that a downset's parts may fall to several
 * ranks; each rank makes the pieces of its parts (pp_layer_piece: the
 * part's final rows, from the seams of the parts before it) and places
 * them (place_pieces). */
pp_status pp_dist_tables_install(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                                 pp_status bad_code, const char *what, pp_error *err) {
  pp_dist_tables *t = pp_dist_tables_of(d);
  const int me = t->node_rank;
  int n = 0;
  int *cut = pp_xcalloc((size_t)t->node_size + 1, sizeof(int));
  pp_layer_part *parts = pp_layer_parts(buf, len, a, b, K, &n, bad_code, what, err);
  pp_status st = parts ? PP_OK : bad_code; /* (the same on every rank: the same bytes) */
  if (parts) pp_layer_part_cuts(parts, n, t->node_size, cut);
  const int lo = cut[me], hi = cut[me + 1];
  pp_stairs **piece = pp_xcalloc((size_t)(hi - lo) + 1, sizeof *piece);
  int *skip = pp_xcalloc((size_t)(hi - lo) + 1, sizeof(int)),
      *idx = pp_xmalloc(sizeof(int) * ((size_t)(hi - lo) + 1));
  for (int i = lo; i < hi && !st; i++) {
    idx[i - lo] = i;
    if (!(piece[i - lo] = pp_layer_piece(buf, parts, i, dp, &skip[i - lo], bad_code, what, err)))
      st = bad_code;
  }
  st = pp_dist_agree_on(t->node, me, st, err);
  if (!st) place_pieces(t, dp, a, b, K, parts, n, idx, piece, skip, hi - lo);
  for (int i = 0; i < hi - lo; i++) pp_stairs_free(piece[i]);
  free(piece);
  free(skip);
  free(idx);
  free(parts);
  free(cut);
  return st;
}

/* One node: the parts are the node's ranks' own, each rank makes the
 * pieces of the parts it computed (kept), from the seams of the parts
 * before them (the tails in buf), and places them. */
pp_status pp_dist_tables_install_kept(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                                      pp_layer_kept *kept, int n_kept, pp_status bad_code, const char *what,
                                      pp_error *err) {
  pp_dist_tables *t = pp_dist_tables_of(d);
  int n = 0;
  pp_layer_part *parts = pp_layer_parts(buf, len, a, b, K, &n, bad_code, what, err);
  pp_status st = parts ? PP_OK : bad_code; /* (the same on every rank: the same bytes) */
  pp_stairs **piece = pp_xcalloc((size_t)n_kept + 1, sizeof *piece);
  int *skip = pp_xcalloc((size_t)n_kept + 1, sizeof(int)),
      *idx = pp_xmalloc(sizeof(int) * ((size_t)n_kept + 1));
  for (int x = 0; x < n_kept && !st; x++) {
    const pp_layer_item it = kept[x].it;
    idx[x] = pp_layer_part_index(parts, n, it.id, it.k0);
    if (idx[x] < 0 || parts[idx[x]].k_last != it.k1) {
      st = pp_error_set(err, bad_code, "%s: the rows %d..%d of downset %d are not among the layer's parts",
                        what, it.k0, it.k1, it.id);
      break;
    }
    piece[x] = pp_layer_piece_of(buf, parts, idx[x], kept[x].table, dp, &skip[x], bad_code, what, err);
    kept[x].table = NULL;
    if (!piece[x]) st = bad_code;
  }
  st = pp_dist_agree_on(t->node, t->node_rank, st, err);
  if (!st) place_pieces(t, dp, a, b, K, parts, n, idx, piece, skip, n_kept);
  for (int x = 0; x < n_kept; x++) pp_stairs_free(piece[x]);
  free(piece);
  free(skip);
  free(idx);
  free(parts);
  return st;
}
