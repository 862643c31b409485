/*
 * test_gen.c - unit tests of the model generator: parameter counts against
 * the published ones, FLOPs, activation bytes and TMPCs on small models
 * computed by hand, tensor-degree rules, and the generated JSON read back
 * through the planner's own loader.
 */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piper/gen.h"
#include "piper/graph.h"

#define REL_EQ(a, b) (fabs((a) - (b)) <= 1e-12 * fmax(1.0, fabs(b)))

/* A tiny GPT-style model: L=2, h=64, a=4, f=256, s=16, V=100. */
static pp_gen_config tiny_gpt(void) {
  pp_gen_config c;
  memset(&c, 0, sizeof c);
  c.model = (pp_gen_model){.name = "tiny-gpt",
                           .source = "test",
                           .family = PP_GEN_DECODER,
                           .layers = 2,
                           .hidden = 64,
                           .heads = 4,
                           .kv_heads = 4,
                           .ffn = 256,
                           .seq = 16,
                           .vocab = 100,
                           .biases = 1,
                           .learned_positions = 1,
                           .tied_embeddings = 1,
                           .dropout = 1};
  c.gpu = (pp_gen_gpu){.name = "toy",
                       .source = "test",
                       .peak_flops = 100e12,
                       .efficiency = 0.5,
                       .memory = 80e9,
                       .nvlink = 100e9,
                       .network = 10e9,
                       .gpus_per_node = 8,
                       .hbm = 1e12};
  c.devices = 8;
  c.global_batch = 16;
  c.microbatch = 2;
  c.max_tp = 8;
  return c;
}

/* A tiny Llama-style model: GQA (8 heads, 2 KV heads), SwiGLU, RMSNorm, no
 * biases, no dropout, rotary positions, untied head. */
static pp_gen_config tiny_llama(void) {
  pp_gen_config c = tiny_gpt();
  c.model.name = "tiny-llama";
  c.model.heads = 8;
  c.model.kv_heads = 2;
  c.model.ffn = 96;
  c.model.gated_mlp = 1;
  c.model.biases = 0;
  c.model.learned_positions = 0;
  c.model.tied_embeddings = 0;
  c.model.dropout = 0;
  c.microbatch = 1;
  return c;
}

Test(gen_presets, parameter_counts_match_published_within_2_percent) {
  int n = 0;
  for (const pp_gen_model *m; (m = pp_gen_model_at(n)) != NULL; n++) {
    double p = pp_gen_param_count(m);
    double rel = fabs(p - m->published_params) / m->published_params;
    cr_expect(rel < 0.02, "%s: %.4g parameters vs published %.4g (%.2f%%)", m->name, p, m->published_params,
              100 * rel);
  }
  cr_expect_eq(n, 7);
}

Test(gen_presets, names_are_the_documented_ones) {
  const char *models[] = {"bert-large", "gpt3-1.3b",  "gpt3-13b",     "gpt3-175b",
                          "llama2-7b",  "llama2-70b", "llama3.1-405b"};
  const char *gpus[] = {"v100-32gb", "a100-40gb", "a100-80gb", "h100-80gb", "h200-141gb"};
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
    cr_expect(pp_gen_find_model(models[i]) != NULL, "%s", models[i]);
  for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
    cr_expect(pp_gen_find_gpu(gpus[i]) != NULL, "%s", gpus[i]);
  cr_expect_null(pp_gen_find_model("gpt4"));
  cr_expect_null(pp_gen_find_gpu("v100"));
  cr_expect_null(pp_gen_model_at(7));
  cr_expect_null(pp_gen_gpu_at(5));
}

Test(gen_presets, exact_counts_of_well_known_models) {
  /* Llama 2 7B: 6,738,415,616 and 70B: 68,976,648,192 (the released
   * checkpoints' sizes); BERT-large with pooler, MLM and NSP heads. */
  cr_expect_eq(pp_gen_param_count(pp_gen_find_model("llama2-7b")), 6738415616.0);
  cr_expect_eq(pp_gen_param_count(pp_gen_find_model("llama2-70b")), 68976648192.0);
  cr_expect_eq(pp_gen_param_count(pp_gen_find_model("bert-large")), 336226108.0);
}

