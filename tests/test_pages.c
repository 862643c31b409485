/*
 * test_pages.c - pages mapped in ahead of their writes keep their contents,
 * shared or private, and a range that cannot be written is refused.
 */
#define _DEFAULT_SOURCE
#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>

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
