/*
 * gen_model.c - the generator's analytic cost model: FLOPs, parameters,
 * activation bytes and tensor-parallel communication of transformer nodes.
 *
 * Everything here is per sample (one sequence of s tokens) unless it says
 * microbatch.  Activation bytes follow Korthikanti et al. 2022, "Reducing
 * Activation Recomputation in Large Transformer Models", Sec. 4 (no sequence
 * parallelism), generalised term by term to grouped-query attention, gated
 * MLPs, models without dropout and FlashAttention; docs/generator.md lists
 * every term.  No I/O, no allocation.
 */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "piper/gen.h"

/* Bytes of one activation element. */
static double act_elem_bytes(const pp_gen_config *cfg) { return cfg->precision == PP_GEN_FP32 ? 4.0 : 2.0; }

/* Bytes of one weight as the device keeps it for the forward pass. */
static double weight_bytes(const pp_gen_config *cfg) { return cfg->precision == PP_GEN_FP32 ? 4.0 : 2.0; }

/* Bytes per parameter of weights + gradients + optimizer state.  Mixed
 * precision (bf16/fp16): 2 weight + 2 gradient + 4 fp32 master copy, plus
 * Adam's two fp32 moments (8) or SGD's fp32 momentum (4) - Rajbhandari et
 * al. 2020 (ZeRO), Sec. 3.1.  fp32: 4 + 4, plus 8 (Adam) or 4 (SGD). */
static double state_bytes(const pp_gen_config *cfg) {
  double opt = cfg->optimizer == PP_GEN_ADAM ? 8.0 : 4.0;
  if (cfg->precision == PP_GEN_FP32) return 4.0 + 4.0 + opt;
  return 2.0 + 2.0 + 4.0 + opt;
}

/* Parameters of one norm: LayerNorm has a weight and a bias, RMSNorm a weight. */
static double norm_params(const pp_gen_model *m) { return m->biases ? 2.0 * m->hidden : (double)m->hidden; }

static void zero(pp_gen_node_cost *c) { memset(c, 0, sizeof *c); }

/* The attention half of a block, with the norm that belongs to it. */
static void attention_cost(const pp_gen_config *cfg, pp_gen_node_cost *c) {
  const pp_gen_model *m = &cfg->model;
  double s = m->seq, h = m->hidden, a = m->heads;
  double kv = (double)m->kv_heads * (h / a); /* width of K (and of V) */
  double e = act_elem_bytes(cfg), drop = m->dropout ? 1.0 : 0.0;
  zero(c);
  /* QKV projection, scores Q K^T, scores x V, output projection. */
  c->fw_flops = 2.0 * s * h * (h + 2.0 * kv) + 2.0 * s * s * h + 2.0 * s * s * h + 2.0 * s * h * h;
  c->params_split = h * (h + 2.0 * kv) + h * h + (m->biases ? h + 2.0 * kv : 0.0);
  c->params_repl = (m->biases ? h : 0.0) + norm_params(m);
  /* Replicated: norm input, QKV input, dropout mask after the projection. */
  c->act_repl = e * s * h + e * s * h + drop * s * h;
  /* Split over heads: Q, K, V, the attention output (projection input). */
  c->act_split = e * s * h + 2.0 * e * s * kv + e * s * h;
  if (cfg->flash_attention) {
    c->act_split += 4.0 * a * s; /* fp32 softmax statistics per row (Dao et al. 2022) */
  } else {
    /* softmax out, mask, dropout out: the 5as^2 term that selective
     * recomputation drops (Korthikanti et al. 2022, Sec. 5) */
    c->act_core = e * a * s * s + drop * (a * s * s + e * a * s * s);
    c->act_split += c->act_core;
  }
  c->core_flops = 2.0 * s * s * h + 2.0 * s * s * h; /* Q K^T and scores x V */
  c->gather_flops = 2.0 * s * h * (h + 2.0 * kv);    /* the QKV projection's input-gradient GEMM */
  c->act_input = e * s * h;
  c->allreduce_fw = 1;
  c->allreduce_bw = 1;
  /* Memory-bound kernels (Megatron-LM's fused ones), bytes read + written:
   * norm 2e sh; bias-dropout-add 3e sh + mask; the context transpose
   * 2e sh; scale-mask-softmax 2e as^2; attention dropout 2e as^2 + mask. */
  c->ew_repl = 2.0 * e * s * h + (3.0 * e + drop) * s * h;
  c->ew_split = 2.0 * e * s * h;
  if (!cfg->flash_attention) {
    c->ew_core = 2.0 * e * a * s * s + drop * (2.0 * e + 1.0) * a * s * s;
    c->ew_split += c->ew_core;
  }
}

