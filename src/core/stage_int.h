/*
 * stage_int.h - the records behind pp_stage_eval, shared by the three files
 * of the stage cost model and nobody else:
 *   stage_pre.c   per-graph precomputation (degrees, usable TMPCs, their
 *                 numbers and edge weights, per-node dominance facts);
 *   stage.c       the current stage, its per-degree summary, thresholds in y
 *                 and the memo of costs per (t, d, y);
 *   stage_cache.c the slots that keep the summary, the memo and the shared
 *                 greedy's results of recent stages, by node set;
 *   knapsack.c    the TMPC choice for one (stage, t, d, y): the reference's
 *                 greedy, the greedy shared over d, and the exact branch and
 *                 bound.
 */
#ifndef PIPER_STAGE_INT_H
#define PIPER_STAGE_INT_H

#ifndef PIPER_STAGE_MODULE
#error "stage_int.h is private to the stage cost model's files"
#endif

#include <stddef.h>
#include <stdint.h>

#include "stage.h"

/* The numbers of one usable TMPC. */
typedef struct tmpc_num {
  double t, p, a, b; /* time per sample, parameter bytes, memory A and B */
} tmpc_num;

/* Per (node, ti): what pp_stage_set reads, in one place. */
typedef struct vt_info {
  int u0, L;         /* first usable TMPC index and count */
  int nb0, deg;      /* neighbours nb[nb0 .. nb0 + deg) */
  int fast, low;     /* fixed fastest (sync times equal) and smallest TMPC, or -1 */
  int flags;         /* VT_* */
  double mina, minb; /* smallest A and B */
} vt_info;

/* Per (node, ti) under ZeRO: lower bounds on B at every d, as
 * minbz + minz / d (the smallest unsharded and sharded parts). */
typedef struct vt_zero {
  double minbz, minz;
} vt_zero;

/* Flags per (node, ti). */
enum { VT_SYNC_UNIFORM = 1, VT_P_EQUAL = 2 };

/* Per-y state of the shared greedy. */
enum { YS_SUMS = 1, YS_INFEASIBLE = 2, YS_PER_D = 3 };

/* What does not depend on the stage (stage_pre.c). */
typedef struct stage_pre {
  int S;          /* min(N, K) */
  int nt, nd;     /* degrees in use */
  int *tv, *dv;   /* [nt], [nd] */
  int *use_off;   /* [n_nodes * nt + 1] into use_idx */
  int *use_idx;   /* usable TMPC positions within the node's list */
  int max_per_ti; /* most usable TMPCs of one ti over all nodes */
  /* Per usable TMPC u (indexed like use_idx): its numbers, its edge weights
   * 2 (c + sync) (in-edges then out-edges: w[w_off[u] ..]), and per d index
   * its resync and compute terms 4 (d-1) P / d / N and T / d. */
  tmpc_num *un; /* [n_use] */
  int *w_off;
  double *w;
  double *u_rs, *u_cp; /* [n_use * nd] */
  /* Per node: neighbours, in-edge sources then out-edge targets. */
  int *nb_off, *nb;
  vt_info *vt; /* [n_nodes * nt] */
  /* The resync term's factor per (ti, di) over the reference's
   * 4 (d-1) P / (d N B): 1 in the Piper model; ZeRO-3 and a two-level
   * network change it (stage_pre.c).  u_rs includes it. */
  double *rs_f; /* [nt * nd] */
  /* Under ZeRO (zero > 0; NULL otherwise): per usable TMPC its sharded bytes
   * z and unsharded rest bz = B - z, per (u, di) the B it keeps at d,
   * bz + z / d, and per (node, ti) the bounds of vt_zero. */
  int zero;
  double *u_z, *u_bz; /* [n_use] */
  double *u_mb;       /* [n_use * nd] */
  vt_zero *vz;        /* [n_nodes * nt] */
} stage_pre;

/* Per ti, the current stage at a glance (filled by pp_stage_set).  When
 * every node has one TMPC that is fastest for every d (uniform_fast) and one
 * that is smallest for every y (uniform_low), the all-fastest and
 * all-smallest cases need only these sums. */
