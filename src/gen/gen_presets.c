/*
 * gen_presets.c - model and accelerator presets for the generator.
 *
 * Two const tables.  Every number has a source, named in the entry's source
 * string and discussed in docs/generator.md ("Presets").  Memory sizes are
 * the vendors' decimal gigabytes (1 GB = 1e9 B), which leaves a few percent
 * of the real capacity (GiB) for the CUDA context and allocator slack.
 */
#include <string.h>

#include "piper/gen.h"

/* Field order: name, source, family, layers, hidden, heads, kv_heads, ffn,
 * seq, vocab, type_vocab, gated_mlp, biases, learned_positions,
 * tied_embeddings, dropout, default_devices, default_global_batch,
 * default_microbatch, published_params. */
static const pp_gen_model models[] = {
    {"bert-large",
     "Devlin et al. 2019 (BERT), Table/Sec. 3: L=24, H=1024, A=16, 340M params; batch 256 x 512 tokens",
     PP_GEN_ENCODER,
     24,
     1024,
     16,
     16,
     4096,
     512,
     30522,
     2,
     0,
     1,
     1,
     1,
     1,
     64,
     256,
     1,
     340e6},
    {"gpt3-1.3b",
     "Brown et al. 2020 (GPT-3), Table 2.1: 24 layers, d_model 2048, 16 heads, ctx 2048, batch 1M tokens",
     PP_GEN_DECODER,
     24,
     2048,
     16,
     16,
     8192,
     2048,
     50257,
     0,
     0,
     1,
     1,
     1,
     1,
     64,
     512,
     1,
     1.3e9},
    {"gpt3-13b",
     "Brown et al. 2020, Table 2.1: 40 layers, 40 heads x 128 (d_model 5120 as in Megatron-LM), batch 2M "
     "tokens",
     PP_GEN_DECODER,
     40,
     5120,
     40,
     40,
     20480,
     2048,
     50257,
     0,
     0,
     1,
     1,
     1,
     1,
     256,
     1024,
     1,
     13.0e9},
    {"gpt3-175b",
     "Brown et al. 2020, Table 2.1: 96 layers, d_model 12288, 96 heads; batch 1536 as in Megatron-LM",
     PP_GEN_DECODER,
     96,
     12288,
     96,
     96,
     49152,
     2048,
     50257,
     0,
     0,
     1,
     1,
     1,
     1,
     1024,
     1536,
     1,
     175.0e9},
    {"llama2-7b",
     "Touvron et al. 2023 (Llama 2), Table 1 and LLaMA Table 2: 32 layers, dim 4096, 6.7B; batch 4M tokens",
     PP_GEN_DECODER,
     32,
     4096,
     32,
     32,
     11008,
     4096,
     32000,
     0,
     1,
     0,
     0,
     0,
     0,
     64,
     1024,
     1,
     6.7e9},
    {"llama2-70b",
     "Touvron et al. 2023 (Llama 2): 80 layers, dim 8192, 64 heads, 8 KV heads (GQA), ffn 28672",
     PP_GEN_DECODER,
     80,
     8192,
     64,
     8,
     28672,
     4096,
     32000,
     0,
     1,
     0,
     0,
     0,
     0,
     512,
     1024,
     1,
     70e9},
    {"llama3.1-405b",
     "Llama Team 2024 (The Llama 3 Herd of Models), Table 3: 126 layers, dim 16384, ffn 53248, 128/8 heads",
     PP_GEN_DECODER,
     126,
     16384,
     128,
     8,
     53248,
     8192,
     128256,
     0,
     1,
     0,
     0,
     0,
     0,
     16384,
     2048,
     1,
     405e9},
};

/* Field order: name, source, peak_flops, efficiency, memory, nvlink (per
 * direction), network (per GPU), gpus_per_node, hbm. */
