/*
 * test_pages.c - pages mapped in ahead of their writes keep their contents,
 * shared or private, and a range that cannot be written is refused; the
 * whole pages of a range made read-only refuse writes, the partial ones at
 * its ends stay writable; spans copied by the kernel or by memcpy land
 * alike, in batches beyond one system call's limit too; huge scratch is
 * aligned and, where enabled, on huge pages.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "piper/pages.h"

#define LEN ((size_t)16 * 4096)

static void check_mapping(int flags) {
  unsigned char *p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  for (size_t i = 0; i < LEN; i += 4096 * 3)
    p[i + 7] = (unsigned char)(i / 4096 + 1); /* some pages written */
  if (pp_map_in(p + 100, LEN - 200) != 0) {
    munmap(p, LEN);
    cr_skip_test("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)");
  }
  for (size_t i = 0; i < LEN; i++) {
    const unsigned char want = i % (4096 * 3) == 7 ? (unsigned char)(i / 4096 + 1) : 0;
    cr_assert_eq(p[i], want, "byte %zu", i);
  }
  cr_assert_eq(pp_map_in(p, 0), 0);
  munmap(p, LEN);
}

Test(pages, map_in_keeps_the_contents_of_private_memory) { check_mapping(MAP_PRIVATE); }

Test(pages, map_in_keeps_the_contents_of_shared_memory) { check_mapping(MAP_SHARED); }

Test(pages, map_in_refuses_a_read_only_range) {
  void *p = mmap(NULL, LEN, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  cr_assert_eq(pp_map_in(p, LEN), -1);
  munmap(p, LEN);
}

/* Four shared pages, [p + 100, p + 3 pages + 50) made read-only: pages 1
 * and 2 only. */
static unsigned char *sealed(void) {
  unsigned char *p = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(p, MAP_FAILED);
  memset(p, 5, 4 * 4096);
  char *end = pp_pages_read_only((char *)p + 100, 3 * 4096 - 50, 0);
  cr_assert_eq(end, (char *)p + 3 * 4096, "the end of the last whole page");
  return p;
}

Test(pages, read_only_keeps_the_partial_pages_at_the_ends_writable) {
  unsigned char *p = sealed();
  p[0] = p[4095] = 1;                /* page 0, partly inside */
  p[3 * 4096] = p[4 * 4096 - 1] = 2; /* page 3, partly inside */
  cr_assert_eq(p[4096] + p[3 * 4096 - 1], 10, "the sealed pages keep their bytes");
  /* nothing whole inside: nothing done, p returned */
  char *q = (char *)p + 3 * 4096 + 10;
  cr_assert_eq(pp_pages_read_only(q, 100, 0), q);
  q[0] = 3;
  munmap(p, 4 * 4096);
}

/* The kernel's own writes tell, without a signal (which a sanitizer would
 * intercept): read(2) into a read-only page fails with EFAULT. */
Test(pages, a_read_only_page_refuses_writes) {
  unsigned char *p = sealed();
  int fd[2];
  cr_assert_eq(pipe(fd), 0);
  cr_assert_eq(write(fd[1], "xyz", 3), 3);
  errno = 0;
  cr_assert_eq(read(fd[0], p + 2 * 4096 + 17, 1), -1, "a write into page 2 is refused");
  cr_assert_eq(errno, EFAULT);
  cr_assert_eq(read(fd[0], p + 3 * 4096 + 1, 1), 1, "page 3, partly inside, takes it");
  cr_assert_eq(p[3 * 4096 + 1], 'x');
  close(fd[0]);
  close(fd[1]);
  munmap(p, 4 * 4096);
}

/* kB of the mapping holding p that are on transparent huge pages
 * (/proc/self/smaps), or -1 if not found. */
/* The kB of field (e.g. "AnonHugePages") of the mapping that holds p, in
 * /proc/self/smaps; -1 if not found. */
static long smaps_kb_at(const void *p, const char *field) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f) return -1;
  char line[512];
  int inside = 0;
  long kb = -1;
  while (fgets(line, sizeof line, f)) {
    unsigned long lo, hi;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
      inside = (uintptr_t)p >= lo && (uintptr_t)p < hi;
      continue;
    }
    const size_t len = strlen(field);
    if (inside && strncmp(line, field, len) == 0 && line[len] == ':' &&
        sscanf(line + len + 1, "%ld", &kb) == 1)
      break;
  }
  fclose(f);
  return kb;
}

