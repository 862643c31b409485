/*
 * pages.c - mapping pages in ahead of their first writes, and scratch on
 * huge pages (see include/piper/pages.h).
 */
#define _DEFAULT_SOURCE
#include "piper/pages.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "piper/error.h"

/* The system's page size (4096 if it does not say). */
static uintptr_t page_size(void) {
  const long size = sysconf(_SC_PAGESIZE);
  return size > 0 ? (uintptr_t)size : 4096;
}

int pp_map_in(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  if (n == 0) return 0;
  const uintptr_t page = page_size(), lo = (uintptr_t)p & ~(page - 1), hi = (uintptr_t)p + n;
  return madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE) == 0 ? 0 : -1;
#else
  (void)p;
  (void)n;
  return -1;
#endif
}

char *pp_pages_read_only(char *p, size_t n) {
  const uintptr_t page = page_size(), lo = ((uintptr_t)p + page - 1) & ~(page - 1),
                  hi = ((uintptr_t)p + n) & ~(page - 1);
  if (hi <= lo || mprotect((void *)lo, hi - lo, PROT_READ) != 0) return p;
  return (char *)hi;
}

void *pp_xmalloc_huge(size_t n) {
  const size_t huge = (size_t)2 << 20, size = (n + huge - 1) & ~(huge - 1);
  if (n < huge || size < n) return pp_xmalloc(n);
  void *p = NULL;
  if (posix_memalign(&p, huge, size)) pp_fatal_out_of_memory(n);
#ifdef MADV_HUGEPAGE
  madvise(p, size, MADV_HUGEPAGE); /* (a hint: without it, small pages) */
#endif
  return p;
}
