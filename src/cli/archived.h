/*
 * archived.h - the best TPS an opened archive answers for a budget k (and a
 * bound s on the sum of data-parallel degrees), and its curve over k: from
 * the DP tables, or for an equi archive (which keeps none) by rerunning the
 * baseline from the stored input.  Used by `show` and `plot`.
 */
#ifndef PIPER_CLI_ARCHIVED_H
#define PIPER_CLI_ARCHIVED_H

#include "piper/archive.h"

/* *tps = the best TPS for budget k <= the archive's K with the sum of d at
 * most s (s < 0: no bound beyond min(N, k); s >= 0 needs a piper archive);
 * with plan != NULL also the plan (caller frees).  Returns the failure of
 * the rebuild, with err set. */
pp_status pp_cli_archived_optimum(pp_archive *a, int k, int s, double *tps, pp_plan **plan, pp_error *err);

/* curve[k - 1] = the best TPS for k = 1..K (the archive's devices), with the
 * sum of d at most s if s >= 0 (piper archives only). */
pp_status pp_cli_archived_curve(pp_archive *a, int s, double *curve, pp_error *err);

#endif /* PIPER_CLI_ARCHIVED_H */
