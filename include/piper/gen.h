/*
 * gen.h - the model generator: Piper JSON from model and hardware presets.
 */
#ifndef PIPER_GEN_H
#define PIPER_GEN_H

#include <stdio.h>

/* Runs `piper gen` with argv[0] = "gen".  Writes the JSON to out (or to the
 * file named by -o), messages to err.  Returns the process exit code. */
int pp_gen_main(int argc, char **argv, FILE *out, FILE *err);

#endif /* PIPER_GEN_H */
