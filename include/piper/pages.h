/*
 * pages.h - mapping memory pages in ahead of their first writes, copies
 * into shared pages by the kernel, and scratch arrays on huge pages.
 * Not collective; no global state.
 */
#ifndef PIPER_PAGES_H
#define PIPER_PAGES_H

#include <stddef.h>

/* Maps the pages of [p, p + n) in for writing, as first writes would
 * (allocating those not yet backed), without reading or changing their
 * contents, so that the writes that follow take no page faults: Linux's
 * MADV_POPULATE_WRITE (5.14 and later).  Other bytes of those pages may be
 * written meanwhile by other threads or processes.  Returns 0, or -1
 * (nothing done or only part) where the system lacks it or the range is
 * not mapped writable. */
int pp_map_in(void *p, size_t n);

/* Makes the pages that lie wholly inside [p, p + n) read-only in this
 * process (mprotect PROT_READ); bytes of the partial pages at either end
 * stay writable.  Returns the end of the last page made read-only (p + n
 * rounded down to a page), or p if there is no whole page or the system
 * refuses.  For memory mapped with mmap (not the heap). */
char *pp_pages_read_only(char *p, size_t n);

/* n bytes to copy from `from` to `to`. */
typedef struct pp_span {
  const void *from;
  void *to;
  size_t n;
} pp_span;

/* Copies every span of s[n] (destinations that do not overlap each other
 * or a source).  With by_kernel, the kernel copies them into this
 * process's own memory (Linux's process_vm_writev on itself), so that the
 * destination pages are not touched through this process's mapping: on a
 * virtual machine whose hypervisor shadows the guest's page tables, a
 * first touch of a shared page through a writable mapping costs several
 * microseconds (bench/bench_pages.sh), a copy by the kernel a fraction of
 * that, and a later first read through a read-only mapping
 * (pp_pages_read_only) less than half.  Where the system refuses (no such
 * call, a sandbox forbids it) or copies only part, the spans are copied
 * with memcpy, as without by_kernel.  Destinations must be mapped writable
 * (pp_map_in first spares the kernel the page faults). */
void pp_pages_copy(const pp_span *s, int n, int by_kernel);

/* pp_xmalloc for a large scratch array written a part at a time: n bytes
 * (freed with free), aligned to 2 MiB and, where Linux's transparent huge
 * pages are enabled for madvise (MADV_HUGEPAGE), backed by 2 MiB pages on
 * first touch: one page fault per 2 MiB instead of 512 (each costs a few
 * microseconds on a virtual machine).  Below 2 MiB, plain pp_xmalloc.
 * Pages are still allocated only when first touched.  Ends the process
 * like pp_xmalloc when memory runs out. */
void *pp_xmalloc_huge(size_t n);

#endif /* PIPER_PAGES_H */
