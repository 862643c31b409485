/*
 * graph.h - the model graph: layers (nodes), their TMPCs per tensor-parallel
 * degree, and the edges between them, in the public Piper JSON format.
 *
 * Nodes are numbered 0..n-1 in the order of the input's "nodes" array (that
 * order breaks ties, as in the reference planner).  Edges keep input order.
 * Every TMPC stores its sync times as arrays aligned with its node's in-edge
 * and out-edge lists, so the cost model never looks anything up by id.
 */
#ifndef PIPER_GRAPH_H
#define PIPER_GRAPH_H

#include <stdio.h>

#include "piper/error.h"
#include "piper/sha256.h"

/* The id the reference gives to the TMPC that recomputes activations. */
#define PP_RECOMPUTE_TMPC_ID "activation recomp"

typedef struct pp_tmpc {
  char *id;               /* non-empty, unique per (node, t) */
  double time_per_sample; /* seconds per sample, forward + backward */
  double parameter_size;  /* bytes of weights held by one device */
  double mem_a, mem_b;    /* memory = mem_a * y + mem_b bytes */
  double *sync_fw;        /* [node.in_deg]: sync bytes per in-edge */
  double *sync_bw;        /* [node.out_deg]: sync bytes per out-edge */
  int is_recompute;       /* id == PP_RECOMPUTE_TMPC_ID */
  /* Optional parts of mem_b that scale with the parameters (ZeRO shards
   * them over the data-parallel replicas); 0 where not given. */
  double weight_bytes, gradient_bytes, optimizer_bytes;
  int parts; /* PP_PART_* bits: the parts the input gives */
} pp_tmpc;

/* Bits of pp_tmpc.parts. */
#define PP_PART_WEIGHT    1 /* weightBytes */
#define PP_PART_GRADIENT  2 /* gradientBytes */
#define PP_PART_OPTIMIZER 4 /* optimizerBytes */

typedef struct pp_tmpc_list {
  int t;          /* tensor-parallel degree >= 1 */
  int count;      /* number of TMPCs (may be 0) */
  pp_tmpc *tmpcs; /* [count] */
} pp_tmpc_list;

typedef struct pp_node {
  long long orig_id;   /* "id" in the input */
  char *name;          /* "name" in the input, or NULL */
  int n_lists;         /* number of tensor-parallel degrees given */
  pp_tmpc_list *lists; /* [n_lists], sorted by t */
  int in_deg, out_deg;
  int *in_edges;  /* [in_deg] edge indices, input order */
  int *out_edges; /* [out_deg] edge indices, input order */
} pp_node;

typedef struct pp_edge {
  int src, dst; /* node indices */
  double cost;  /* communicationCost: bytes per sample */
} pp_edge;

typedef struct pp_graph {
  int n_nodes;
  pp_node *nodes; /* [n_nodes] */
  int n_edges;
  pp_edge *edges; /* [n_edges] */
  /* Top-level values from the file (may be overridden by a pp_problem). */
  double max_memory; /* maxMemoryPerDevice, bytes */
  long long max_devices;
  double bandwidth;       /* bytes per second */
  long long microbatches; /* mbsInBatch */
  /* Optional top-level values, 0 when absent: model FLOPs of one sample
   * (forward + backward, recomputation not counted), tokens of one sample,
   * peak FLOP/s of one device. */
  double flops_per_sample;
  double tokens_per_sample;
  double peak_flops;
  long long devices_per_node; /* devicesPerNode, 0 if absent */
  double intra_bandwidth;     /* intraNodeBandwidth, bytes per second, 0 if absent */
  /* Distinct tensor-parallel degrees that occur anywhere, ascending. */
  int n_degrees;
  int *degrees;
  char *source_path; /* file the graph was read from ("-" for stdin) */
  char *source_text; /* the file's bytes, NUL-terminated (for archives) */
  size_t source_len;
  pp_sha256 source_sha; /* SHA-256 state after source_text (copied, continued: pp_archive_identity) */
} pp_graph;

/* Largest input file accepted, in bytes (real graphs are a few MB). */
#define PP_GRAPH_MAX_INPUT_BYTES ((size_t)1 << 30)

/* Reads and validates a graph from path ("-" reads standard input, named
 * "<stdin>" in messages).  On success returns PP_OK and *out owns a new graph
 * (free with pp_graph_free).  On failure returns PP_ERR_INPUT (also when the
 * file cannot be opened or read, or is larger than PP_GRAPH_MAX_INPUT_BYTES),
 * *out is NULL and err names the file and the line/column (syntax) or the
 * JSON path (meaning) of the problem.  Warnings (e.g. a node without a TMPC
 * for t = 1) go to warn if it is not NULL. */
pp_status pp_graph_load_file(const char *path, FILE *warn, pp_graph **out, pp_error *err);

/* The bytes of the regular file at path, if they can be had at once: the
 * file opens, holds at most PP_GRAPH_PLAIN_BYTES bytes and no NUL byte, and
 * reads whole.  Then returns 1 and *buf (NUL-terminated, caller frees) and
 * *len hold them; otherwise returns 0 and allocates nothing (standard
 * input, a device, a pipe, a larger file...): pp_graph_load_file streams
 * those and says what is wrong with them.  pp_graph_load_buffer on these
 * bytes accepts and rejects what pp_graph_load_file on the file does. */
#define PP_GRAPH_PLAIN_BYTES ((size_t)64 << 20)
int pp_graph_read_plain(const char *path, char **buf, size_t *len);

/* The same, from a buffer of len bytes; name is used in messages. */
pp_status pp_graph_load_buffer(const char *name, const char *buf, size_t len, FILE *warn, pp_graph **out,
                               pp_error *err);

/* Frees a graph; accepts NULL. */
void pp_graph_free(pp_graph *g);

/* Structural checks done after parsing: edges between existing nodes, no
 * duplicates or self-loops, acyclic.  Returns PP_ERR_INPUT with a message
 * naming the offending edge.  Exposed for tests. */
pp_status pp_graph_check_structure(const pp_graph *g, pp_error *err);

/* Writes the SHA-256 of g's input file (source_text) as 64 lowercase hex
 * digits and a NUL into hex[65]; from the state kept when it was read. */
void pp_graph_input_sha256(const pp_graph *g, char hex[65]);

/* Returns the TMPC list of node v for degree t, or NULL if there is none. */
const pp_tmpc_list *pp_graph_tmpcs(const pp_graph *g, int v, int t);

/* The PP_PART_* bits that ZeRO stage zero (0..3) shards: 1 the optimizer
 * state, 2 also the gradients, 3 also the weights. */
int pp_zero_parts(int zero);

/* Returns PP_OK if every TMPC gives the parts that ZeRO stage zero shards,
 * else PP_ERR_INPUT with a message naming the file and the JSON path of the
 * first TMPC (input order) that lacks one. */
pp_status pp_graph_check_zero(const pp_graph *g, int zero, pp_error *err);

/* Returns PP_OK if no node has TMPCs for a tensor-parallel degree above
 * devices_per_node, else PP_ERR_INPUT naming the file, the JSON path of the
 * first such TMPC list, and origin (what set devices_per_node, e.g.
 * "devicesPerNode" or "--devices-per-node"). */
pp_status pp_graph_check_node_size(const pp_graph *g, long long devices_per_node, const char *origin,
                                   pp_error *err);

/* Returns a printable label for node v: its name, else its id. Static
 * storage is not used: buf (of size n) is filled and returned. */
const char *pp_graph_node_label(const pp_graph *g, int v, char *buf, size_t n);

#endif /* PIPER_GRAPH_H */
