/*
 * cmd_gen.c - `piper gen`: command line and atomic output file.
 *
 * One option table drives getopt_long and --help.  The JSON itself is written
 * by pp_gen_write_json (src/gen/gen_json.c).
 */
#define _POSIX_C_SOURCE 200809L
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "piper/file.h"
#include "piper/gen.h"
#include "piper/problem.h"
#include "piper/units.h"

/* ---- command line ---- */

/* The model's options run from O_LAYERS to O_DROPOUT, the accelerator's
 * from O_GPUMEM to O_HBM (apply_option dispatches on these ranges). */
enum {
  O_GPU = 1000,
  O_DEVICES,
  O_GBATCH,
  O_MBATCH,
  O_LAYERS,
  O_HIDDEN,
  O_HEADS,
  O_KVHEADS,
  O_FFN,
  O_SEQ,
  O_VOCAB,
  O_TYPEVOCAB,
  O_FAMILY,
  O_MLP,
  O_NORM,
  O_POS,
  O_TIED,
  O_DROPOUT,
  O_GPUMEM,
  O_FLOPS,
  O_EFF,
  O_NVLINK,
  O_NETWORK,
  O_GPN,
  O_HBM,
  O_MAXTP,
  O_SPLIT,
  O_FLASH,
  O_PRECISION,
  O_OPTIMIZER,
  O_OUTPUT,
  O_PARTS,
  O_TWOLEVEL,
  O_VARIANTS,
  O_LIST,
  O_HELP
};

static const pp_cli_option gen_opts[] = {
    {"gpu", 1, O_GPU, "NAME", "accelerator preset (required; see --list)"},
    {"devices", 1, O_DEVICES, "K", "maxDevices: GPUs available (default: the model preset's)"},
    {"global-batch", 1, O_GBATCH, "B", "sequences per batch (default: the model preset's)"},
    {"microbatch-size", 1, O_MBATCH, "b", "sequences per microbatch; mbsInBatch = B / b (default 1)"},
    {"layers", 1, O_LAYERS, "L", "transformer blocks"},
    {"hidden", 1, O_HIDDEN, "H", "model width h"},
    {"heads", 1, O_HEADS, "A", "attention heads a"},
    {"kv-heads", 1, O_KVHEADS, "G", "key/value heads (grouped-query attention; default: as preset)"},
    {"ffn", 1, O_FFN, "F", "MLP inner width f"},
    {"seq", 1, O_SEQ, "S", "sequence length s in tokens"},
    {"vocab", 1, O_VOCAB, "V", "vocabulary size"},
    {"type-vocab", 1, O_TYPEVOCAB, "N", "token-type embedding rows (BERT: 2)"},
    {"family", 1, O_FAMILY, "F", "encoder (BERT-style, post-norm) or decoder (GPT/Llama-style, pre-norm)"},
    {"mlp", 1, O_MLP, "KIND", "gelu (two matrices) or swiglu (gated, three matrices)"},
    {"norm", 1, O_NORM, "KIND", "layernorm (with biases everywhere) or rmsnorm (no biases)"},
    {"positions", 1, O_POS, "KIND", "learned (s x h embedding) or rotary (no weights)"},
    {"tied-embeddings", 1, O_TIED, "yes|no", "the LM head reuses the embedding matrix"},
    {"dropout", 1, O_DROPOUT, "yes|no", "dropout layers present (their masks are stored)"},
    {"gpu-memory", 1, O_GPUMEM, "BYTES", "maxMemoryPerDevice, e.g. 80GB, 40GiB"},
    {"flops", 1, O_FLOPS, "FLOP/s", "peak dense FLOP/s per GPU, e.g. 312e12 or 312TFLOP/s"},
    {"efficiency", 1, O_EFF, "X", "achievable fraction of the peak, in (0, 1] (default 0.5)"},
    {"nvlink", 1, O_NVLINK, "BYTES/s", "intra-node bandwidth per GPU and direction, e.g. 300GB/s"},
    {"network", 1, O_NETWORK, "BYTES/s", "inter-node bandwidth per GPU (the file's bandwidth), e.g. 25GB/s"},
    {"gpus-per-node", 1, O_GPN, "N", "GPUs per node (bounds the tensor-parallel degree)"},
    {"memory-bandwidth", 1, O_HBM, "BYTES/s",
     "device memory bandwidth for memory-bound kernels, e.g. 2039GB/s"},
    {"memory-parts", 0, O_PARTS, NULL,
     "write each TMPC's weightBytes, gradientBytes and optimizerBytes (for plan --zero)"},
    {"two-level", 0, O_TWOLEVEL, NULL,
     "write devicesPerNode and intraNodeBandwidth (the preset's GPUs per node and NVLink bandwidth)"},
    {"variants", 1, O_VARIANTS, "LIST",
     "TMPCs per layer and t, comma-separated: none, full, selective, sp, sp-selective, sp-full or all "
     "(default none,full)"},
    {"max-tp", 1, O_MAXTP, "T", "largest tensor-parallel degree emitted: 1, 2, 4 or 8 (default 8)"},
    {"split-blocks", 0, O_SPLIT, NULL, "one node per attention and per MLP instead of one per block"},
    {"flash-attention", 0, O_FLASH, NULL, "attention scores are not stored (FlashAttention)"},
    {"precision", 1, O_PRECISION, "P", "bf16 (default), fp16 or fp32"},
    {"optimizer", 1, O_OPTIMIZER, "O", "adam (default) or sgd (with momentum)"},
    {"output", 1, O_OUTPUT, "FILE", "write to FILE (atomically) instead of standard output; also -o"},
    {"list", 0, O_LIST, NULL, "list the model and accelerator presets"},
    {"help", 0, O_HELP, NULL, "show this help; also -h"},
};

