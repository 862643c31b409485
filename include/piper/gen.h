/*
 * gen.h - the model generator: Piper JSON from model and hardware presets.
 *
 * `piper gen` turns a transformer description (pp_gen_model) and an
 * accelerator description (pp_gen_gpu) into the planner's input format using
 * an analytic cost model (FLOPs, parameter bytes, Korthikanti et al. 2022
 * activation bytes, ring all-reduce times).  The cost model is pure C with no
 * I/O, so the unit tests call it directly; docs/generator.md derives every
 * formula.
 */
#ifndef PIPER_GEN_H
#define PIPER_GEN_H

#include <stdio.h>

#include "piper/error.h"

/* Transformer family: decides the block layout and which extra nodes exist. */
typedef enum pp_gen_family {
  PP_GEN_ENCODER = 0, /* BERT-style: post-LayerNorm, no final norm, MLM + NSP heads */
  PP_GEN_DECODER = 1  /* GPT/Llama-style: pre-norm blocks, final norm, LM head */
} pp_gen_family;

/* A transformer model.  Presets are const tables in gen_presets.c; the
 * command line copies one and overrides fields. */
typedef struct pp_gen_model {
  const char *name;         /* preset name, e.g. "gpt3-175b" */
  const char *source;       /* where the numbers come from (one line) */
  pp_gen_family family;     /* encoder or decoder */
  int layers;               /* L: transformer blocks */
  int hidden;               /* h: model width */
  int heads;                /* a: attention (query) heads */
  int kv_heads;             /* g: key/value heads (= heads without grouped-query attention) */
  int ffn;                  /* f: MLP inner width */
  int seq;                  /* s: sequence length in tokens */
  int vocab;                /* V: vocabulary size */
  int type_vocab;           /* token-type embedding rows (BERT: 2; else 0) */
  int gated_mlp;            /* 1: SwiGLU (three h x f matrices), 0: GeLU MLP (two) */
  int biases;               /* 1: linear biases and LayerNorm (weight + bias); 0: no biases, RMSNorm */
  int learned_positions;    /* 1: learned s x h position embeddings; 0: rotary (no weights) */
  int tied_embeddings;      /* 1: the LM head reuses the embedding matrix */
  int dropout;              /* 1: dropout layers present (their masks are stored) */
  int default_devices;      /* K used when --devices is not given */
  int default_global_batch; /* sequences per batch when --global-batch is not given */
  int default_microbatch;   /* sequences per microbatch when --microbatch-size is not given */
  double published_params;  /* the published parameter count (for tests and --list) */
} pp_gen_model;

/* An accelerator and the node it sits in. */
typedef struct pp_gen_gpu {
  const char *name;   /* preset name, e.g. "a100-80gb" */
  const char *source; /* where the numbers come from (one line) */
  double peak_flops;  /* peak dense bf16/fp16 tensor-core FLOP/s */
  double efficiency;  /* fraction of peak_flops the matrix multiplications reach, (0, 1] */
  double memory;      /* bytes of device memory */
  double nvlink;      /* intra-node bandwidth per GPU and direction, bytes/s */
  double network;     /* inter-node bandwidth per GPU, bytes/s */
  int gpus_per_node;  /* GPUs sharing the NVLink domain (bounds the tensor-parallel degree) */
  double hbm;         /* device memory bandwidth, bytes/s (memory-bound kernels run at this rate) */
} pp_gen_gpu;

/* Numeric precision of weights and activations. */
typedef enum pp_gen_precision { PP_GEN_BF16 = 0, PP_GEN_FP16, PP_GEN_FP32 } pp_gen_precision;

/* Optimizer: decides the bytes of state per parameter. */
typedef enum pp_gen_optimizer { PP_GEN_ADAM = 0, PP_GEN_SGD } pp_gen_optimizer;

/* Everything the generator needs: model, hardware and run settings. */
typedef struct pp_gen_config {
  pp_gen_model model;
  pp_gen_gpu gpu;
  int devices;         /* maxDevices */
  int global_batch;    /* sequences per batch */
  int microbatch;      /* b: sequences per microbatch; divides global_batch */
  int split_blocks;    /* 1: each block becomes an attention node and an MLP node */
  int flash_attention; /* 1: attention scores are not stored (no 5as^2b term) */
  int max_tp;          /* largest tensor-parallel degree emitted (power of two <= 8) */
  int memory_parts;    /* 1: write weightBytes, gradientBytes, optimizerBytes (for plan --zero) */
  int two_level;       /* 1: write devicesPerNode and intraNodeBandwidth from the GPU preset */
  unsigned variants;   /* bit set of pp_gen_variant offered per layer; 0 = none and full (the default) */
  pp_gen_precision precision;
  pp_gen_optimizer optimizer;
} pp_gen_config;