typedef struct stage_ti {
  int supported;    /* every node has a usable TMPC */
  int uniform_fast; /* sum_t .. sum_fb describe the all-fastest choice */
  int uniform_low;  /* sum_la, sum_lb describe the all-smallest choice */
  int shared;       /* the greedy's choice is shared over d */
  int yf, yinf;     /* all-fastest fits for y <= yf; infeasible for y >= yinf */
  double sum_t, sum_e, sum_p, sum_fa, sum_fb, sum_la, sum_lb;
  double min_a, min_b; /* sums over nodes of the smallest A and B */
  /* under ZeRO: B at d of the all-fastest is sum_fbz + sum_fz / d, of the
   * all-smallest sum_lbz + sum_lz / d, and at least min_bz + min_z / d */
  double sum_fbz, sum_fz, sum_lbz, sum_lz, min_bz, min_z;
} stage_ti;

/* The current stage (stage.c).  ts, done, yfd and yinfd point into the
 * stage's cache slot (stage_cache.c); the rest is the workspace's own. */
typedef struct stage_cur {
  int words;         /* of the node bitsets */
  int m;             /* nodes in the stage */
  int *nodes;        /* [n_nodes]: the first m are the stage's, ascending */
  uint64_t *bits;    /* [words]: the stage's node set */
  unsigned char *on; /* [nt]: the degree indices asked for by the last set-up */
  /* the per-position scratch, rebuilt per ti when a cost is not in the
   * memo: valid for ti when sum_gen[ti] is the workspace's gen */
  uint32_t *sum_gen;   /* [nt] */
  size_t e_stride;     /* max_per_ti + 1 */
  int *eoff;           /* [nt * (n_nodes + 1)]: per ti, offsets of node i's TMPCs */
  int *fk;             /* [nt * (n_nodes + 1)]: the uniformly fastest position per node */
  double *E;           /* [nt * e_stride]: crossing edge bytes per (i, l) */
  stage_ti *ts;        /* [nt]: valid for ti with done[ti] set */
  unsigned char *done; /* [nt] */
  /* under ZeRO the thresholds depend on d: per (ti, di), found once per
   * stage, when memo.ok leaves MEMO_NONE (NULL otherwise) */
  int *yfd, *yinfd; /* [nt * nd] */
} stage_cur;

typedef struct swap {
  double key;
  int i, l; /* node and position */
  int c;    /* index of the swap in the shared greedy's list */
} swap;

/* Per ti, the shared greedy's view of the current stage (shared_prepare). */
typedef struct shared_ws {
  double *fa, *fb;      /* [n_nodes]: A, B of each node's fastest TMPC */
  double *pa, *pb;      /* [positions]: A, B */
  int nc;               /* swaps that can save memory */
  int *c_i, *c_k;       /* [nc]: node and position */
  double *c_dc;         /* [nc]: d-free extra load */
  unsigned char *c_bad; /* [nc]: too small to order reliably */
} shared_ws;

/* The shared greedy's per-ti swaps and per-(ti, y) results (knapsack.c);
 * the results point into the stage's cache slot. */
typedef struct shared_cache {
  shared_ws *ws;              /* [nt] */
  uint32_t *dc_stamp;         /* [nt]: stamp of ws */
  int ys_len;                 /* S + 2 */
  unsigned char *ys_state;    /* [nt * ys_len]: YS_*, or 0 where not known */
  double *ys_t, *ys_e, *ys_p; /* sums of T, E, P over the chosen TMPCs */
} shared_cache;

/* Scratch of one knapsack (knapsack.c), for the prepared (ti, di). */
typedef struct knap_ws {
  int prep_ti, prep_di;
  double *c, *ma, *mb, *mem; /* [positions]: load, A, B, memory at y */
  int *fast, *H, *cur;       /* [n_nodes]: fastest, chosen, exact's current */
  swap *sorter;              /* [positions] */
  double *suf_c, *suf_mem;   /* [n_nodes + 2]: exact's suffix bounds */
} knap_ws;

