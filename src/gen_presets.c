/*
 * gen_presets.c - model and accelerator presets for the generator.
 */
typedef int pp_gen_presets_placeholder;
