/*
 * dist.h - distribution over MPI: the only module that calls MPI.
 *
 * A pp_dist wraps a communicator (pp_dist_world, pp_dist_split), or none
 * when the process runs without MPI (one rank, local collectives).  What
 * rank 0 alone makes (the input graph, the downsets, a plan, a checkpoint's
 * tables, the archive's temporary name and layout, a sweep's done flags)
 * reaches the other ranks one way: pp_dist_from_root.  The DP then runs
 * layer by layer (downsets of equal size) with the layer driver: each
 * layer's work is split across the working ranks (pp_dist_workers: as many
 * per node as it has cores) by estimated cost; the working ranks of a node
 * keep one copy of the tables in shared memory, and only the node leaders
 * exchange the new tables between nodes; ranks that do not work hold none
 * and wait until the end.
 *
 * Conventions: functions marked "collective" must be called by every rank
 * of the communicator, in the same order; those marked "local" never
 * communicate.  MPI's default error handler is kept, so an MPI failure
 * aborts the job rather than returning; statuses returned are piper's own
 * failures, agreed among the ranks where the comment says so.
 */
#ifndef PIPER_DIST_H
#define PIPER_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "piper/dp.h"
#include "piper/downsets.h"
#include "piper/error.h"
#include "piper/graph.h"
#include "piper/layer.h"
#include "piper/pack.h"
#include "piper/problem.h"

typedef struct pp_dist pp_dist;

/* Initialises MPI for the process (MPI_Init) if use_mpi (main sets it when
 * an MPI launcher started the process); otherwise does nothing, and the
 * process runs alone without MPI: pp_dist_world is then one rank whose
 * collectives are local and whose pp_dist_comm_handle is NULL.  Returns 0
 * on success, -1 if MPI_Init failed.  Before MPI_Init, on a host that shows
 * no fabric device (pp_fabric_visible) and with neither OMPI_MCA_pml nor
 * OMPI_MCA_mtl set, sets OMPI_MCA_pml=ob1 in the environment: Open MPI then
 * skips its probe of the PSM/PSM2/OFI fabrics and its start of UCX, which
 * would find no transport, and takes the layer it would have chosen anyway.
 * Call once, from main, before anything else. */
int pp_dist_init_process(int *argc, char ***argv, int use_mpi);

/* Ends the whole job with exit status code: MPI_Abort over the world when
 * MPI is running (every rank ends and the launcher exits with code), else
 * _exit(code).  The fatal hook main gives pp_set_fatal_hook. */
void pp_dist_abort_all(int code);

/* Finalises MPI (MPI_Finalize) if it was initialised, after setting
 * TCP_NODELAY on the process's TCP sockets (pp_tcp_nodelay_all: the
 * launcher's, whose last answer would otherwise come some 40 ms late);
 * call once at the end of main. */
void pp_dist_finalize_process(void);

/* Collective over MPI_COMM_WORLD: wraps the world communicator and decides
 * which ranks work (pp_dist_workers; every rank if all_ranks_work, else as
 * many per node as it has cores); without MPI, the single process.
 * Never fails (MPI's default error handler aborts); caller frees with
 * pp_dist_free. */
pp_dist *pp_dist_world(int all_ranks_work);

/* Collective over d (it frees communicators): releases d's shared tables
 * (pp_dist_release_tables), the working ranks' communicator and, for a
 * pp_dist_split group, its communicator; then d.  Accepts NULL. */
void pp_dist_free(pp_dist *d);

/* Collective over d: splits its ranks into groups of equal color (ordered
 * by key, then rank), like MPI_Comm_split; returns this rank's group as a
 * new pp_dist (caller frees; it frees its communicator).  Without MPI, a
 * copy of the single process. */
pp_dist *pp_dist_split(pp_dist *d, int color, int key);

/* For tests of the exchange between nodes on one machine: the working
 * ranks of each node keep their shared tables as if the node were several
 * nodes of n working ranks (n <= 0: the real nodes).  Not collective, but
 * every rank must set the same n before the first DP on d (and on the
 * groups pp_dist_split makes from it afterwards, which inherit it). */
void pp_dist_emulate_node_size(pp_dist *d, int n);