#define N_GEN_OPTS ((int)(sizeof gen_opts / sizeof gen_opts[0]))

/* Parsed command line. */
typedef struct gen_args {
  const char *model_name; /* positional MODEL */
  const char *gpu_name;   /* --gpu */
  const char *output;     /* -o FILE or NULL for out */
  int list, help;
} gen_args;

static void gen_help(FILE *out) {
  fprintf(out,
          "usage: piper gen MODEL --gpu GPU [options] [-o FILE]\n\n"
          "Writes a model graph in Piper's JSON format from a transformer preset and an accelerator\n"
          "preset, using an analytic cost model (FLOPs / achievable FLOP/s, Korthikanti et al. 2022\n"
          "activation memory, ring all-reduce times; see docs/generator.md).  Every preset value can be\n"
          "overridden.  Example:\n"
          "  piper gen llama2-70b --gpu h100-80gb --devices 512 > x.json && piper plan x.json\n\n"
          "Options:\n");
  pp_cli_print_options(out, gen_opts, N_GEN_OPTS);
  fprintf(out, "\nSizes take B, KiB, MiB, GiB, TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000);\n"
               "bandwidths may end in /s.\n\n"
               "Exit codes:\n"
               "  0   the graph was written\n"
               "  1   I/O failure (the output file is left untouched)\n"
               "  2   invalid usage (also: -o in a folder that does not exist, or naming a folder)\n");
}

static pp_status parse_int_opt(const char *v, long long lo, long long hi, const char *what, int *out,
                               pp_error *err) {
  long long x;
  pp_status st = pp_parse_int(v, lo, hi, what, &x, err);
  if (st == PP_OK) *out = (int)x;
  return st;
}

/* Parses one of two words into 0/1 (first word -> 0). */
static pp_status parse_choice(const char *v, const char *w0, const char *w1, const char *what, int *out,
                              pp_error *err) {
  if (strcmp(v, w0) == 0)
    *out = 0;
  else if (strcmp(v, w1) == 0)
    *out = 1;
  else
    return pp_error_set(err, PP_ERR_USAGE, "%s: expected %s or %s, got '%s'", what, w0, w1, v);
  return PP_OK;
}