/* Kinds of nodes in the generated graph. */
typedef enum pp_gen_node_kind {
  PP_GEN_EMBEDDING = 0, /* token (+ position, + type) embeddings */
  PP_GEN_BLOCK,         /* a whole transformer block: attention + MLP */
  PP_GEN_ATTENTION,     /* the attention half of a block (with its norm) */
  PP_GEN_MLP,           /* the MLP half of a block (with its norm) */
  PP_GEN_FINAL_NORM,    /* the norm after the last block (decoders) */
  PP_GEN_HEAD           /* output projection and loss (BERT: + pooler/NSP, MLM transform) */
} pp_gen_node_kind;

/* The t-independent description of one node, per sample (one sequence). */
typedef struct pp_gen_node_cost {
  double fw_flops;     /* forward FLOPs for one sample, all tensor-parallel shards together */
  double params_split; /* parameters partitioned over the t devices */
  double params_repl;  /* parameters every one of the t devices holds */
  double act_split;    /* stored activation bytes per sample partitioned over t (vanilla) */
  double act_repl;     /* stored activation bytes per sample replicated on each of t (vanilla) */
  double act_input;    /* bytes per sample kept under full recomputation (the node's input) */
  double ew_split;     /* bytes the memory-bound kernels move in the forward pass, split over t */
  double ew_repl;      /* ... replicated on each of the t devices (norms, residual adds) */
  double core_flops;   /* forward FLOPs of the attention core (Q K^T, scores x V): 4 s^2 h, split over t */
  double act_core;     /* part of act_split stored by the attention core (softmax, dropout: the 5as^2 term) */
  double ew_core;      /* part of ew_split moved by the attention core's memory-bound kernels */
  double gather_flops; /* forward FLOPs of the GEMMs whose input SP gathers (their input-gradient GEMMs hide
                          the backward re-gather) */
  int allreduce_fw;    /* all-reduces of an s x h activation in the forward pass when t > 1 */
  int allreduce_bw;    /* ... and in the backward pass */
} pp_gen_node_cost;

/* The ways one transformer layer can be run, each offered as a TMPC
 * (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
 * Transformer Models", Sec. 4-5, Table 2).  SP = Megatron sequence
 * parallelism; it needs t > 1 (at t = 1 each SP variant is its non-SP
 * counterpart). */
typedef enum pp_gen_variant {
  PP_GEN_VAR_NONE = 0,     /* store every activation ("vanilla") */
  PP_GEN_VAR_FULL,         /* full recomputation: keep only the layer input ("activation recomp") */
  PP_GEN_VAR_SELECTIVE,    /* recompute the attention core only ("selective recomp") */
  PP_GEN_VAR_SP,           /* sequence parallelism ("seq parallel") */
  PP_GEN_VAR_SP_SELECTIVE, /* both ("seq parallel + selective recomp") */
  PP_GEN_VAR_SP_FULL, /* sequence parallelism with full recomputation ("seq parallel + activation recomp") */
  PP_GEN_N_VARIANTS
} pp_gen_variant;

/* The default variant set: today's two TMPCs per (node, t). */
#define PP_GEN_DEFAULT_VARIANTS ((1u << PP_GEN_VAR_NONE) | (1u << PP_GEN_VAR_FULL))

/* Returns the TMPC id written for variant v (static storage). */
const char *pp_gen_variant_id(pp_gen_variant v);

/* Returns the name of variant v on the command line ("none", "full",
 * "selective", "sp", "sp-selective", "sp-full"; static storage). */
const char *pp_gen_variant_name(pp_gen_variant v);

/* Parses a comma-separated list of variant names (or "all") into a bit set.
 * Returns PP_OK, or PP_ERR_USAGE naming the unknown word. */
pp_status pp_gen_parse_variants(const char *list, unsigned *set, pp_error *err);

/* Returns the variant actually emitted for v on node kind `kind` at degree
 * t: SP needs t > 1 and a transformer layer; selective needs an attention
 * core that stores something (not an MLP half, not FlashAttention); a
 * variant that does not apply falls back to its plain counterpart. */
pp_gen_variant pp_gen_variant_effective(const pp_gen_config *cfg, pp_gen_node_kind kind, int t,
                                        pp_gen_variant v);

/* One TMPC as written to the JSON (per device of a t-way group). */
typedef struct pp_gen_tmpc {
  double time_per_sample; /* seconds, forward + backward (+ recompute) for one sample */
  double parameter_size;  /* bytes of weights this device holds */
  double memory_a;        /* bytes per in-flight microbatch */
  double memory_b;        /* bytes of weights, gradients and optimizer state */
  double weight_bytes, gradient_bytes, optimizer_bytes; /* the three parts of memory_b */
} pp_gen_tmpc;

