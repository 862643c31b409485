/*
 * pages.c - mapping pages in ahead of their first writes, copies into
 * shared pages by the kernel, and scratch on huge pages (see
 * include/piper/pages.h).
 */
#define _GNU_SOURCE
#include "piper/pages.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
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

/* The spans s[n] copied by the kernel, at most SPAN_BATCH per call (the
 * system's limit of a call's vectors is 1024 on Linux); 0, or -1 if a call
 * failed or copied less than its spans (then the caller copies them all
 * again: the same bytes to the same places). */
#define SPAN_BATCH 512
static int copy_by_kernel(const pp_span *s, int n) {
#ifdef __linux__
  struct iovec from[SPAN_BATCH], to[SPAN_BATCH];
  const pid_t self = getpid();
  for (int at = 0; at < n; at += SPAN_BATCH) {
    const int m = n - at < SPAN_BATCH ? n - at : SPAN_BATCH;
    size_t want = 0;
    for (int i = 0; i < m; i++) {
      from[i] = (struct iovec){(void *)(uintptr_t)s[at + i].from, s[at + i].n};
      to[i] = (struct iovec){s[at + i].to, s[at + i].n};
      want += s[at + i].n;
    }
    if (process_vm_writev(self, from, (unsigned long)m, to, (unsigned long)m, 0) != (ssize_t)want) return -1;
  }
  return 0;
#else
  (void)s;
  (void)n;
  return -1;
#endif
}

void pp_pages_copy(const pp_span *s, int n, int by_kernel) {
  if (by_kernel && copy_by_kernel(s, n) == 0) return;
  for (int i = 0; i < n; i++) memcpy(s[i].to, s[i].from, s[i].n);
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