/* 1500 spans of 3 bytes (three batches of the kernel's copy) from a
 * private buffer into shared pages, 10 bytes apart over 4 pages. */
static void check_copy(int by_kernel) {
  enum { N = 1500 };
  unsigned char *dst = mmap(NULL, 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  cr_assert_neq(dst, MAP_FAILED);
  unsigned char *src = malloc(3 * N);
  for (int i = 0; i < 3 * N; i++) src[i] = (unsigned char)(i * 7 + 1);
  pp_span *s = malloc(sizeof *s * N);
  for (int i = 0; i < N; i++) s[i] = (pp_span){src + 3 * i, dst + (size_t)(i * 10 % (4 * 4096 - 3)), 3};
  pp_pages_copy(s, N, by_kernel);
  unsigned char *want = calloc(1, 4 * 4096);
  for (int i = 0; i < N; i++) memcpy(want + (size_t)(i * 10 % (4 * 4096 - 3)), src + 3 * i, 3);
  cr_assert_eq(memcmp(dst, want, 4 * 4096), 0, "by_kernel %d", by_kernel);
  pp_pages_copy(s, 0, by_kernel); /* nothing */
  free(want);
  free(s);
  free(src);
  munmap(dst, 4 * 4096);
}

Test(pages, copy_by_the_kernel_lands_as_memcpy_does) {
  check_copy(0);
  check_copy(1);
}

Test(pages, huge_scratch_is_aligned_writable_and_on_huge_pages_where_enabled) {
  const size_t n = ((size_t)5 << 20) + 123;
  unsigned char *p = pp_xmalloc_huge(n);
  cr_assert_eq((uintptr_t)p % ((uintptr_t)2 << 20), 0, "aligned to 2 MiB");
  memset(p, 0xab, n);
  cr_assert_eq(p[0], 0xab);
  cr_assert_eq(p[n - 1], 0xab);
  unsigned char *small = pp_xmalloc_huge(100); /* below 2 MiB: plain */
  memset(small, 1, 100);
  free(small);
  char mode[128] = "";
  FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
  const int known = f && fgets(mode, sizeof mode, f);
  if (f) fclose(f);
  if (!known || strstr(mode, "[never]")) {
    free(p);
    cr_skip_test("transparent huge pages are not enabled here (%s)", known ? mode : "no sysfs entry");
  }
  const long kb = smaps_kb_at(p, "AnonHugePages");
  free(p);
  cr_assert_geq(kb, 2048, "AnonHugePages of the scratch: %ld kB (THP mode %s)", kb, mode);
}

/* Whether this kernel is at least major.minor (uname). */
static int kernel_at_least(int major, int minor) {
  FILE *f = fopen("/proc/sys/kernel/osrelease", "r");
  int a = 0, b = 0;
  const int got = f && fscanf(f, "%d.%d", &a, &b) == 2;
  if (f) fclose(f);
  return got && (a > major || (a == major && b >= minor));
}

Test(pages, a_shared_block_is_zero_aligned_and_seen_by_every_mapping) {
  pp_shared_pages b, c;
  pp_shared_handle h;
  if (pp_shared_pages_new((size_t)3 << 20, &b, &h) != 0) cr_skip_test("no memfd_create here");
  const size_t unit = b.huge ? b.huge : 4096;
  cr_assert_geq(b.size, (size_t)3 << 20);
  cr_assert_eq(b.size % unit, 0, "a whole number of huge pages");
  cr_assert_eq((uintptr_t)b.base % unit, 0, "aligned to its huge page");
  cr_assert_eq(pp_shared_pages_attach(h, b.size, &c), 0, "attached by its handle");
  cr_assert_neq(b.base, c.base, "a second mapping");
  cr_assert_eq((uintptr_t)c.base % unit, 0);
  for (size_t i = 0; i < b.size; i += 4096 - 1) cr_assert_eq(b.base[i], 0, "zero at %zu", i);
  b.base[12345] = 7;
  c.base[b.size - 1] = 9;
  cr_assert_eq(c.base[12345], 7);
  cr_assert_eq(b.base[b.size - 1], 9);
  pp_shared_pages bad;
  cr_assert_eq(pp_shared_pages_attach(h, b.size + 4096, &bad), -1, "a size other than the maker's");
  cr_assert_null(bad.base);
  cr_assert_eq(pp_shared_pages_attach((pp_shared_handle){h.pid, 1 << 20, h.dev, h.ino}, b.size, &bad), -1,
               "no such file");
  pp_shared_handle other = h;
  other.ino++;
  cr_assert_eq(pp_shared_pages_attach(other, b.size, &bad), -1, "another file under that path");
  cr_assert_eq(pp_shared_pages_attach((pp_shared_handle){h.pid, 0, h.dev, h.ino}, b.size, &bad), -1,
               "descriptor 0, not the block");
  pp_shared_pages_free(&c);
  cr_assert_null(c.base);
  pp_shared_pages_free(&c); /* a freed block is ignored */
  cr_assert_eq(b.base[12345], 7, "the maker's mapping outlives the other");
  pp_shared_pages_free(&b);
}

Test(pages, a_shared_block_mapped_in_keeps_its_contents_on_huge_pages) {
  pp_shared_pages b, c;
  pp_shared_handle h;
  if (pp_shared_pages_new((size_t)6 << 20, &b, &h) != 0) cr_skip_test("no memfd_create here");
  cr_assert_eq(pp_shared_pages_attach(h, b.size, &c), 0);
  for (size_t i = 0; i < b.size; i += 4096 * 5 + 3) b.base[i] = (char)(i % 251 + 1); /* some pages written */
  /* two processes' worth, overlapping, from an offset inside a page */
  const int rb = pp_shared_pages_map_in(&b, 100, b.size - 4096);
  const int rc = pp_shared_pages_map_in(&c, 0, b.size);
  cr_assert_eq(pp_shared_pages_map_in(&c, 5, 5), 0, "nothing to map");
  for (size_t i = 0; i < b.size; i++) {
    const char want = i % (4096 * 5 + 3) == 0 ? (char)(i % 251 + 1) : 0;
    cr_assert_eq(b.base[i], want, "byte %zu", i);
    cr_assert_eq(c.base[i], want, "byte %zu, second mapping", i);
  }
  if (rb != 0 || rc != 0) cr_skip_test("this kernel cannot map pages in ahead (MADV_POPULATE_WRITE)");
  /* small = 0 promises that every huge page mapped in is mapped whole
   * (dist_tables.c copies by the kernel otherwise); both mappings mapped
   * in every huge page of the block, each still one mapping (VMA).  (Here
   * no other process collapses the same pages at once: where one does and
   * a collapse finds the page busy twice, map_in leaves small unset.) */
  if (b.huge) {
    const long whole = (long)(b.size >> 10), kb0_b = smaps_kb_at(b.base, "ShmemPmdMapped"),
               kb0_c = smaps_kb_at(c.base, "ShmemPmdMapped");
    cr_assert(b.small || kb0_b >= whole, "small unset, yet %ld of %ld kB on huge pages", kb0_b, whole);
    cr_assert(c.small || kb0_c >= whole, "small unset, yet %ld of %ld kB on huge pages (second)", kb0_c,
              whole);
  }
  /* made read-only by whole huge pages: the first two, the third's partial tail stays writable */
  if (b.huge) {
    char *end = pp_pages_read_only(b.base + 10, 2 * b.huge + 100, b.huge);
    cr_assert_eq(end, b.base + 2 * b.huge, "the end of the last whole huge page");
    cr_assert_eq(pp_pages_read_only(b.base + 2 * b.huge + 1, b.huge, b.huge), b.base + 2 * b.huge + 1,
                 "no whole huge page");
    b.base[2 * b.huge] = 1;
  }
  const long kb_b = smaps_kb_at(b.base, "ShmemPmdMapped"), kb_c = smaps_kb_at(c.base, "ShmemPmdMapped");
  pp_shared_pages_free(&c);
  pp_shared_pages_free(&b);
  if (!b.huge || !kernel_at_least(6, 1))
    cr_skip_test("no huge pages of shared memory here (Linux 6.1 and later)");
  cr_assert_geq(kb_b, 2048, "ShmemPmdMapped of the maker's mapping: %ld kB", kb_b);
  cr_assert_geq(kb_c, 2048, "ShmemPmdMapped of the second mapping: %ld kB", kb_c);
}