/* The MLP half of a block, with its norm. */
static void mlp_cost(const pp_gen_config *cfg, pp_gen_node_cost *c) {
  const pp_gen_model *m = &cfg->model;
  double s = m->seq, h = m->hidden, f = m->ffn;
  double e = act_elem_bytes(cfg), drop = m->dropout ? 1.0 : 0.0;
  double mats = m->gated_mlp ? 3.0 : 2.0;
  zero(c);
  c->fw_flops = 2.0 * mats * s * h * f;
  c->params_split = mats * h * f + (m->biases ? f : 0.0);
  c->params_repl = (m->biases ? h : 0.0) + norm_params(m);
  c->act_repl = e * s * h + e * s * h + drop * s * h; /* norm input, first linear input, dropout mask */
  /* GeLU: its input and output.  SwiGLU: gate and up outputs, act(gate) and
   * the product that enters the down projection. */
  c->act_split = (m->gated_mlp ? 4.0 : 2.0) * e * s * f;
  c->gather_flops = 2.0 * (mats - 1.0) * s * h * f; /* input-gradient GEMMs of the first linear(s) */
  c->act_input = e * s * h;
  c->allreduce_fw = 1;
  c->allreduce_bw = 1;
  /* norm 2e sh, bias-dropout-add 3e sh + mask; bias-GeLU 2e sf (SwiGLU:
   * reads gate and up, writes the product: 3e sf) */
  c->ew_repl = 2.0 * e * s * h + (3.0 * e + drop) * s * h;
  c->ew_split = (m->gated_mlp ? 3.0 : 2.0) * e * s * f;
}

static void add(pp_gen_node_cost *x, const pp_gen_node_cost *y) {
  x->fw_flops += y->fw_flops;
  x->params_split += y->params_split;
  x->params_repl += y->params_repl;
  x->act_split += y->act_split;
  x->act_repl += y->act_repl;
  x->core_flops += y->core_flops;
  x->act_core += y->act_core;
  x->ew_core += y->ew_core;
  x->gather_flops += y->gather_flops;
  x->allreduce_fw += y->allreduce_fw;
  x->allreduce_bw += y->allreduce_bw;
  x->ew_split += y->ew_split;
  x->ew_repl += y->ew_repl;
}

