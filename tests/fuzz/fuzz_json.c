/*
 * fuzz_json.c - libFuzzer target: the JSON model loader on arbitrary bytes.
 * Any input must give a graph or an error, never a crash, leak or UB.
 */
#include <stddef.h>
#include <stdint.h>

#include "piper/graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pp_graph *g = NULL;
  pp_error err = {0};
  if (pp_graph_load_buffer("fuzz.json", (const char *)data, size, NULL, &g, &err) == PP_OK) pp_graph_free(g);
  return 0;
}
