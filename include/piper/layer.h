/*
 * layer.h - the layer-by-layer driver of the DP, and its pure parts.
 *
 * The DP runs over layers of downsets of equal size; the tables of one
 * layer depend only on earlier layers.  Per layer, every participant
 *   1. takes its share of the layer's work (pp_layer_split_items: whole
 *      downsets when the layer is wide, ranges of the device budget k of
 *      every downset when it is narrow);
 *   2. computes it (pp_dp_compute_rows) and packs the parts (pp_stairs_pack;
 *      participants that share memory pack only the parts' tails and keep
 *      the parts: pp_layer_comm.keep);
 *   3. exchanges the packed parts with the others (pp_layer_comm.exchange);
 *   4. installs the whole layer (pp_layer_install: parts grouped by downset
 *      and joined in k order), so that every participant holds the same
 *      tables whatever the number of participants.
 * One driver, pp_layer_run, does this for any pp_layer_comm: the serial
 * one (pp_layer_serial, one participant: pp_dp_solve) and the MPI one in
 * src/dist.  Pure computation here: no MPI, no I/O.
 */
#ifndef PIPER_LAYER_H
#define PIPER_LAYER_H

#include "piper/downsets.h"
#include "piper/dp.h"
#include "piper/error.h"
#include "piper/graph.h"
#include "piper/problem.h"
#include "piper/table.h"

/* ---- work split ---- */

/* One piece of work: the rows k0..k1 of downset id. */
typedef struct pp_layer_item {
  int id, k0, k1;
} pp_layer_item;

/* The division of work among P participants, carried from layer to layer
 * (narrow layers adapt their k-ranges to the times measured). */
typedef struct pp_layer_split pp_layer_split;

/* A split for P >= 1 participants over budgets 0..p->devices, with the
 * work of each budget k first estimated by the number of degree pairs
 * (t, d) that fit in k.  Caller frees with pp_layer_split_free. */
pp_layer_split *pp_layer_split_new(const pp_graph *g, const pp_problem *p, int P);
void pp_layer_split_free(pp_layer_split *s);

/* The items of participant me (0 <= me < P) in the layer of downsets
 * [a, b), whose estimated work is work[id], written to out (room for
 * b - a items); returns their number.  Deterministic: every participant
 * computes the same division, and the items of all participants cover every
 * (id, k) of the layer exactly once.  A layer with at least 2P downsets (or
 * P == 1) is wide: whole downsets, heaviest first, each to the least-loaded
 * participant, each participant's in id order.  Otherwise it is narrow:
 * every downset is cut into P consecutive k-ranges of equal estimated work
 * (some may be empty). */
int pp_layer_split_items(pp_layer_split *s, const double *work, int a, int b, int me, pp_layer_item *out);

/* The items of group `group` (0 <= group < P: the split's participants are
 * then groups) in the layer [a, b), for the `members` participants of the
 * group to take (pp_layer_comm.claim): the items pp_layer_split_items
 * gives the group, cut into consecutive k-ranges only as far as the
 * members need to share them out (when the group has fewer than
 * 4 * members items: until there are at least `members`, or 3 * members
 * if they belong to several downsets, whose estimates may be far off each
 * other, and list scheduling of the estimates is within 5% of an even
 * share, or there are 4 * members).  In id order, each downset's in k
 * order, the list is cut into `members` segments of consecutive items and
 * about equal estimated work (some may be empty): segment j is
 * out[seg[j]] .. out[seg[j + 1] - 1], seg[0] = 0, seg[members] = the
 * number of items.  Member j takes its segment's items from the front and
 * then helps the others from their backs, so that each works on downsets
 * close in id, whose stages repeat more (the stage cache is per process).
 * A list of at most 4 * members items has each segment's items heaviest
 * first instead (ties in id and k order): the helpers get the light ones.
 * out needs room for (b - a) + 4 * members items, seg for members + 1;
 * returns the number of items.  Deterministic; over all groups every
 * (id, k) of the layer exactly once. */