/* For tests of the fallback: with on, the working ranks of each node keep
 * their shared tables in MPI windows (MPI_Win_allocate_shared), as they do
 * where the node's processes cannot share blocks of their own
 * (pp_shared_pages).  Not collective, but every rank must set the same
 * before the first DP on d (the groups pp_dist_split makes from it
 * afterwards inherit it). */
void pp_dist_use_mpi_windows(pp_dist *d, int on);

/* This process's rank in d and the number of ranks (0 and 1 without MPI).
 * Local, never fail. */
int pp_dist_rank(const pp_dist *d);
int pp_dist_size(const pp_dist *d);

/* The ranks that take DP work: on each node as many as it has cores (all
 * with all_ranks_work in pp_dist_world).  Rank 0 always works.  The others hold no
 * tables.  pp_dist_worker is this rank's index among them, or -1. */
int pp_dist_workers(const pp_dist *d);
int pp_dist_worker(const pp_dist *d);

/* Address of the MPI_Comm, for HDF5's MPI-IO driver (archive module); NULL
 * when the process runs without MPI or d has a single rank (write with the
 * serial driver then: the same file, without MPI-IO's overhead). */
const void *pp_dist_comm_handle(const pp_dist *d);

/* Collective: combines the status of every rank.  If any rank failed, every
 * rank returns the failure of the lowest failing rank, with its message in
 * err (err may be NULL).  Returns PP_OK if all succeeded.  The wait is
 * non-blocking with sleeps, so a rank that arrives early leaves its core
 * to the others. */
pp_status pp_dist_agree(pp_dist *d, pp_status local, pp_error *err);

/* Collective: rank 0 reads the input graph's file and sends its bytes;
 * every rank parses them, rank 0 too, side by side (pp_dist_to_all, for a
 * regular file read at once: pp_graph_read_plain), or rank 0 parses the
 * file as a stream first (standard input, a device, a large file) and the
 * others the text it read (warnings to warn on rank 0, may be NULL).
 * Returns PP_OK and a new graph in *out (caller frees with
 * pp_graph_free), or, on every rank, rank 0's failure (PP_ERR_INPUT,
 * naming the file and line or JSON path, see pp_graph_load_file) and
 * *out = NULL. */
pp_status pp_dist_load_graph(pp_dist *d, const char *path, FILE *warn, pp_graph **out, pp_error *err);

/* Collective: rank 0 enumerates the downsets of g (at most max_count, and
 * within max_bytes unless 0: see pp_downsets_enumerate_within) and every
 * rank receives them (pp_dist_from_root).
 * Returns PP_OK and *out (caller frees with pp_downsets_free), or, on every
 * rank, the failure (PP_ERR_LIMIT for too many downsets) and *out =
 * NULL. */
pp_status pp_dist_downsets(pp_dist *d, const pp_graph *g, long long max_count, double max_bytes,
                           pp_downsets **out, pp_error *err);

/* Statistics of a distributed DP run (per rank; see pp_layer_stats). */
typedef pp_layer_stats pp_dist_stats;

/* Collective: runs the DP from layer first_layer (1 unless resuming; the
 * tables of earlier layers must be set) to the end with the layer driver
 * (pp_layer_run): the working ranks split each layer, exchange the new
 * tables among themselves and install them; with one working rank this is
 * exactly pp_dp_solve.  With several, the working ranks of a node keep one
 * copy of the tables in memory they share (MPI_Win_allocate_shared): the
 * first of them on each node installs the tables and the only exchange
 * between nodes is among these; free it with pp_dist_release_tables after
 * dp.  After each layer, calls layer_done on every
 * working rank; its status, like every layer's, is agreed among them, so
 * that all leave the loop in the same layer.  Ranks that are not workers
 * (pp_dist_worker < 0) take no part and keep no tables.  If a stop was
 * requested (pp_stop_requested on a working rank), stops after the current
 * layer and returns PP_ERR_INTERRUPTED.  Returns, on every rank, the
 * agreed status.  Progress is reported by rank 0.  stats: this rank's. */