/* Parses FLOP/s: a number, optionally followed by GFLOP/s, TFLOP/s or PFLOP/s. */
static pp_status parse_flops(const char *v, double *out, pp_error *err) {
  static const struct {
    const char *suffix;
    double factor;
  } u[] = {{"", 1.0}, {"GFLOP/s", 1e9}, {"TFLOP/s", 1e12}, {"PFLOP/s", 1e15}};
  errno = 0;
  char *end;
  double x = strtod(v, &end);
  if (end == v || errno == ERANGE) return pp_error_set(err, PP_ERR_USAGE, "--flops: '%s' is not a number", v);
  for (size_t i = 0; i < sizeof u / sizeof u[0]; i++) {
    if (strcmp(end, u[i].suffix) == 0) {
      x *= u[i].factor;
      if (!isfinite(x) || !(x > 0))
        return pp_error_set(err, PP_ERR_USAGE, "--flops: must be > 0, got '%s'", v);
      *out = x;
      return PP_OK;
    }
  }
  return pp_error_set(err, PP_ERR_USAGE, "--flops: unknown unit '%s' (use GFLOP/s, TFLOP/s or PFLOP/s)", end);
}

static pp_status parse_fraction(const char *v, const char *what, double *out, pp_error *err) {
  errno = 0;
  char *end;
  double x = strtod(v, &end);
  if (end == v || *end || errno == ERANGE || !(x > 0 && x <= 1))
    return pp_error_set(err, PP_ERR_USAGE, "%s: expected a number in (0, 1], got '%s'", what, v);
  *out = x;
  return PP_OK;
}

/* Applies model option id (O_LAYERS..O_DROPOUT) with value v to m. */
static pp_status apply_model_option(pp_gen_model *m, int id, const char *v, pp_error *err) {
  int x;
  pp_status st;
  switch (id) {
  case O_LAYERS:
    return parse_int_opt(v, 1, 100000, "--layers", &m->layers, err);
  case O_HIDDEN:
    return parse_int_opt(v, 1, 10000000, "--hidden", &m->hidden, err);
  case O_HEADS:
    return parse_int_opt(v, 1, 1000000, "--heads", &m->heads, err);
  case O_KVHEADS:
    return parse_int_opt(v, 1, 1000000, "--kv-heads", &m->kv_heads, err);
  case O_FFN:
    return parse_int_opt(v, 1, 100000000, "--ffn", &m->ffn, err);
  case O_SEQ:
    return parse_int_opt(v, 1, 100000000, "--seq", &m->seq, err);
  case O_VOCAB:
    return parse_int_opt(v, 1, 100000000, "--vocab", &m->vocab, err);
  case O_TYPEVOCAB:
    return parse_int_opt(v, 0, 1000000, "--type-vocab", &m->type_vocab, err);
  case O_FAMILY:
    if ((st = parse_choice(v, "encoder", "decoder", "--family", &x, err))) return st;
    m->family = x ? PP_GEN_DECODER : PP_GEN_ENCODER;
    return PP_OK;
  case O_MLP:
    return parse_choice(v, "gelu", "swiglu", "--mlp", &m->gated_mlp, err);
  case O_NORM:
    if ((st = parse_choice(v, "rmsnorm", "layernorm", "--norm", &m->biases, err))) return st;
    return PP_OK;
  case O_POS:
    if ((st = parse_choice(v, "rotary", "learned", "--positions", &m->learned_positions, err))) return st;
    return PP_OK;
  case O_TIED:
    return parse_choice(v, "no", "yes", "--tied-embeddings", &m->tied_embeddings, err);
  case O_DROPOUT:
    return parse_choice(v, "no", "yes", "--dropout", &m->dropout, err);
  }
  return pp_error_set(err, PP_ERR_INTERNAL, "unhandled option %d", id);
}