int pp_layer_split_shared(pp_layer_split *s, const double *work, int a, int b, int group, int members,
                          pp_layer_item *out, int *seg);

/* 1 if the last layer split was narrow (split by k-ranges). */
int pp_layer_split_narrow(const pp_layer_split *s);

/* After a narrow layer: scales the estimated work of each participant's
 * k-range so that it matches seconds[P], the time each one measured, so
 * that the next narrow layer evens the measured cost out.  No effect after
 * a wide layer, for P == 1, or when the layer took under 10 ms in all.
 * (The tables do not depend on the split, only the balance does.) */
void pp_layer_split_rebalance(pp_layer_split *s, const double *seconds);

/* After a layer shared within groups (pp_layer_split_shared): for each
 * group whose members each computed one k-range of one downset (rep[q].k_lo
 * <= rep[q].k_hi, the ranges of a group pairwise disjoint), moves estimated
 * work among the group's ranges so that each range's share of their sum
 * matches its member's share of their measured CPU seconds; their sum is kept,
 * so the split among groups is unchanged.  group_of[parts] names each
 * participant's group (NULL: all one group).  No effect for groups of one
 * member or a layer under 2 ms of CPU (summed over the group's members).
 * Every participant that calls it with the
 * same reports gets the same weights; the tables do not depend on them. */
struct pp_layer_report;
void pp_layer_split_learn(pp_layer_split *s, const struct pp_layer_report *rep, int parts,
                          const int *group_of);

/* ---- install ---- */

/* Receives the complete table (k = 0..K) of downset id; takes ownership of
 * table.  Returns PP_OK or a failure, which stops the install. */
typedef pp_status (*pp_table_sink)(void *user, int id, pp_stairs *table, pp_error *err);

/* Reads the packed parts in buf[len] (pp_stairs_pack records, any order),
 * groups them by downset, joins each downset's parts in k order
 * (pp_dp_join of join_dp, the DP they belong to; pp_stairs_join if NULL)
 * and hands every downset's table to sink in ascending id.
 * The parts must cover k = 0..K of every downset a..b-1 exactly once and
 * name no other downset.  Returns PP_OK, or bad_code with a message that
 * starts with what (e.g. "layer 3" or a file name) if the bytes are
 * malformed or the coverage is wrong; the sink's failure otherwise.  On
 * failure no part is leaked; tables already sunk stay with the sink. */
pp_status pp_layer_install(const char *buf, size_t len, int a, int b, int K, const pp_dp *join_dp,
                           pp_table_sink sink, void *user, pp_status bad_code, const char *what,
                           pp_error *err);

/* One packed part of a layer: the table of downset id over the budgets
 * k_first..k_last, in the record buf[at, at + bytes) (pp_stairs_pack). */
typedef struct pp_layer_part {
  int id, k_first, k_last;
  size_t at, bytes;
} pp_layer_part;

/* The parts in buf[len], sorted by downset and budget, checked (by their
 * headers; the arrays are checked when unpacked) to cover k = 0..K of every
 * downset a..b-1 exactly once and to name no other.  Returns a new array
 * of *n parts (caller frees), or NULL with bad_code and a message that
 * starts with what (as pp_layer_install).  Pure. */
pp_layer_part *pp_layer_parts(const char *buf, size_t len, int a, int b, int K, int *n, pp_status bad_code,
                              const char *what, pp_error *err);

/* The index in parts[n] (sorted as pp_layer_parts returns them) of the part
 * of downset id from budget k_first, or -1 if there is none.  Pure. */
int pp_layer_part_index(const pp_layer_part *parts, int n, int id, int k_first);

/* Cuts parts[n] into P consecutive ranges of about equal bytes, one per
 * installer: range i is parts cut[i]..cut[i+1]-1 (cut has P + 1 entries,
 * cut[0] = 0, cut[P] = n; ranges may be empty).  A downset's parts may fall
 * into several ranges (pp_layer_piece).  Deterministic; pure. */
