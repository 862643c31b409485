/*
 * pages.c - mapping pages in ahead of their first writes, copies into
 * shared pages by the kernel, and scratch on huge pages (see
 * include/piper/pages.h).
 */
#define _GNU_SOURCE
#include "piper/pages.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

char *pp_pages_read_only(char *p, size_t n, size_t unit) {
  const uintptr_t page = unit > page_size() ? (uintptr_t)unit : page_size(),
                  lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = ((uintptr_t)p + n) & ~(page - 1);
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

/* The system's huge page size for shared memory (the PMD size Linux
 * reports), or 0 if it does not say or is not a power of two. */
static size_t huge_size(void) {
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
  unsigned long long v = 0;
  if (!f) return 0;
  if (fscanf(f, "%llu", &v) != 1) v = 0;
  fclose(f);
  return v >= page_size() && v <= ((unsigned long long)1 << 30) && (v & (v - 1)) == 0 ? (size_t)v : 0;
}

/* Maps size bytes of fd at an address aligned to align (a power of two, or
 * 0 for a page): a reservation align larger, trimmed around the mapping. */
static char *map_aligned(int fd, size_t size, size_t align) {
  const size_t extra = align > page_size() ? align : 0;
  char *r = mmap(NULL, size + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (r == MAP_FAILED) return NULL;
  char *at = extra ? (char *)(((uintptr_t)r + extra - 1) & ~(uintptr_t)(extra - 1)) : r;
  if (mmap(at, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
    munmap(r, size + extra);
    return NULL;
  }
  if (at > r) munmap(r, (size_t)(at - r));
  if (r + size + extra > at + size) munmap(at + size, (size_t)(r + size + extra - (at + size)));
  return at;
}

int pp_shared_pages_new(size_t size, pp_shared_pages *out, pp_shared_handle *h) {
  *out = (pp_shared_pages){.fd = -1};
#ifdef MFD_CLOEXEC
  const size_t huge = huge_size(), unit = huge ? huge : page_size();
  const size_t rounded = (size + unit - 1) / unit * unit;
  if (size == 0 || rounded < size) return -1;
  const int fd = memfd_create("piper-tables", MFD_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  char *base =
      ftruncate(fd, (off_t)rounded) == 0 && fstat(fd, &st) == 0 ? map_aligned(fd, rounded, huge) : NULL;
  if (!base) {
    close(fd);
    return -1;
  }
  *out = (pp_shared_pages){base, rounded, huge, fd, 0};
  *h = (pp_shared_handle){(long long)getpid(), fd, (long long)st.st_dev, (long long)st.st_ino};
  return 0;
#else
  (void)size;
  (void)h;
  return -1;
#endif
}

int pp_shared_pages_attach(pp_shared_handle h, size_t size, pp_shared_pages *out) {
  *out = (pp_shared_pages){.fd = -1};
  char path[64];
  snprintf(path, sizeof path, "/proc/%lld/fd/%lld", h.pid, h.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st;
  const size_t huge = huge_size();
  char *base = fstat(fd, &st) == 0 && st.st_size >= 0 && (size_t)st.st_size == size && size > 0 &&
                       (long long)st.st_dev == h.dev && (long long)st.st_ino == h.ino
                   ? map_aligned(fd, size, huge)
                   : NULL;
  if (!base) {
    close(fd);
    return -1;
  }
  *out = (pp_shared_pages){base, size, huge, fd, 0};
  return 0;
}

void pp_shared_pages_free(pp_shared_pages *b) {
  if (b->base) munmap(b->base, b->size);
  if (b->fd >= 0) close(b->fd);
  *b = (pp_shared_pages){.fd = -1};
}

int pp_shared_pages_map_in(pp_shared_pages *b, size_t from, size_t to) {
  if (to > b->size) to = b->size;
  if (from >= to) return 0;
#if defined(MADV_POPULATE_WRITE) && defined(__linux__)
  const size_t huge = b->huge;
  /* (the value of MADV_COLLAPSE where the headers predate it: Linux's uapi) */
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
  for (size_t c = huge ? from / huge * huge : to; c < to; c += huge) {
    /* one small page present, then the whole huge page collapsed from it:
     * a huge page is made and every process maps it whole from then on */
    if (madvise(b->base + c, page_size(), MADV_POPULATE_WRITE) != 0) {
      b->small = 1;
      continue;
    }
    /* EAGAIN: contention (another process was making the same page), or
     * no huge page free for now; tried again, then taken as refused */
    int rc = -1;
    for (int tries = 0; tries < 3 && rc != 0; tries++) {
      rc = madvise(b->base + c, huge, MADV_COLLAPSE);
      if (rc != 0 && errno != EAGAIN) break;
    }
    if (rc != 0) b->small = 1; /* (refused, or still busy: taken as small pages) */
  }
#else
  b->small = 1;
#endif
  return pp_map_in(b->base + from, to - from);
}