/* Applies accelerator option id (O_GPUMEM..O_HBM) with value v to g. */
static pp_status apply_gpu_option(pp_gen_gpu *g, int id, const char *v, pp_error *err) {
  switch (id) {
  case O_GPUMEM:
    return pp_parse_size(v, 0, "--gpu-memory", &g->memory, err);
  case O_FLOPS:
    return parse_flops(v, &g->peak_flops, err);
  case O_EFF:
    return parse_fraction(v, "--efficiency", &g->efficiency, err);
  case O_NVLINK:
    return pp_parse_size(v, 1, "--nvlink", &g->nvlink, err);
  case O_NETWORK:
    return pp_parse_size(v, 1, "--network", &g->network, err);
  case O_GPN:
    return parse_int_opt(v, 1, 1024, "--gpus-per-node", &g->gpus_per_node, err);
  case O_HBM:
    return pp_parse_size(v, 1, "--memory-bandwidth", &g->hbm, err);
  }
  return pp_error_set(err, PP_ERR_INTERNAL, "unhandled option %d", id);
}

/* Applies option id with value v to the configuration (model and GPU
 * already filled from the presets). */
static pp_status apply_option(pp_gen_config *c, int id, const char *v, pp_error *err) {
  if (id >= O_LAYERS && id <= O_DROPOUT) return apply_model_option(&c->model, id, v, err);
  if (id >= O_GPUMEM && id <= O_HBM) return apply_gpu_option(&c->gpu, id, v, err);
  switch (id) {
  case O_DEVICES:
    return parse_int_opt(v, 1, PP_MAX_DEVICES, "--devices", &c->devices, err);
  case O_GBATCH:
    return parse_int_opt(v, 1, 1000000000, "--global-batch", &c->global_batch, err);
  case O_MBATCH:
    return parse_int_opt(v, 1, 1000000000, "--microbatch-size", &c->microbatch, err);
  case O_MAXTP:
    return parse_int_opt(v, 1, 8, "--max-tp", &c->max_tp, err);
  case O_SPLIT:
    c->split_blocks = 1;
    return PP_OK;
  case O_FLASH:
    c->flash_attention = 1;
    return PP_OK;
  case O_PARTS:
    c->memory_parts = 1;
    return PP_OK;
  case O_TWOLEVEL:
    c->two_level = 1;
    return PP_OK;
  case O_VARIANTS:
    return pp_gen_parse_variants(v, &c->variants, err);
  case O_PRECISION:
    if (strcmp(v, "bf16") == 0)
      c->precision = PP_GEN_BF16;
    else if (strcmp(v, "fp16") == 0)
      c->precision = PP_GEN_FP16;
    else if (strcmp(v, "fp32") == 0)
      c->precision = PP_GEN_FP32;
    else
      return pp_error_set(err, PP_ERR_USAGE, "--precision: expected bf16, fp16 or fp32, got '%s'", v);
    return PP_OK;
  case O_OPTIMIZER:
    if (strcmp(v, "adam") == 0)
      c->optimizer = PP_GEN_ADAM;
    else if (strcmp(v, "sgd") == 0)
      c->optimizer = PP_GEN_SGD;
    else
      return pp_error_set(err, PP_ERR_USAGE, "--optimizer: expected adam or sgd, got '%s'", v);
    return PP_OK;
  }
  return pp_error_set(err, PP_ERR_INTERNAL, "unhandled option %d", id);
}

/* Parses argv in two passes: the first finds MODEL, --gpu, -o, --list and
 * --help; the second (after the presets are copied into cfg) applies the
 * overrides in order. */
/* First pass over the options: the ones that pick the presets and the
 * output (the overrides wait for the second pass, over the presets). */
static pp_status first_pass(void *ap, int id, const char *v, pp_error *err) {
  gen_args *a = ap;
  if (id == O_HELP || id == 'h')
    a->help = 1;
  else if (id == O_LIST)
    a->list = 1;
  else if (id == O_GPU)
    a->gpu_name = v;
  else if (id == O_OUTPUT || id == 'o')
    a->output = v;
  return PP_OK;
}