void pp_gen_node_cost_of(const pp_gen_config *cfg, pp_gen_node_kind kind, pp_gen_node_cost *c) {
  const pp_gen_model *m = &cfg->model;
  double s = m->seq, h = m->hidden, V = m->vocab;
  double e = act_elem_bytes(cfg), drop = m->dropout ? 1.0 : 0.0;
  int encoder = m->family == PP_GEN_ENCODER;
  zero(c);
  switch (kind) {
  case PP_GEN_EMBEDDING:
    /* Vocabulary-parallel lookup (Megatron): no FLOPs counted, one
       * all-reduce of the output in the forward pass. */
    c->params_split = V * h;
    c->params_repl =
        (m->learned_positions ? s * h : 0.0) + m->type_vocab * h + (encoder ? norm_params(m) : 0.0);
    c->act_repl = 8.0 * s + drop * s * h + (encoder ? e * s * h : 0.0); /* int64 ids, mask, LayerNorm input */
    c->act_input = 8.0 * s;
    c->allreduce_fw = 1;
    return;
  case PP_GEN_ATTENTION:
    attention_cost(cfg, c);
    return;
  case PP_GEN_MLP:
    mlp_cost(cfg, c);
    return;
  case PP_GEN_BLOCK: {
    pp_gen_node_cost mlp;
    attention_cost(cfg, c);
    mlp_cost(cfg, &mlp);
    add(c, &mlp);
    c->act_input = e * s * h;
    return;
  }
  case PP_GEN_FINAL_NORM:
    c->params_repl = norm_params(m);
    c->act_repl = e * s * h;
    c->act_input = e * s * h;
    return;
  case PP_GEN_HEAD:
    /* Vocabulary-parallel output projection and cross entropy: fp32 logits
       * (4sV, Korthikanti Sec. 4.3); the input is copied to the t devices, so
       * its gradient is all-reduced in the backward pass. */
    c->fw_flops = 2.0 * s * h * V;
    c->params_split = V * h; /* its own matrix, or the copy of a tied embedding */
    c->act_repl = e * s * h;
    c->act_split = 4.0 * s * V;
    c->act_input = e * s * h;
    c->allreduce_bw = 1;
    if (encoder) {
      /* MLM transform (dense + GeLU + LayerNorm) on every token, output
         * bias, pooler and NSP classifier on the first token. */
      c->fw_flops += 2.0 * s * h * h + 2.0 * h * h + 4.0 * h;
      c->params_split += V;
      c->params_repl += (h * h + h) + norm_params(m) + (h * h + h) + (2.0 * h + 2.0);
      c->act_repl += 3.0 * e * s * h; /* dense input, GeLU input, LayerNorm input */
    }
    return;
  }
  assert(0 && "unknown node kind");
}

double pp_gen_allreduce_seconds(double bytes, int t, double bw) {
  if (t <= 1) return 0.0;
  return 2.0 * (t - 1) / t * bytes / (PP_GEN_LINK_EFFICIENCY * bw);
}

pp_gen_tmpc pp_gen_tmpc_of(const pp_gen_config *cfg, const pp_gen_node_cost *c, int t, int recompute) {
  return pp_gen_tmpc_variant(cfg, c, t, recompute ? PP_GEN_VAR_FULL : PP_GEN_VAR_NONE);
}

/* Stored activation bytes per sample of variant v at degree t (Korthikanti
 * et al. 2022, Table 2, term by term).  Without SP the norms' and dropouts'
 * activations (act_repl, their "10") stay on every device; sequence
 * parallelism splits them over t too (Sec. 4.2.2: 34/t); selective
 * recomputation drops the attention core's 5as^2 term (Sec. 5); full
 * recomputation keeps the layer input only (2sbh; Sec. 5), which under SP
 * is the sequence shard Megatron-LM checkpoints (2sbh/t). */
static double variant_activations(const pp_gen_node_cost *c, int t, pp_gen_variant v) {
  switch (v) {
  case PP_GEN_VAR_NONE:
    return c->act_repl + c->act_split / t;
  case PP_GEN_VAR_FULL:
    return c->act_input;
  case PP_GEN_VAR_SELECTIVE:
    return c->act_repl + (c->act_split - c->act_core) / t;
  case PP_GEN_VAR_SP:
    return (c->act_repl + c->act_split) / t;
  case PP_GEN_VAR_SP_SELECTIVE:
    return (c->act_repl + c->act_split - c->act_core) / t;
  case PP_GEN_VAR_SP_FULL:
  case PP_GEN_N_VARIANTS:
    break;
  }
  return c->act_input / t;
}