Test(gen_model, tiny_gpt_parameters) {
  pp_gen_config c = tiny_gpt();
  /* Per block 12h^2 + 13h = 49152 + 832; embedding Vh + sh = 6400 + 1024;
   * final LayerNorm 2h = 128; the tied head adds nothing. */
  cr_expect_eq(pp_gen_param_count(&c.model), 2 * 49984.0 + 7424.0 + 128.0);
  pp_gen_node_cost n;
  pp_gen_node_cost_of(&c, PP_GEN_BLOCK, &n);
  cr_expect_eq(n.params_split + n.params_repl, 49984.0);
  cr_expect_eq(n.params_repl, 6.0 * 64); /* two LayerNorms (2h each) and the two row-parallel biases */
  pp_gen_node_cost_of(&c, PP_GEN_HEAD, &n);
  cr_expect_eq(n.params_split, 6400.0); /* the head's copy of the tied matrix */
}

Test(gen_model, tiny_gpt_flops) {
  pp_gen_config c = tiny_gpt();
  /* Block forward 24sh^2 + 4s^2h (Narayanan et al. 2021, Sec. 5.1). */
  pp_gen_node_cost n;
  pp_gen_node_cost_of(&c, PP_GEN_BLOCK, &n);
  cr_expect_eq(n.fw_flops, 24.0 * 16 * 64 * 64 + 4.0 * 16 * 16 * 64);
  cr_expect_eq(n.fw_flops, 1638400.0);
  /* Model: two blocks + logits 2shV = 204800. */
  cr_expect_eq(pp_gen_forward_flops(&c.model), 2 * 1638400.0 + 204800.0);
  pp_gen_node_cost_of(&c, PP_GEN_EMBEDDING, &n);
  cr_expect_eq(n.fw_flops, 0.0);
}

Test(gen_model, korthikanti_activation_bytes) {
  pp_gen_config c = tiny_gpt(); /* b = 2 */
  double sbh = 16.0 * 2 * 64, as2b = 4.0 * 16 * 16 * 2;
  /* t = 1: sbh(34 + 5as/h); with TP: sbh(10 + 24/t) + 5as^2b/t. */
  cr_expect_eq(pp_gen_block_activation_bytes(&c, 1), 34 * sbh + 5 * as2b);
  cr_expect_eq(pp_gen_block_activation_bytes(&c, 1), 79872.0);
  cr_expect_eq(pp_gen_block_activation_bytes(&c, 4), 35328.0);
  for (int t = 1; t <= 8; t *= 2)
    cr_expect(REL_EQ(pp_gen_block_activation_bytes(&c, t), sbh * (10 + 24.0 / t) + 5 * as2b / t), "t=%d", t);
  /* The same formula for GPT-3 175B (b = 1), the paper's own example. */
  pp_gen_config big = c;
  big.model = *pp_gen_find_model("gpt3-175b");
  big.microbatch = 1;
  double s = 2048, h = 12288, a = 96;
  for (int t = 1; t <= 8; t *= 2)
    cr_expect(REL_EQ(pp_gen_block_activation_bytes(&big, t), s * h * (10 + 24.0 / t) + 5 * a * s * s / t),
              "t=%d", t);
  /* FlashAttention drops the 5as^2b term and keeps 4as bytes of statistics. */
  c.flash_attention = 1;
  cr_expect_eq(pp_gen_block_activation_bytes(&c, 1), 34 * sbh + 2 * 4.0 * 4 * 16);
}

Test(gen_model, split_halves_add_up_to_the_block) {
  pp_gen_config c = tiny_gpt();
  pp_gen_node_cost b, at, ml;
  pp_gen_node_cost_of(&c, PP_GEN_BLOCK, &b);
  pp_gen_node_cost_of(&c, PP_GEN_ATTENTION, &at);
  pp_gen_node_cost_of(&c, PP_GEN_MLP, &ml);
  cr_expect_eq(b.fw_flops, at.fw_flops + ml.fw_flops);
  cr_expect_eq(b.params_split + b.params_repl,
               at.params_split + at.params_repl + ml.params_split + ml.params_repl);
  cr_expect_eq(b.act_split + b.act_repl, at.act_split + at.act_repl + ml.act_split + ml.act_repl);
  /* Attention without TP: 13sbh + 5as^2b (with its LayerNorm); MLP 21sbh. */
  double sh = 16.0 * 64;
  cr_expect_eq(at.act_split + at.act_repl, 13 * sh + 5 * 4.0 * 16 * 16);
  cr_expect_eq(ml.act_split + ml.act_repl, 21 * sh);
}