/* Second pass: every override, applied over the presets in cfg. */
static pp_status second_pass(void *cp, int id, const char *v, pp_error *err) {
  if (id == O_HELP || id == 'h' || id == O_LIST || id == O_GPU || id == O_OUTPUT || id == 'o') return PP_OK;
  return apply_option(cp, id, v, err);
}

static pp_status parse_args(int argc, char **argv, gen_args *a, pp_gen_config *cfg, pp_error *err) {
  memset(a, 0, sizeof *a);
  const char *pos[1];
  int n_pos;
  for (int pass = 0; pass < 2; pass++) {
    pp_status st =
        pass == 0
            ? pp_cli_getopt(argc, argv, gen_opts, N_GEN_OPTS, "ho:", first_pass, a, pos, 1, &n_pos, err)
            : pp_cli_getopt(argc, argv, gen_opts, N_GEN_OPTS, "ho:", second_pass, cfg, pos, 1, &n_pos, err);
    if (st) return st;
    if (pass == 0 && n_pos == 1) a->model_name = pos[0];
    if (pass == 1) break;
    if (a->help || a->list) return PP_OK;
    if (!a->model_name) return pp_error_set(err, PP_ERR_USAGE, "missing MODEL (try 'piper gen --list')");
    if (!a->gpu_name) return pp_error_set(err, PP_ERR_USAGE, "missing --gpu GPU (try 'piper gen --list')");
    const pp_gen_model *m = pp_gen_find_model(a->model_name);
    if (!m)
      return pp_error_set(err, PP_ERR_USAGE, "unknown model '%s' (try 'piper gen --list')", a->model_name);
    const pp_gen_gpu *g = pp_gen_find_gpu(a->gpu_name);
    if (!g) return pp_error_set(err, PP_ERR_USAGE, "unknown GPU '%s' (try 'piper gen --list')", a->gpu_name);
    memset(cfg, 0, sizeof *cfg);
    cfg->model = *m;
    cfg->gpu = *g;
    cfg->devices = m->default_devices;
    cfg->global_batch = m->default_global_batch;
    cfg->microbatch = m->default_microbatch;
    cfg->max_tp = 8;
    cfg->precision = PP_GEN_BF16;
    cfg->optimizer = PP_GEN_ADAM;
  }
  pp_status st = pp_gen_check_config(cfg, err);
  if (st) return st;
  if (cfg->global_batch / cfg->microbatch > PP_MAX_MICROBATCHES)
    return pp_error_set(err, PP_ERR_USAGE, "too many microbatches per batch (at most %d)",
                        PP_MAX_MICROBATCHES);
  return PP_OK;
}

/* pp_gen_write_json in the form pp_file_write takes (ctx: the config). */
static pp_status write_graph(FILE *f, void *ctx, pp_error *err) { return pp_gen_write_json(ctx, f, err); }

/* Writes the graph to path atomically through the shared helper
 * (pp_file_write in src/base/file.c): a uniquely named temporary file in
 * the same folder, synced and renamed over path.  On failure the temporary
 * is removed and path is left as it was. */
static pp_status write_file(const pp_gen_config *cfg, const char *path, pp_error *err) {
  return pp_file_write(path, write_graph, (void *)cfg, err);
}

int pp_gen_main(int argc, char **argv, FILE *out, FILE *errf) {
  pp_error err = {0};
  gen_args a;
  pp_gen_config cfg;
  memset(&cfg, 0, sizeof cfg);
  pp_status st = parse_args(argc, argv, &a, &cfg, &err);
  if (st) goto done;
  if (a.help) {
    gen_help(out);
    return PP_EXIT_OK;
  }
  if (a.list) {
    pp_gen_list_presets(out);
    return PP_EXIT_OK;
  }
  if (a.output)
    st = write_file(&cfg, a.output, &err);
  else
    st = pp_gen_write_json(&cfg, out, &err);
done:
  if (st) fprintf(errf, "piper gen: %s\n", err.msg);
  return pp_status_exit_code(st);
}