pp_gen_tmpc pp_gen_tmpc_variant(const pp_gen_config *cfg, const pp_gen_node_cost *c, int t,
                                pp_gen_variant v) {
  assert(t >= 1 && v >= 0 && v < PP_GEN_N_VARIANTS);
  const pp_gen_model *m = &cfg->model;
  const int recompute = v == PP_GEN_VAR_FULL || v == PP_GEN_VAR_SP_FULL;
  const int selective = v == PP_GEN_VAR_SELECTIVE || v == PP_GEN_VAR_SP_SELECTIVE;
  const int sp = v == PP_GEN_VAR_SP || v == PP_GEN_VAR_SP_SELECTIVE || v == PP_GEN_VAR_SP_FULL;
  pp_gen_tmpc r;
  double rate = cfg->gpu.peak_flops * cfg->gpu.efficiency;
  /* forward: the matrix work at the achieved GEMM rate plus the memory-bound
   * kernels at the memory bandwidth (a roofline split: Williams et al. 2009);
   * under SP the norms, dropouts and residual adds run on 1/t of the
   * sequence (Korthikanti et al. 2022, Sec. 4.2.2) */
  double fw = c->fw_flops / t / rate + (c->ew_split / t + (sp ? c->ew_repl / t : c->ew_repl)) / cfg->gpu.hbm;
  /* Backward costs twice the forward; recomputation repeats the forward. */
  double compute = fw * (3.0 + (recompute ? 1.0 : 0.0));
  /* Selective recomputation re-runs the attention core once in the backward
   * pass: its 4 s^2 h FLOPs (Q K^T and scores x V) and its softmax/dropout
   * kernels (Korthikanti et al. 2022, Sec. 5). */
  if (selective) compute += c->core_flops / t / rate + c->ew_core / t / cfg->gpu.hbm;
  double ar = pp_gen_allreduce_seconds(act_elem_bytes(cfg) * m->seq * m->hidden, t, cfg->gpu.nvlink);
  /* SP replaces each all-reduce by a reduce-scatter and an all-gather, the
   * two halves of the ring all-reduce: the same bytes and time (Korthikanti
   * et al. 2022, Sec. 4.2.2).  Its one extra cost: the backward pass
   * all-gathers the layer input again for the weight gradient (only the
   * shard was stored), overlapped with the input-gradient GEMM (Megatron-LM,
   * tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication);
   * only the part that GEMM does not hide is charged. */
  double comm = ((double)c->allreduce_fw * (recompute ? 2.0 : 1.0) + c->allreduce_bw) * ar;
  if (sp) comm += fmax(0.0, c->allreduce_bw * ar / 2.0 - c->gather_flops / t / rate);
  double params = c->params_split / t + c->params_repl;
  /* the planner's sample is one microbatch of b sequences */
  r.time_per_sample = (compute + comm) * cfg->microbatch;
  /* The planner's data-parallel term is 4(d-1)/d x parameterSize / B per
   * batch, twice the ring all-reduce of the gradients, 2(d-1)/d x bytes / B
   * (Patarasuk and Yuan 2009; NCCL's bus bandwidth).  Megatron-LM reduces
   * the gradients in the weights' precision, so parameterSize carries half
   * the gradient bytes and the term is the ring's time. */
  r.parameter_size = params * weight_bytes(cfg) / 2.0;
  r.memory_b = params * state_bytes(cfg);
  /* its parts (ZeRO's Psi terms, Rajbhandari et al. 2020 Sec. 3.1): weights
   * and gradients in the weights' precision, the rest optimizer state */
  r.weight_bytes = params * weight_bytes(cfg);
  r.gradient_bytes = params * weight_bytes(cfg);
  r.optimizer_bytes = r.memory_b - r.weight_bytes - r.gradient_bytes;
  r.memory_a = cfg->microbatch * variant_activations(c, t, v);
  return r;
}

double pp_gen_block_activation_bytes(const pp_gen_config *cfg, int t) {
  pp_gen_node_cost c;
  pp_gen_node_cost_of(cfg, PP_GEN_BLOCK, &c);
  return cfg->microbatch * (c.act_repl + c.act_split / t);
}

/* A configuration carrying only the model, for the model-only totals. */
static pp_gen_config model_only(const pp_gen_model *m) {
  pp_gen_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.model = *m;
  cfg.microbatch = 1;
  return cfg;
}

static const pp_gen_node_kind extra_kinds[] = {PP_GEN_EMBEDDING, PP_GEN_FINAL_NORM, PP_GEN_HEAD};