Test(gen_model, gqa_swiglu_by_hand) {
  pp_gen_config c = tiny_llama(); /* s=16 h=64 a=8 g=2 (K, V width 16) f=96 */
  pp_gen_node_cost at, ml;
  pp_gen_node_cost_of(&c, PP_GEN_ATTENTION, &at);
  pp_gen_node_cost_of(&c, PP_GEN_MLP, &ml);
  /* Params: Q 64*64, K and V 64*16 each, O 64*64, RMSNorm 64; MLP 3*64*96 + 64. */
  cr_expect_eq(at.params_split + at.params_repl, 4096.0 + 2048 + 4096 + 64);
  cr_expect_eq(ml.params_split + ml.params_repl, 18432.0 + 64);
  /* FLOPs: 2sh(h + 2*16) + 4s^2h + 2sh^2; MLP 6shf. */
  cr_expect_eq(at.fw_flops, 196608.0 + 65536 + 131072);
  cr_expect_eq(ml.fw_flops, 589824.0);
  /* Activations (2-byte, no dropout): attention 4sh replicated + Q, K, V,
   * output (2048 + 512 + 512 + 2048) + softmax output 2as^2; MLP 4sh + 8sf. */
  cr_expect_eq(at.act_repl, 4096.0);
  cr_expect_eq(at.act_split, 5120.0 + 4096.0);
  cr_expect_eq(ml.act_repl, 4096.0);
  cr_expect_eq(ml.act_split, 8.0 * 16 * 96);
  /* Model total: 2 blocks + embedding Vh + final RMSNorm h + untied head Vh. */
  cr_expect_eq(pp_gen_param_count(&c.model), 2 * (10304.0 + 18496.0) + 6400 + 64 + 6400);
}

Test(gen_model, tmpc_time_memory_and_recompute) {
  pp_gen_config c = tiny_gpt(); /* b = 2 sequences per sample (microbatch) */
  pp_gen_node_cost n;
  pp_gen_node_cost_of(&c, PP_GEN_BLOCK, &n);
  const pp_gen_model *m = &c.model;
  double s = m->seq, h = m->hidden, a = m->heads, f = m->ffn;
  /* memory-bound bytes per sequence (2-byte elements, dropout): norms and
   * bias-dropout-adds 2 x (4 + 7) sh replicated; context transpose 4sh,
   * softmax 4as^2, attention dropout 5as^2, GeLU 4sf split */
  cr_expect_eq(n.ew_repl, 22 * s * h);
  cr_expect_eq(n.ew_split, 4 * s * h + 9 * a * s * s + 4 * s * f);
  double rate = 100e12 * 0.5, fw = 1638400.0 / rate + (n.ew_split + n.ew_repl) / 1e12;
  pp_gen_tmpc v1 = pp_gen_tmpc_of(&c, &n, 1, 0), r1 = pp_gen_tmpc_of(&c, &n, 1, 1);
  cr_expect(REL_EQ(v1.time_per_sample, 2 * 3 * fw));
  cr_expect(REL_EQ(r1.time_per_sample, 2 * 4 * fw));
  cr_expect_eq(v1.parameter_size, 49984.0); /* half the fp16 gradient bytes */
  cr_expect_eq(v1.memory_b, 16 * 49984.0);
  /* ZeRO's parts (Rajbhandari et al. 2020, Sec. 3.1): 2 + 2 bytes of fp16
   * weights and gradients, 12 of optimizer state per parameter */
  cr_expect_eq(v1.weight_bytes, 2 * 49984.0);
  cr_expect_eq(v1.gradient_bytes, 2 * 49984.0);
  cr_expect_eq(v1.optimizer_bytes, 12 * 49984.0);
  cr_expect_eq(v1.memory_a, 79872.0);
  cr_expect_eq(r1.memory_a, 2 * 2.0 * 16 * 64); /* b * 2sh: the block input only */
  cr_expect_eq(r1.memory_b, v1.memory_b);
  /* t = 2: half the FLOPs, split parameters and split memory-bound bytes;
   * one all-reduce of 2sh bytes per pass (2 per block forward, 2 backward),
   * ring time 2(t-1)/t M / (0.8 bw). */
  pp_gen_tmpc v2 = pp_gen_tmpc_of(&c, &n, 2, 0), r2 = pp_gen_tmpc_of(&c, &n, 2, 1);
  double ar = 2.0 * 1 / 2 * (2.0 * 16 * 64) / (0.8 * 100e9);
  double fw2 = 1638400.0 / 2 / rate + (n.ew_split / 2 + n.ew_repl) / 1e12;
  cr_expect(REL_EQ(pp_gen_allreduce_seconds(2.0 * 16 * 64, 2, 100e9), ar));
  cr_expect_eq(pp_gen_allreduce_seconds(1e9, 1, 100e9), 0.0);
  cr_expect(REL_EQ(v2.time_per_sample, 2 * (3 * fw2 + 4 * ar)));
  cr_expect(REL_EQ(r2.time_per_sample, 2 * (4 * fw2 + 6 * ar)));
  cr_expect_eq(v2.parameter_size, n.params_split / 2 + n.params_repl);
  c.optimizer = PP_GEN_SGD;
  cr_expect_eq(pp_gen_tmpc_of(&c, &n, 1, 0).memory_b, 12 * 49984.0);
  c.precision = PP_GEN_FP32;
  c.optimizer = PP_GEN_ADAM;
  cr_expect_eq(pp_gen_tmpc_of(&c, &n, 1, 0).parameter_size, 2 * 49984.0);
}