/* ---- presets (gen_presets.c) ---- */

/* Returns the model preset called name, or NULL.  The pointer is to a const
 * table entry (static storage); the caller must not free it. */
const pp_gen_model *pp_gen_find_model(const char *name);

/* Returns the accelerator preset called name, or NULL (static storage). */
const pp_gen_gpu *pp_gen_find_gpu(const char *name);

/* Returns the i-th model preset (0-based) or NULL past the end. */
const pp_gen_model *pp_gen_model_at(int i);

/* Returns the i-th accelerator preset (0-based) or NULL past the end. */
const pp_gen_gpu *pp_gen_gpu_at(int i);

/* Prints the preset tables (models, then accelerators) to out. */
void pp_gen_list_presets(FILE *out);

/* ---- cost model (gen_model.c) ---- */

/* Fills *c for a node of the given kind under cfg.  Pure; never fails for a
 * configuration accepted by pp_gen_check_config. */
void pp_gen_node_cost_of(const pp_gen_config *cfg, pp_gen_node_kind kind, pp_gen_node_cost *c);

/* Returns the TMPC of node cost c at tensor degree t (>= 1), vanilla
 * (recompute = 0) or with full activation recomputation (recompute = 1). */
pp_gen_tmpc pp_gen_tmpc_of(const pp_gen_config *cfg, const pp_gen_node_cost *c, int t, int recompute);

/* Returns the TMPC of node cost c at degree t under variant v (taken as
 * given: pp_gen_variant_effective decides what applies).  NONE and FULL are
 * exactly pp_gen_tmpc_of's two results. */
pp_gen_tmpc pp_gen_tmpc_variant(const pp_gen_config *cfg, const pp_gen_node_cost *c, int t, pp_gen_variant v);

/* Returns the number of model parameters (tied embeddings counted once). */
double pp_gen_param_count(const pp_gen_model *m);

/* Returns the model's forward FLOPs for one sample (matmuls and attention);
 * a training step without recomputation costs three times that. */
double pp_gen_forward_flops(const pp_gen_model *m);

/* Returns Korthikanti et al.'s activation bytes of one transformer block per
 * microbatch of b sequences at tensor degree t (no sequence parallelism,
 * 16-bit activations, dropout): s*b*h*(10 + 24/t) + 5*a*s^2*b/t for a
 * GPT-style block; the general form for GQA, gated MLPs, no dropout and
 * FlashAttention is in docs/generator.md. */
double pp_gen_block_activation_bytes(const pp_gen_config *cfg, int t);

/* The fraction of a link's bandwidth that NCCL's ring all-reduce reaches
 * for the large messages of tensor parallelism (its "bus bandwidth",
 * nccl-tests doc/PERFORMANCE.md): about 230 of 300 GB/s on DGX A100. */
#define PP_GEN_LINK_EFFICIENCY 0.8

/* Returns the time of a ring all-reduce of bytes over t devices at
 * bandwidth bw (bytes/s per direction): 2(t-1)/t * bytes / (0.8 bw); 0 when
 * t = 1. */
double pp_gen_allreduce_seconds(double bytes, int t, double bw);

/* Checks that cfg is consistent (positive sizes, heads divisible by
 * kv_heads, microbatch dividing the batch, ...).  Returns PP_OK or
 * PP_ERR_USAGE with a message naming the offending setting. */
pp_status pp_gen_check_config(const pp_gen_config *cfg, pp_error *err);

/* Returns 1 when tensor degree t is emitted under cfg: t a power of two
 * <= cfg->max_tp and <= gpus_per_node, dividing heads, kv_heads and ffn. */
int pp_gen_tp_allowed(const pp_gen_config *cfg, int t);

/* ---- JSON and the command (gen.c) ---- */

/* Writes the Piper JSON graph for cfg to out, in a fixed key order with
 * numbers in "%.12g", so the same cfg always gives the same bytes.  Returns
 * PP_OK, or PP_ERR_IO if a write failed (out is the caller's). */
pp_status pp_gen_write_json(const pp_gen_config *cfg, FILE *out, pp_error *err);

/* Runs `piper gen` with argv[0] = "gen".  Writes the JSON to out (or to the
 * file named by -o, atomically through pp_file_temp / pp_file_commit),
 * messages to err.  Returns the process exit code (0 success, 1 I/O failure,
 * 2 usage error, including an -o whose folder is missing). */
int pp_gen_main(int argc, char **argv, FILE *out, FILE *err);

#endif /* PIPER_GEN_H */