pp_status pp_dist_solve(pp_dist *d, pp_dp *dp, const pp_graph *g, const pp_problem *p, const pp_downsets *ds,
                        int first_layer, pp_progress_fn progress, void *progress_user,
                        pp_layer_done_fn layer_done, void *layer_user, pp_dist_stats *stats, pp_error *err);

/* Collective over the working ranks: frees the node's shared table memory
 * that pp_dist_solve and pp_dist_install created (a no-op if there is
 * none).  Call after freeing the pp_dp that views it, before the next
 * problem is solved on d; pp_dist_free calls it too. */
void pp_dist_release_tables(pp_dist *d);

/* Bytes of table blocks in the shared memory of this rank's node (0 if
 * none).  Local. */
double pp_dist_shared_bytes(const pp_dist *d);

/* Collective: installs complete tables (k = 0..K, packed with
 * pp_stairs_pack, the same bytes on every rank) of the downsets a..b-1 in
 * the working ranks' dp (e.g. the ones read from a checkpoint): the
 * install step of pp_dist_solve.  Returns the agreed status: PP_OK or
 * bad_code with a message starting with what (pp_layer_install). */
pp_status pp_dist_install(pp_dist *d, pp_dp *dp, int a, int b, int K, const char *buf, size_t len,
                          pp_status bad_code, const char *what, pp_error *err);

/* "Rank 0 produces, all agree, broadcast": rank 0 calls produce, which
 * makes its object (kept in user) and packs it into out, or leaves out
 * alone when it is NULL (one rank: nobody to send to).  Its status is
 * agreed; on failure every rank returns it.  Then rank 0's bytes reach
 * every rank and each other rank calls consume on them to make its copy;
 * that status is agreed too.  Collective.  Returns PP_OK or the agreed
 * failure with its message in err.  Whatever produce or consume made is in
 * user, owned by the caller, also after a failure (free it then).  The
 * bytes are freed before returning.  With one rank, or without MPI, this is
 * produce(user, NULL, err) alone.  The one way piper broadcasts. */
typedef pp_status (*pp_dist_produce_fn)(void *user, pp_pack *out, pp_error *err);
typedef pp_status (*pp_dist_consume_fn)(void *user, pp_unpack *in, pp_error *err);
pp_status pp_dist_from_root(pp_dist *d, pp_dist_produce_fn produce, pp_dist_consume_fn consume, void *user,
                            pp_error *err);

/* pp_dist_from_root, except that rank 0, too, calls consume on the bytes it
 * produced (when there are other ranks), side by side with them: for an
 * object whose bytes are quick to produce and slow to consume (the input
 * graph's text, whose parse takes as long on every rank), so that rank 0
 * does not make it before the others start.  Collective; the same contract
 * otherwise. */
pp_status pp_dist_to_all(pp_dist *d, pp_dist_produce_fn produce, pp_dist_consume_fn consume, void *user,
                         pp_error *err);

/* Collective: the sum / maximum of x over the ranks of d (for reports),
 * returned on every rank; x itself with one rank. */
double pp_dist_sum(pp_dist *d, double x);
double pp_dist_max(pp_dist *d, double x);

/* Collective: gathers a short string from every rank to every rank:
 * returns a new array of pp_dist_size(d) strings, each in width bytes
 * (truncated to width - 1 and NUL-terminated; rank r's at r * width;
 * caller frees the array).  Never fails (allocation failure is fatal). */
char *pp_dist_allgather_names(pp_dist *d, const char *mine, int width);

/* Notes to rank 0, not collective: pp_dist_note_send (any rank but 0)
 * sends one number to rank 0 of d and returns at once (a small message);
 * rank 0 takes them in arrival order, pp_dist_note_poll without waiting (1
 * and *value if one was there, else 0) or pp_dist_note_wait blocking.  The
 * caller's protocol says how many to expect.  No-ops without MPI. */
void pp_dist_note_send(pp_dist *d, double value);
int pp_dist_note_poll(pp_dist *d, double *value);
double pp_dist_note_wait(pp_dist *d);

/* Collective: returns when every rank of d has called it, sleeping (1 ms
 * at a time) meanwhile instead of spinning, so that ranks done early leave
 * the cores to those still working. */
void pp_dist_wait_all(pp_dist *d);

#endif /* PIPER_DIST_H */