/* What the memo holds of a row (stage_memo.ok): nothing, only the
 * thresholds (under ZeRO, where they are per (ti, di)), or the row. */
enum { MEMO_NONE = 0, MEMO_THRESHOLDS = 1, MEMO_ROW = 2 };

/* The memo: per (ti, di) a row over y, NaN where not known yet; val, ok
 * and lb point into the stage's cache slot. */
typedef struct stage_memo {
  double *val;
  unsigned char *ok; /* [nt * nd]: MEMO_* */
  double *lb;        /* [nt * nd]: pp_stage_lower_bound, set with the row */
  size_t *off;       /* [nt * nd] */
  int *len;          /* [nt * nd] */
  size_t total;
} stage_memo;

/* The slots of recent stages (stage_cache.c): ways x sets slots, sets a
 * power of two; slot s holds a node set key[s * words ..] and, in arrays
 * of one stride per slot, what the workspace points at while that stage
 * is current. */
typedef struct stage_cache {
  int ways, sets;
  uint64_t *key;           /* [slots * words] */
  unsigned char *used;     /* [slots] */
  unsigned char *mru;      /* [sets]: the way used last */
  size_t n_ti, rows, ys;   /* strides: nt + 1, nt * nd + 1, (nt + 1) * ys_len */
  double *val;             /* [slots * memo.total] */
  unsigned char *ok;       /* [slots * rows] */
  double *lb;              /* [slots * rows] */
  int *yfd, *yinfd;        /* [slots * rows] under ZeRO, else NULL */
  stage_ti *ts;            /* [slots * n_ti] */
  unsigned char *done;     /* [slots * n_ti] */
  unsigned char *ys_state; /* [slots * ys] */
  double *ys_t, *ys_e, *ys_p;
} stage_cache;

struct pp_stage_eval {
  const pp_graph *g;
  const pp_problem *p;
  stage_pre pre;
  stage_cur cur;
  shared_cache sh;
  knap_ws kn;
  stage_memo memo;
  stage_cache cache;
  uint32_t gen; /* stamp of the current set-up */
};

/* The first y at which nothing fits for (ti, di), as the knapsack may
 * lower it (it is found per ti, or per (ti, di) under ZeRO). */
static inline int *pp__stage_yinf(pp_stage_eval *ev, int ti, int di) {
  return ev->pre.zero ? &ev->cur.yinfd[ti * ev->pre.nd + di] : &ev->cur.ts[ti].yinf;
}

/* stage_pre.c */
void pp__stage_pre_init(stage_pre *pre, const pp_graph *g, const pp_problem *p);
void pp__stage_pre_free(stage_pre *pre);
/* The first TMPC of (v, ti) no slower than any other in compute, edge bytes
 * and parameters and clearly faster than any earlier one, or -1; E[l] are
 * the edge bytes of its L usable TMPCs. */
int pp__stage_fastest_for_all_d(const pp_stage_eval *ev, int v, int ti, int L, const double *E);

/* stage_cache.c */
/* Allocates ev's cache within about bytes (one slot at least); memo.total,
 * memo.len and sh.ys_len must be set. */
void pp__stage_cache_alloc(pp_stage_eval *ev, size_t bytes);
void pp__stage_cache_free(pp_stage_eval *ev);
/* Points ev's memo, summaries, thresholds and shared greedy results at the
 * slot of the node set c: its own if c is in the cache (returns 1), else a
 * cleared slot that now holds c (returns 0). */
int pp__stage_cache_enter(pp_stage_eval *ev, const uint64_t *c);

/* knapsack.c */
void pp__knap_alloc(pp_stage_eval *ev);
void pp__knap_free(pp_stage_eval *ev);
/* The knapsack for the current stage at (ti, di, y) under the mode. */
double pp__knap_solve(pp_stage_eval *ev, int ti, int di, int y);
/* The greedy with d-free keys at y for a shared ti; stores the state of y
 * and, if H is not NULL, writes the chosen position per node to H. */
int pp__knap_shared_greedy(pp_stage_eval *ev, int ti, int y, int *H);

#endif /* PIPER_STAGE_INT_H */