/* Activation bytes per layer of every variant against Korthikanti et al.
 * 2022, Table 2 (s b h (34 + 5as/h) without parallelism; TP t:
 * sbh(10 + 24/t + 5as/(ht)); SP: sbh(34/t + 5as/(ht)); selective drops the
 * 5as/h term; full keeps the 2sbh input). */
static void expect_table2(pp_gen_config *c, double s, double b, double h, double a) {
  pp_gen_node_cost n;
  pp_gen_node_cost_of(c, PP_GEN_BLOCK, &n);
  double sbh = s * b * h, core = 5.0 * a * s / h;
  for (int t = 1; t <= 8; t *= 2) {
    double want[PP_GEN_N_VARIANTS] = {sbh * (10 + 24.0 / t + core / t), 2 * sbh,        sbh * (10 + 24.0 / t),
                                      sbh * (34.0 / t + core / t),      sbh * 34.0 / t, 2 * sbh / t};
    for (int v = 0; v < PP_GEN_N_VARIANTS; v++) {
      if (t == 1 && v >= PP_GEN_VAR_SP) continue; /* SP needs t > 1 */
      pp_gen_tmpc x = pp_gen_tmpc_variant(c, &n, t, (pp_gen_variant)v);
      cr_expect(REL_EQ(x.memory_a, want[v]), "%s t=%d: %.17g, want %.17g", pp_gen_variant_name(v), t,
                x.memory_a, want[v]);
    }
  }
}

Test(gen_variants, korthikanti_table2_activation_bytes) {
  pp_gen_config c = tiny_gpt(); /* b = 2 */
  expect_table2(&c, 16, 2, 64, 4);
  pp_gen_config big = c;
  big.model = *pp_gen_find_model("gpt3-175b");
  big.microbatch = 1;
  expect_table2(&big, 2048, 1, 12288, 96);
  /* NONE and FULL are the two TMPCs of pp_gen_tmpc_of, bit for bit */
  pp_gen_node_cost n;
  pp_gen_node_cost_of(&c, PP_GEN_BLOCK, &n);
  for (int t = 1; t <= 8; t *= 2)
    for (int r = 0; r < 2; r++) {
      pp_gen_tmpc x = pp_gen_tmpc_of(&c, &n, t, r), y = pp_gen_tmpc_variant(&c, &n, t, (pp_gen_variant)r);
      cr_expect(memcmp(&x, &y, sizeof x) == 0, "t=%d r=%d", t, r);
    }
}