static const pp_gen_gpu gpus[] = {
    {"v100-32gb",
     "NVIDIA V100 datasheet (SXM): 125 TFLOP/s fp16 tensor, 32 GB HBM2 at 900 GB/s, NVLink 300 GB/s; DGX-2: "
     "16 GPUs on NVSwitch, 8 x 100 Gb/s IB per 16 GPUs",
     125e12, 0.7, 32e9, 150e9, 6.25e9, 16, 900e9},
    {"a100-40gb",
     "NVIDIA A100 datasheet (SXM4): 312 TFLOP/s bf16 dense, 40 GB, NVLink 600 GB/s; DGX A100: 200 Gb/s IB "
     "per GPU",
     312e12, 0.65, 40e9, 300e9, 25e9, 8, 1555e9},
    {"a100-80gb",
     "NVIDIA A100 datasheet (SXM4): 312 TFLOP/s bf16 dense, 80 GB, NVLink 600 GB/s; DGX A100: 200 Gb/s IB "
     "per GPU",
     312e12, 0.65, 80e9, 300e9, 25e9, 8, 2039e9},
    {"h100-80gb",
     "NVIDIA H100 datasheet (SXM5): 989 TFLOP/s bf16 dense, 80 GB, NVLink 900 GB/s; DGX H100: 400 Gb/s IB "
     "per GPU",
     989e12, 0.65, 80e9, 450e9, 50e9, 8, 3350e9},
    {"h200-141gb",
     "NVIDIA H200 datasheet (SXM): 989 TFLOP/s bf16 dense, 141 GB, NVLink 900 GB/s; DGX H200: 400 Gb/s IB "
     "per GPU",
     989e12, 0.65, 141e9, 450e9, 50e9, 8, 4800e9},
};

#define N_MODELS ((int)(sizeof models / sizeof models[0]))
#define N_GPUS   ((int)(sizeof gpus / sizeof gpus[0]))

const pp_gen_model *pp_gen_find_model(const char *name) {
  for (int i = 0; name && i < N_MODELS; i++)
    if (strcmp(models[i].name, name) == 0) return &models[i];
  return NULL;
}

const pp_gen_gpu *pp_gen_find_gpu(const char *name) {
  for (int i = 0; name && i < N_GPUS; i++)
    if (strcmp(gpus[i].name, name) == 0) return &gpus[i];
  return NULL;
}

const pp_gen_model *pp_gen_model_at(int i) { return i >= 0 && i < N_MODELS ? &models[i] : NULL; }

const pp_gen_gpu *pp_gen_gpu_at(int i) { return i >= 0 && i < N_GPUS ? &gpus[i] : NULL; }

void pp_gen_list_presets(FILE *out) {
  fprintf(out, "Models (override any field with --layers, --hidden, ...):\n");
  fprintf(out, "  %-14s %-7s %6s %6s %5s %4s %6s %5s %6s %8s %9s %9s\n", "name", "family", "layers", "hidden",
          "heads", "kv", "ffn", "seq", "vocab", "params", "published", "K/B/b");
  for (int i = 0; i < N_MODELS; i++) {
    const pp_gen_model *m = &models[i];
    char kbb[32];
    snprintf(kbb, sizeof kbb, "%d/%d/%d", m->default_devices, m->default_global_batch, m->default_microbatch);
    fprintf(out, "  %-14s %-7s %6d %6d %5d %4d %6d %5d %6d %7.2fB %8.2fB %9s\n", m->name,
            m->family == PP_GEN_ENCODER ? "encoder" : "decoder", m->layers, m->hidden, m->heads, m->kv_heads,
            m->ffn, m->seq, m->vocab, pp_gen_param_count(m) / 1e9, m->published_params / 1e9, kbb);
    fprintf(out, "  %-14s   %s\n", "", m->source);
  }
  fprintf(out, "\nAccelerators (override with --flops, --efficiency, --gpu-memory, --nvlink, --network, "
               "--gpus-per-node):\n");
  fprintf(out, "  %-11s %12s %10s %8s %14s %15s %9s\n", "name", "peak TFLOP/s", "efficiency", "memory",
          "NVLink GB/s", "network GB/s", "per node");
  for (int i = 0; i < N_GPUS; i++) {
    const pp_gen_gpu *g = &gpus[i];
    fprintf(out, "  %-11s %12.0f %10.2f %6.0fGB %14.0f %15.0f %9d\n", g->name, g->peak_flops / 1e12,
            g->efficiency, g->memory / 1e9, g->nvlink / 1e9, g->network / 1e9, g->gpus_per_node);
    fprintf(out, "  %-11s   %s\n", "", g->source);
  }
  fprintf(out, "\nK/B/b: default devices, global batch (sequences) and microbatch size.\n"
               "NVLink is per GPU and direction; network is the inter-node bandwidth per GPU.\n");
}