double pp_gen_param_count(const pp_gen_model *m) {
  pp_gen_config cfg = model_only(m);
  pp_gen_node_cost c;
  pp_gen_node_cost_of(&cfg, PP_GEN_BLOCK, &c);
  double total = m->layers * (c.params_split + c.params_repl);
  for (size_t i = 0; i < sizeof extra_kinds / sizeof extra_kinds[0]; i++) {
    if (extra_kinds[i] == PP_GEN_FINAL_NORM && m->family == PP_GEN_ENCODER) continue;
    pp_gen_node_cost_of(&cfg, extra_kinds[i], &c);
    total += c.params_split + c.params_repl;
  }
  if (m->tied_embeddings) total -= (double)m->vocab * m->hidden; /* the head's copy */
  return total;
}

double pp_gen_forward_flops(const pp_gen_model *m) {
  pp_gen_config cfg = model_only(m);
  pp_gen_node_cost c;
  pp_gen_node_cost_of(&cfg, PP_GEN_BLOCK, &c);
  double total = m->layers * c.fw_flops;
  pp_gen_node_cost_of(&cfg, PP_GEN_HEAD, &c);
  return total + c.fw_flops;
}

int pp_gen_tp_allowed(const pp_gen_config *cfg, int t) {
  if (t < 1 || (t & (t - 1)) != 0) return 0;
  if (t > cfg->max_tp || t > cfg->gpu.gpus_per_node) return 0;
  const pp_gen_model *m = &cfg->model;
  return m->heads % t == 0 && m->kv_heads % t == 0 && m->ffn % t == 0;
}

pp_status pp_gen_check_config(const pp_gen_config *cfg, pp_error *err) {
  const pp_gen_model *m = &cfg->model;
  const pp_gen_gpu *g = &cfg->gpu;
  if (m->layers < 1 || m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->ffn < 1 || m->seq < 1 ||
      m->vocab < 1)
    return pp_error_set(err, PP_ERR_USAGE, "model sizes must all be >= 1");
  if (m->hidden % m->heads != 0)
    return pp_error_set(err, PP_ERR_USAGE, "--hidden %d is not divisible by --heads %d", m->hidden, m->heads);
  if (m->heads % m->kv_heads != 0)
    return pp_error_set(err, PP_ERR_USAGE, "--heads %d is not divisible by --kv-heads %d", m->heads,
                        m->kv_heads);
  if (m->type_vocab < 0) return pp_error_set(err, PP_ERR_USAGE, "--type-vocab must be >= 0");
  if (cfg->devices < 1) return pp_error_set(err, PP_ERR_USAGE, "--devices must be >= 1");
  if (cfg->microbatch < 1 || cfg->global_batch < 1)
    return pp_error_set(err, PP_ERR_USAGE, "--global-batch and --microbatch-size must be >= 1");
  if (cfg->global_batch % cfg->microbatch != 0)
    return pp_error_set(err, PP_ERR_USAGE, "--global-batch %d is not a multiple of --microbatch-size %d",
                        cfg->global_batch, cfg->microbatch);
  if (!(g->peak_flops > 0) || !isfinite(g->peak_flops))
    return pp_error_set(err, PP_ERR_USAGE, "--flops must be > 0");
  if (!(g->efficiency > 0 && g->efficiency <= 1))
    return pp_error_set(err, PP_ERR_USAGE, "--efficiency must be in (0, 1]");
  if (!(g->memory > 0) || !(g->nvlink > 0) || !(g->network > 0) || !(g->hbm > 0))
    return pp_error_set(err, PP_ERR_USAGE,
                        "--gpu-memory, --nvlink, --network and --memory-bandwidth must be > 0");
  if (g->gpus_per_node < 1) return pp_error_set(err, PP_ERR_USAGE, "--gpus-per-node must be >= 1");
  if (cfg->max_tp != 1 && cfg->max_tp != 2 && cfg->max_tp != 4 && cfg->max_tp != 8)
    return pp_error_set(err, PP_ERR_USAGE, "--max-tp must be 1, 2, 4 or 8");
  return PP_OK;
}