void pp_layer_part_cuts(const pp_layer_part *parts, int n, int P, int *cut);

/* The piece of its downset's table that part i of parts (pp_layer_parts of
 * buf) makes: indexed (pp_dp_index_table of join_dp, NULL for 2bw
 * tables), the part itself when it starts at k = 0 (*skip = 0), else its
 * pp_dp_segment with the seam made from the last rows of the downset's
 * earlier parts (*skip = 1: row 0 is the seam, written by the piece
 * before; or *skip = 0 when the seam lowers none of the part's rows).
 * The pieces of a downset's parts, rows from skip on, are its
 * table (pp_stairs_flat_write_rows writes them side by side).  Returns a
 * new table (caller frees), or NULL with bad_code if a record is
 * malformed.  Pure. */
pp_stairs *pp_layer_piece(const char *buf, const pp_layer_part *parts, int i, const pp_dp *join_dp, int *skip,
                          pp_status bad_code, const char *what, pp_error *err);

/* pp_layer_piece of part i when its table is at hand (part, of the part's
 * downset and budgets; taken: freed or returned) and buf holds, for the
 * parts before it, records whose last rows are theirs (pp_stairs_pack or
 * pp_stairs_pack_tail).  The same piece as pp_layer_piece of the whole
 * records.  Returns NULL (part freed) with bad_code if a record is
 * malformed.  Pure. */
pp_stairs *pp_layer_piece_of(const char *buf, const pp_layer_part *parts, int i, pp_stairs *part,
                             const pp_dp *join_dp, int *skip, pp_status bad_code, const char *what,
                             pp_error *err);

/* A pp_table_sink that sets the table in a pp_dp (user): pp_dp_set_table. */
pp_status pp_layer_sink_dp(void *user, int id, pp_stairs *table, pp_error *err);

/* ---- the driver ---- */

/* What one participant tells the others after computing its share. */
typedef struct pp_layer_report {
  long long bytes; /* packed bytes it contributes */
  int stop;        /* it saw a stop request: 1 after its share, 2 abandoning it (the layer is lost) */
  double seconds;  /* it spent computing */
  int k_lo, k_hi;  /* the one k-range of one downset it computed (k_lo > k_hi: none, or several) */
  double cpu;      /* CPU seconds it spent computing */
} pp_layer_report;

/* How the participants of a run share their work. */
/* A part a participant computed and kept (pp_layer_comm.keep): the table
 * of item it. */
typedef struct pp_layer_kept {
  pp_layer_item it;
  pp_stairs *table;
} pp_layer_kept;