Test(gen_variants, time_of_each_variant) {
  pp_gen_config c = tiny_gpt(); /* b = 2; 100 TFLOP/s x 0.5, HBM 1 TB/s, NVLink 100 GB/s */
  pp_gen_node_cost n;
  pp_gen_node_cost_of(&c, PP_GEN_BLOCK, &n);
  double s = 16, h = 64, a = 4, f = 256, b = 2, rate = 50e12, hbm = 1e12;
  /* the attention core: 4 s^2 h FLOPs, softmax 4as^2 and dropout 5as^2 bytes */
  cr_expect_eq(n.core_flops, 4 * s * s * h);
  cr_expect_eq(n.ew_core, 9 * a * s * s);
  cr_expect_eq(n.act_core, 5 * a * s * s);
  cr_expect_eq(n.gather_flops, 2 * s * h * 3 * h + 2 * s * h * f);
  for (int t = 1; t <= 8; t *= 2) {
    double fw = n.fw_flops / t / rate + (n.ew_split / t + n.ew_repl) / hbm;
    double fw_sp = n.fw_flops / t / rate + (n.ew_split + n.ew_repl) / t / hbm;
    double ar = t > 1 ? 2.0 * (t - 1) / t * (2 * s * h) / (0.8 * 100e9) : 0.0;
    double core = n.core_flops / t / rate + n.ew_core / t / hbm;
    double regather = fmax(0.0, 2 * ar / 2 - n.gather_flops / t / rate); /* two sub-blocks */
    double want[PP_GEN_N_VARIANTS] = {b * (3 * fw + 4 * ar),
                                      b * (4 * fw + 6 * ar),
                                      b * (3 * fw + core + 4 * ar),
                                      b * (3 * fw_sp + 4 * ar + regather),
                                      b * (3 * fw_sp + core + 4 * ar + regather),
                                      b * (4 * fw_sp + 6 * ar + regather)};
    for (int v = 0; v < PP_GEN_N_VARIANTS; v++) {
      pp_gen_tmpc x = pp_gen_tmpc_variant(&c, &n, t, (pp_gen_variant)v);
      cr_expect(REL_EQ(x.time_per_sample, want[v]), "%s t=%d", pp_gen_variant_name(v), t);
      /* weights, gradients, optimizer state and the sync bytes do not depend on the variant */
      cr_expect_eq(x.memory_b, pp_gen_tmpc_of(&c, &n, t, 0).memory_b);
      cr_expect_eq(x.parameter_size, pp_gen_tmpc_of(&c, &n, t, 0).parameter_size);
    }
    if (t == 2) cr_expect(regather > 0, "the tiny model's GEMMs do not hide the re-gather");
  }
}

Test(gen_variants, which_variant_applies_where) {
  pp_gen_config c = tiny_gpt();
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_BLOCK, 1, PP_GEN_VAR_SP), PP_GEN_VAR_NONE);
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_BLOCK, 1, PP_GEN_VAR_SP_SELECTIVE), PP_GEN_VAR_SELECTIVE);
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_BLOCK, 2, PP_GEN_VAR_SP_SELECTIVE),
               PP_GEN_VAR_SP_SELECTIVE);
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_ATTENTION, 4, PP_GEN_VAR_SELECTIVE), PP_GEN_VAR_SELECTIVE);
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_MLP, 4, PP_GEN_VAR_SP_SELECTIVE), PP_GEN_VAR_SP);
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_EMBEDDING, 4, PP_GEN_VAR_SP_FULL), PP_GEN_VAR_FULL);
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_HEAD, 4, PP_GEN_VAR_SELECTIVE), PP_GEN_VAR_NONE);
  c.flash_attention = 1;
  cr_expect_eq(pp_gen_variant_effective(&c, PP_GEN_BLOCK, 2, PP_GEN_VAR_SP_SELECTIVE), PP_GEN_VAR_SP);
  unsigned set = 0;
  pp_error err = {0};
  cr_expect_eq(pp_gen_parse_variants("none,full", &set, &err), PP_OK);
  cr_expect_eq(set, PP_GEN_DEFAULT_VARIANTS);
  cr_expect_eq(pp_gen_parse_variants("all", &set, &err), PP_OK);
  cr_expect_eq(set, (1u << PP_GEN_N_VARIANTS) - 1);
  cr_expect_eq(pp_gen_parse_variants("sp-selective,selective", &set, &err), PP_OK);
  cr_expect_eq(set, (1u << PP_GEN_VAR_SP_SELECTIVE) | (1u << PP_GEN_VAR_SELECTIVE));
  cr_expect_eq(pp_gen_parse_variants("sp,bogus", &set, &err), PP_ERR_USAGE);
  cr_expect(strstr(err.msg, "'bogus'") != NULL, "%s", err.msg);
  cr_expect_eq(pp_gen_parse_variants("sp,", &set, &err), PP_ERR_USAGE);
  cr_expect_eq(pp_gen_parse_variants("", &set, &err), PP_ERR_USAGE);
}

