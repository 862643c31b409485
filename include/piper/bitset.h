/*
 * bitset.h - fixed-width bitsets over the nodes of a graph (words of 64).
 * Pure inline functions over caller-owned words; no checks (the caller
 * keeps i below the bitset's size); not collective.
 */
#ifndef PIPER_BITSET_H
#define PIPER_BITSET_H

#include <stdint.h>
#include <string.h>

/* The number of 64-bit words for a bitset of n bits. */
static inline int pp_bits_words(int n) { return (n + 63) / 64; }
/* Bit i of b (0 or 1); sets it; clears it. */
static inline int pp_bit_get(const uint64_t *b, int i) { return (int)((b[i >> 6] >> (i & 63)) & 1u); }
static inline void pp_bit_set(uint64_t *b, int i) { b[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void pp_bit_clear(uint64_t *b, int i) { b[i >> 6] &= ~((uint64_t)1 << (i & 63)); }

/* The number of bits set in b's words. */
static inline int pp_bits_count(const uint64_t *b, int words) {
  int c = 0;
  for (int w = 0; w < words; w++) c += __builtin_popcountll(b[w]);
  return c;
}

/* 1 if a is a subset of b. */
static inline int pp_bits_subset(const uint64_t *a, const uint64_t *b, int words) {
  for (int w = 0; w < words; w++)
    if (a[w] & ~b[w]) return 0;
  return 1;
}

/* A 64-bit hash of b's words (for hash tables of downsets; equal sets
 * hash alike, the same value on every rank and run). */
static inline uint64_t pp_bits_hash(const uint64_t *b, int words) {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (int w = 0; w < words; w++) {
    uint64_t x = b[w] + h + 0x9e3779b97f4a7c15ull * (uint64_t)(w + 1);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    h ^= x ^ (x >> 31);
  }
  return h;
}

#endif /* PIPER_BITSET_H */
