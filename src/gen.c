/*
 * gen.c - the model generator (placeholder until the generator lands).
 */
#include "piper/gen.h"

#include "piper/error.h"

int pp_gen_main(int argc, char **argv, FILE *out, FILE *err) {
  (void)argc;
  (void)argv;
  (void)out;
  fprintf(err, "piper gen: not available in this build\n");
  return PP_EXIT_FAILURE;
}