Test(gen_model, tensor_degrees) {
  pp_gen_config c = tiny_llama(); /* 8 heads, 2 KV heads */
  cr_expect(pp_gen_tp_allowed(&c, 1));
  cr_expect(pp_gen_tp_allowed(&c, 2));
  cr_expect(!pp_gen_tp_allowed(&c, 4)); /* KV heads do not divide */
  cr_expect(!pp_gen_tp_allowed(&c, 3));
  c = tiny_gpt();
  c.gpu.gpus_per_node = 2;
  cr_expect(!pp_gen_tp_allowed(&c, 4));
  c.gpu.gpus_per_node = 8;
  c.max_tp = 4;
  cr_expect(pp_gen_tp_allowed(&c, 4));
  cr_expect(!pp_gen_tp_allowed(&c, 8));
  pp_gen_config g13 = tiny_gpt();
  g13.model = *pp_gen_find_model("gpt3-13b"); /* 40 heads */
  cr_expect(pp_gen_tp_allowed(&g13, 8));
}

Test(gen_model, config_checks) {
  pp_error err;
  pp_gen_config c = tiny_gpt();
  cr_expect_eq(pp_gen_check_config(&c, &err), PP_OK);
  c.global_batch = 15;
  cr_expect_eq(pp_gen_check_config(&c, &err), PP_ERR_USAGE);
  cr_expect(strstr(err.msg, "--microbatch-size") != NULL, "%s", err.msg);
  c = tiny_gpt();
  c.model.kv_heads = 3;
  cr_expect_eq(pp_gen_check_config(&c, &err), PP_ERR_USAGE);
  c = tiny_gpt();
  c.model.hidden = 63;
  cr_expect_eq(pp_gen_check_config(&c, &err), PP_ERR_USAGE);
  c = tiny_gpt();
  c.gpu.efficiency = 1.5;
  cr_expect_eq(pp_gen_check_config(&c, &err), PP_ERR_USAGE);
}

/* Writes cfg's JSON to a temporary file and loads it with the planner. */
static pp_graph *roundtrip(const pp_gen_config *c) {
  char path[] = "/tmp/piper-test-gen-XXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  FILE *f = fdopen(fd, "w"); /* the generated graph */
  cr_assert_not_null(f);
  pp_error err = {0};
  cr_assert_eq(pp_gen_write_json(c, f, &err), PP_OK, "%s", err.msg);
  cr_assert_eq(fclose(f), 0);
  pp_graph *g = NULL;
  pp_status st = pp_graph_load_file(path, stderr, &g, &err);
  remove(path);
  cr_assert_eq(st, PP_OK, "%s", err.msg);
  return g;
}

Test(gen_json, loads_in_the_planner) {
  pp_gen_config c = tiny_llama(); /* t in {1, 2} */
  c.split_blocks = 1;
  pp_graph *g = roundtrip(&c);
  cr_expect_eq(g->n_nodes, 1 + 2 * 2 + 1 + 1);
  cr_expect_eq(g->n_edges, g->n_nodes - 1);
  cr_expect_eq(g->max_devices, 8);
  cr_expect_eq(g->microbatches, 16);
  cr_expect_eq(g->max_memory, 80e9);
  cr_expect_eq(g->bandwidth, 10e9);
  for (int v = 0; v < g->n_nodes; v++) {
    cr_expect_eq(g->nodes[v].n_lists, 2);
    for (int l = 0; l < g->nodes[v].n_lists; l++) {
      cr_expect_eq(g->nodes[v].lists[l].count, 2);
      cr_expect_str_eq(g->nodes[v].lists[l].tmpcs[0].id, "vanilla");
      cr_expect_str_eq(g->nodes[v].lists[l].tmpcs[1].id, "activation recomp");
    }
  }
  cr_expect_str_eq(g->nodes[1].name, "block.0.attention");
  cr_expect_str_eq(g->nodes[g->n_nodes - 1].name, "head");
  /* the activation / t_max (t <= 2 here); a TMPC of degree t adds 1/t - 1/2 */
  cr_expect_eq(g->edges[0].cost, 2.0 * 16 * 64 / 2);
  cr_expect_eq(g->nodes[1].lists[0].tmpcs[0].sync_fw[0], 2.0 * 16 * 64 / 2);
  cr_expect_eq(g->nodes[1].lists[1].tmpcs[0].sync_fw[0], 0.0);
  cr_expect_eq(g->tokens_per_sample, 16.0);
  cr_expect(g->flops_per_sample > 0 && g->peak_flops == 100e12);
  pp_graph_free(g);
}

