/*
 * pages.c - mapping pages in ahead of their first writes (see
 * include/piper/pages.h).
 */
#define _DEFAULT_SOURCE
#include "piper/pages.h"

#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

int pp_map_in(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  if (n == 0) return 0;
  const long size = sysconf(_SC_PAGESIZE);
  const uintptr_t page = size > 0 ? (uintptr_t)size : 4096, lo = (uintptr_t)p & ~(page - 1),
                  hi = (uintptr_t)p + n;
  return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
#else
  (void)p;
  (void)n;
  return -1;
#endif
}