typedef struct pp_layer_comm {
  int parts; /* number of participants, >= 1 */
  int me;    /* this participant's index */
  /* Shared work (claim != NULL): the layer is split among `groups` groups
   * (pp_layer_split_items with P = groups, e.g. the nodes of a cluster) and
   * the members of a group take its items (pp_layer_split_shared, in
   * segments, one per member): claim takes one item of segment `segment`
   * (of len items) of the layer's list for this participant, atomically
   * among the members of its group, from the segment's front (back = 0) or
   * its back (back = 1), and returns its position counted from that end
   * (0, 1, ...), or -1 once every item of the segment is taken.  A member
   * takes from the front of its own segment (the members of a group are
   * numbered by participant index), then from the backs of the others in
   * turn.  group_of[parts] gives each participant's group; members is the
   * size of this one's.  claim NULL: every participant computes the share
   * pp_layer_split_items gives it (P = parts).  The first layer a run
   * computes is always dealt that way (claim is not called in it): small
   * when not resuming, and its allocations then come before whatever
   * set-up the claims need. */
  long long (*claim)(void *self, int layer, int segment, long long len, int back);
  int groups, group, members;
  const int *group_of;
  /* keep = 1: the participants share memory and the install places every
   * participant's own tables there (or there is one participant, whose
   * tables are its own).  Each then keeps the parts it computes (the
   * install's kept[]) and packs only their tails (pp_stairs_pack_tail),
   * which are all the others need of them; keep = 0: it packs the whole
   * parts (pp_stairs_pack). */
  int keep;
  /* Gathers every participant's report into all[parts] and their packed
   * parts (mine: buf[len]) into *rbuf[*rlen] (valid until the next call;
   * concatenated in participant order).  The status must be the same on
   * every participant. */
  pp_status (*exchange)(void *self, int layer, const pp_layer_report *mine, const char *buf, size_t len,
                        pp_layer_report *all, const char **rbuf, size_t *rlen, pp_error *err);
  /* Installs the layer's tables into dp from the received bytes and, with
   * keep, this participant's parts kept[n_kept] (the install may take a
   * table: it sets the entry's table to NULL; the driver frees the rest);
   * NULL: with keep = 0, pp_layer_install with pp_layer_sink_dp; with
   * keep = 1 (one participant), the kept tables, each a whole downset's,
   * are set in dp as they are (pp_dp_set_table).  The
   * status may differ between participants (the driver agrees on it right
   * after). */
  pp_status (*install)(void *self, pp_dp *dp, int a, int b, const char *rbuf, size_t rlen,
                       struct pp_layer_kept *kept, int n_kept, int layer, pp_error *err);
  /* Combines a status over the participants: every one returns the failure
   * of the lowest failing participant (with its message), or PP_OK. */
  pp_status (*agree)(void *self, pp_status local, pp_error *err);
  void *self;
} pp_layer_comm;

/* The single-participant comm: it keeps its tables and sets them in dp as
 * they are (keep = 1, install NULL), the exchange hands back the caller's
 * own bytes (the tails), the agreement is the identity. */
pp_layer_comm pp_layer_serial(void);

/* Called after each completed layer (stopping = 1 when the run stops after
 * it), e.g. to write a checkpoint.  Its status is agreed by the driver. */
typedef pp_status (*pp_layer_done_fn)(void *user, int layer, int stopping, pp_error *err);

/* Optional callbacks of a run (all may be NULL). */
typedef struct pp_layer_hooks {
  pp_progress_fn progress; /* after each layer; after each downset if fine */
  void *progress_user;
  int fine; /* report progress after every downset, not only each layer */
  /* A stop request: poll(poll_user) != 0.  Polled between items and, for
   * the 2bw tables, inside them (pp_dp_set_poll); NULL: never stop. */
  int (*poll)(void *user);
  void *poll_user;
  pp_layer_done_fn layer_done;
  void *layer_user;
} pp_layer_hooks;

/* Statistics of a run, for this participant. */
typedef struct pp_layer_stats {
  double compute_seconds;  /* in pp_dp_compute_rows and packing */
  double exchange_seconds; /* in the exchange and the install */
  double install_seconds;  /* of which in the install */
  double bytes_sent;       /* bytes this participant contributed */
  double bytes_received;   /* bytes the others contributed */
  int layers_done;         /* layers completed (including resumed ones) */
} pp_layer_stats;

/* Runs the DP of dp (over g, p, ds: the ones dp was created with) from
 * layer first_layer (1, or later when resuming: earlier tables must be set)
 * to the end, as participant comm->me.  Every participant leaves in the
 * same layer with the same status: PP_OK; PP_ERR_INTERRUPTED if a
 * participant saw a stop request (hooks->poll): while computing its share,
 * the layer is abandoned by all and layer_done is called for the layer
 * before it (stopping = 1); after its share, the layer is completed first
 * and layer_done called for it (except after the last layer, which
 * finishes the run: PP_OK); or the agreed failure of the exchange, the
 * install or layer_done.  stats may be NULL. */
pp_status pp_layer_run(pp_dp *dp, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                       int first_layer, const pp_layer_comm *comm, const pp_layer_hooks *hooks,
                       pp_layer_stats *stats, pp_error *err);

#endif /* PIPER_LAYER_H */
