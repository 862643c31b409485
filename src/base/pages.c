/*
 * pages.c - mapping pages in ahead of their first writes (see
 * include/piper/pages.h).
 */
#define _DEFAULT_SOURCE
#include "piper/pages.h"

#include <stdint.h>
#include <sys/mman.h>

int pp_map_in(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  const uintptr_t page = 4096, lo = (uintptr_t)p & ~(page - 1), hi = (uintptr_t)p + n;
  if (n == 0) return 0;
  return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
#else
  (void)p;
  (void)n;
  return -1;
#endif
}
