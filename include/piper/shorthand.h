/*
 * shorthand.h - the plan a framework such as Megatron-LM builds from its
 * parallel sizes (pipeline P, tensor T, data D) and recomputation flag.
 */
#ifndef PIPER_SHORTHAND_H
#define PIPER_SHORTHAND_H

#include <stddef.h>

#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"

typedef struct pp_shorthand {
  int pp, tp, dp; /* pipeline stages, tensor- and data-parallel degree, each >= 1 */
  int recompute;  /* 1: every node uses its "activation recomp" TMPC where it has one; 0: none does */
  int chunks;     /* V model chunks per device (interleaved 1F1B); <= 1: none */
} pp_shorthand;

/* Builds the framework's plan: P stages (P*V chunks with V > 1: chunk c on
 * device group c mod P, as the checker reads virtual stages), all with
 * d = D and t = T.  The
 * layers are split as Megatron-LM does (Shoeybi et al. 2019 / Narayanan et
 * al. 2021; megatron/model/transformer.py: num_layers / P transformer blocks
 * per stage, the embedding on the first stage, final norm and head on the
 * last): when the graph's nodes are named like the generator's ("block.<i>",
 * "block.<i>.attention", "block.<i>.mlp") the blocks are the units split,
 * the nodes before the first block join the first stage and those after the
 * last block the last stage; otherwise every node is a unit, in a
 * topological order (input order first).  U units over P (P*V) stages: the first
 * U mod P stages get one unit more (Megatron requires U mod P = 0; this is
 * the usual extension).  TMPC per node: recompute = 1 picks the TMPC whose
 * id is "activation recomp" if the node has one for t = T, else its first;
 * recompute = 0 picks the first other TMPC.  A degree T the node does not
 * offer is kept for the checker to report.  how (size n) receives one line
 * describing the split.  *out owns a new plan.  PP_ERR_USAGE if P exceeds
 * the number of units or a size is < 1.  Pure. */
pp_status pp_plan_shorthand(const pp_graph *g, const pp_shorthand *s, pp_plan **out, char *how, size_t n,
                            pp_error *err);

#endif /* PIPER_SHORTHAND_H */