Test(gen_json, variants_as_tmpcs) {
  pp_gen_config c = tiny_gpt(); /* t in {1, 2, 4} (4 heads) */
  c.variants = (1u << PP_GEN_N_VARIANTS) - 1;
  pp_graph *g = roundtrip(&c);
  static const char *const ids[] = {"vanilla",
                                    "activation recomp",
                                    "selective recomp",
                                    "seq parallel",
                                    "seq parallel + selective recomp",
                                    "seq parallel + activation recomp"};
  for (int v = 0; v < g->n_nodes; v++) {
    int layer = strncmp(g->nodes[v].name, "block.", 6) == 0;
    for (int l = 0; l < g->nodes[v].n_lists; l++) {
      const pp_tmpc_list *L = &g->nodes[v].lists[l];
      int want = !layer ? 2 : L->t == 1 ? 3 : 6;
      cr_expect_eq(L->count, want, "%s t=%d: %d TMPCs", g->nodes[v].name, L->t, L->count);
      for (int i = 0; i < L->count && i < want; i++) cr_expect_str_eq(L->tmpcs[i].id, ids[i]);
    }
  }
  pp_graph_free(g);
  /* the default set writes exactly the two TMPCs of before */
  pp_gen_config d = tiny_gpt();
  char *x = NULL, *y = NULL;
  size_t nx = 0, ny = 0;
  FILE *fx = open_memstream(&x, &nx), *fy = open_memstream(&y, &ny);
  cr_assert(fx && fy);
  cr_assert_eq(pp_gen_write_json(&d, fx, NULL), PP_OK);
  d.variants = PP_GEN_DEFAULT_VARIANTS;
  cr_assert_eq(pp_gen_write_json(&d, fy, NULL), PP_OK);
  fclose(fx);
  fclose(fy);
  cr_expect(nx == ny && memcmp(x, y, nx) == 0);
  free(x);
  free(y);
}

Test(gen_json, encoder_has_no_final_norm) {
  pp_gen_config c = tiny_gpt();
  c.model.family = PP_GEN_ENCODER;
  c.model.type_vocab = 2;
  pp_graph *g = roundtrip(&c);
  cr_expect_eq(g->n_nodes, 1 + 2 + 1);
  cr_expect_eq(g->n_degrees, 3); /* 4 heads: t = 1, 2, 4 */
  pp_graph_free(g);
}

/* Runs pp_gen_main on a NULL-terminated argument list; returns the exit code. */
static int run_gen(const char *const *args) {
  char *argv[32];
  int argc = 0;
  for (; args[argc]; argc++) argv[argc] = (char *)args[argc];
  argv[argc] = NULL;
  FILE *out = tmpfile(), *err = tmpfile(); /* discarded output and messages */
  cr_assert(out && err);
  int rc = pp_gen_main(argc, argv, out, err);
  fclose(out);
  fclose(err);
  return rc;
}

Test(gen_cli, exit_codes) {
  cr_expect_eq(run_gen((const char *[]){"gen", "--list", NULL}), 0);
  cr_expect_eq(run_gen((const char *[]){"gen", "--help", NULL}), 0);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-large", "--gpu", "a100-40gb", NULL}), 0);
  cr_expect_eq(run_gen((const char *[]){"gen", NULL}), 2);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-large", NULL}), 2);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-huge", "--gpu", "a100-40gb", NULL}), 2);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-large", "--gpu", "a100-40gb", "--devices", "0", NULL}),
               2);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-large", "--gpu", "a100-40gb", "--bogus", NULL}), 2);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-large", "--gpu", "a100-40gb", "--devices", NULL}), 2);
  cr_expect_eq(
      run_gen((const char *[]){"gen", "bert-large", "--gpu", "a100-40gb", "--nvlink", "9XB/s", NULL}), 2);
  cr_expect_eq(run_gen((const char *[]){"gen", "bert-large", "bert-large", "--gpu", "a100-40gb", NULL}), 2);
}
