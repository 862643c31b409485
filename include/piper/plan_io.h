/*
 * plan_io.h - reading a plan back from the JSON that `piper plan --format
 * json` (or `piper eval --format json`) prints, and mapping a plan made for
 * one graph onto another by node id and TMPC id.
 */
#ifndef PIPER_PLAN_IO_H
#define PIPER_PLAN_IO_H

#include "piper/error.h"
#include "piper/graph.h"
#include "piper/plan.h"

/* Reads the "stages" array of a plan report from path ("-": standard input)
 * and resolves it against g: every "nodes" entry is a node id of g, "d" and
 * "t" integers >= 1, and "tmpc" maps each of the stage's node ids to the id
 * of one of that node's TMPCs for degree t.  A degree t that a node does not
 * offer is kept (TMPC index 0) for the checker to report.  On success *out
 * owns a new plan (stages in file order, nodes ascending; loads not yet
 * evaluated).  PP_ERR_INPUT naming the file and the JSON path otherwise
 * (syntax, a missing or unknown node or TMPC id, a node in two stages). */
pp_status pp_plan_load_json(const char *path, const pp_graph *g, pp_plan **out, pp_error *err);

/* Maps plan `in`, made for graph `from`, onto graph `to` by node id and
 * TMPC id (for a plan read from an archive built from another input).
 * *out owns a new plan.  PP_ERR_INPUT naming what is missing in `to`;
 * where is prefixed to messages. */
pp_status pp_plan_remap(const pp_graph *from, const pp_plan *in, const pp_graph *to, const char *where,
                        pp_plan **out, pp_error *err);

#endif /* PIPER_PLAN_IO_H */
