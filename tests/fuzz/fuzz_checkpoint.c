/*
 * fuzz_checkpoint.c - libFuzzer target: the checkpoint reader on arbitrary
 * bytes, for the run `piper plan inputs/gpt3-1.3b-a100-80gb.json --devices 8`
 * (the graph, its downsets and identity are built once; the seed corpus
 * holds a valid checkpoint of that run, so mutations reach the tables).
 * PIPER_FUZZ_INPUT names the input file (set by tests/fuzz/run.sh).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "piper/archive.h"
#include "piper/downsets.h"
#include "piper/dp.h"

static char path[64];
static pp_graph *g;
static pp_downsets *ds;
static pp_problem prob;
static pp_dp *dp;
static char identity[65];

static void remove_file(void) { unlink(path); }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  const char *in = getenv("PIPER_FUZZ_INPUT");
  pp_error err = {0};
  if (!in || pp_graph_load_file(in, NULL, &g, &err) || pp_downsets_enumerate(g, 1000000, &ds, &err)) {
    fprintf(stderr, "fuzz_checkpoint: set PIPER_FUZZ_INPUT to a model graph (%s)\n", err.msg);
    exit(1);
  }
  /* the defaults of `piper plan INPUT --devices 8` */
  prob = (pp_problem){
      .devices = 8, .memory = g->max_memory, .microbatches = (int)g->microbatches, .bandwidth = g->bandwidth};
  pp_archive_identity(g, &prob, identity);
  if (pp_dp_create(g, &prob, ds, 0, &dp, &err)) {
    fprintf(stderr, "fuzz_checkpoint: %s\n", err.msg);
    exit(1);
  }
  snprintf(path, sizeof path, "/tmp/piper-fuzz-ckpt-%d.h5", (int)getpid());
  atexit(remove_file);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return 0;
  fwrite(data, 1, size, f);
  fclose(f);
  int layers = 0;
  char *buf = NULL;
  size_t len = 0;
  pp_error err = {0};
  pp_checkpoint_read(path, identity, ds, &prob, dp, &layers, &buf, &len, &err);
  free(buf);
  return 0;
}
