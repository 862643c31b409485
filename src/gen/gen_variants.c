/*
 * gen_variants.c - the per-layer variants `piper gen --variants` offers:
 * names, TMPC ids, parsing, and which variant applies to which node.
 *
 * Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
 * Transformer Models", MLSys 2023), Sec. 4-5: sequence parallelism (SP)
 * needs tensor parallelism (t > 1); selective recomputation recomputes the
 * attention core, so it applies to nodes holding one whose scores are
 * stored.  The cost of each variant is in gen_model.c.
 */
#include <string.h>

#include "piper/gen.h"

static const char *const variant_names[PP_GEN_N_VARIANTS] = {"none", "full",         "selective",
                                                             "sp",   "sp-selective", "sp-full"};

/* "vanilla" and "activation recomp" are the ids the Piper format gives
 * meaning to (--no-recompute refuses exactly the latter). */
static const char *const variant_ids[PP_GEN_N_VARIANTS] = {"vanilla",
                                                           "activation recomp",
                                                           "selective recomp",
                                                           "seq parallel",
                                                           "seq parallel + selective recomp",
                                                           "seq parallel + activation recomp"};

const char *pp_gen_variant_id(pp_gen_variant v) { return variant_ids[v]; }

const char *pp_gen_variant_name(pp_gen_variant v) { return variant_names[v]; }

pp_status pp_gen_parse_variants(const char *list, unsigned *set, pp_error *err) {
  unsigned out = 0;
  const char *p = list;
  for (;;) {
    size_t n = strcspn(p, ",");
    int found = 0;
    if (n == 3 && strncmp(p, "all", 3) == 0) {
      out |= (1u << PP_GEN_N_VARIANTS) - 1u;
      found = 1;
    }
    for (int v = 0; v < PP_GEN_N_VARIANTS && !found; v++)
      if (strlen(variant_names[v]) == n && strncmp(p, variant_names[v], n) == 0) {
        out |= 1u << v;
        found = 1;
      }
    if (!found)
      return pp_error_set(
          err, PP_ERR_USAGE,
          "--variants: unknown variant '%.*s' (none, full, selective, sp, sp-selective, sp-full, all)",
          (int)n, p);
    if (p[n] == '\0') break;
    p += n + 1;
  }
  *set = out;
  return PP_OK;
}

/* A transformer layer node (a block, or one of its halves). */
static int is_layer(pp_gen_node_kind kind) {
  return kind == PP_GEN_BLOCK || kind == PP_GEN_ATTENTION || kind == PP_GEN_MLP;
}

pp_gen_variant pp_gen_variant_effective(const pp_gen_config *cfg, pp_gen_node_kind kind, int t,
                                        pp_gen_variant v) {
  int sp = v == PP_GEN_VAR_SP || v == PP_GEN_VAR_SP_SELECTIVE || v == PP_GEN_VAR_SP_FULL;
  int selective = v == PP_GEN_VAR_SELECTIVE || v == PP_GEN_VAR_SP_SELECTIVE;
  int full = v == PP_GEN_VAR_FULL || v == PP_GEN_VAR_SP_FULL;
  if (sp && (t == 1 || !is_layer(kind))) sp = 0;
  /* the MLP half, the other nodes and FlashAttention (which recomputes the
   * scores already) have no stored attention core to drop */
  if (selective && (cfg->flash_attention || (kind != PP_GEN_BLOCK && kind != PP_GEN_ATTENTION)))
    selective = 0;
  if (full) return sp ? PP_GEN_VAR_SP_FULL : PP_GEN_VAR_FULL;
  if (selective) return sp ? PP_GEN_VAR_SP_SELECTIVE : PP_GEN_VAR_SELECTIVE;
  return sp ? PP_GEN_VAR_SP : PP_GEN_VAR_NONE;
}
