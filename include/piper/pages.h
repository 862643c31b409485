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

/* Makes the units of [p, p + n) that lie wholly inside it read-only in
 * this process (mprotect PROT_READ); bytes of the partial units at either
 * end stay writable.  A unit is aligned to its size: unit bytes (a power
 * of two; a huge page, which a partial mprotect would split into small
 * ones), or a page if unit is smaller.  Returns the end of the last unit
 * made read-only (p + n rounded down to a unit), or p if there is no whole
 * unit or the system refuses.  For memory mapped with mmap (not the
 * heap). */
char *pp_pages_read_only(char *p, size_t n, size_t unit);

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

/* A block of memory that the processes of one host map at once (Linux's
 * memfd_create), each at an address aligned to the block's huge page size,
 * so that 2 MiB pages of it are mapped whole in every process
 * (pp_shared_pages_map_in).  Owned by the process that made or attached
 * it; freed with pp_shared_pages_free. */
typedef struct pp_shared_pages {
  char *base;  /* the block, in this process */
  size_t size; /* its bytes, a multiple of huge (or of 4 KiB if huge is 0) */
  size_t huge; /* its huge page size (the system's PMD size, 2 MiB on x86-64), or 0 if unknown */
  int fd;      /* the block's file, -1 once freed */
  int small;   /* 1 once pp_shared_pages_map_in could not make a huge page of it in this process */
} pp_shared_pages;

/* The handle by which other processes of the host attach a block: its
 * maker's process id and file descriptor, and the file's device and inode
 * numbers, which tell that file from another one that the same path would
 * name in another process namespace. */
typedef struct pp_shared_handle {
  long long pid, fd, dev, ino;
} pp_shared_handle;

/* Makes a block of at least size bytes (rounded up to its huge page
 * size), zero, mapped in this process; its handle in *h.  Returns 0, or
 * -1 where the system lacks such memory (not Linux, no memfd_create) or
 * refuses it (no memory): then *out is empty and nothing is left behind. */
int pp_shared_pages_new(size_t size, pp_shared_pages *out, pp_shared_handle *h);

/* Maps the block of handle h and size bytes (the size its maker's block
 * got) into this process, through /proc/PID/fd of the maker, which must
 * keep the block until every process has attached it.  Returns 0, or -1
 * if it cannot be opened or mapped (another user's process, no /proc) or
 * what opens is not that block (another size or file: the maker is in
 * another process namespace): then *out is empty. */
int pp_shared_pages_attach(pp_shared_handle h, size_t size, pp_shared_pages *out);

/* Unmaps the block from this process and closes its file; the memory goes
 * when the last process has freed it.  An empty or freed block is
 * ignored. */
void pp_shared_pages_free(pp_shared_pages *b);

/* Maps [b->base + from, b->base + to) in for writing in this process, as
 * pp_map_in does, after backing each whole huge page of it with one huge
 * page of memory (Linux's MADV_COLLAPSE, 6.1 and later, which works
 * whatever the system's shmem_enabled setting for transparent huge
 * pages): on a virtual machine whose hypervisor shadows the guest's page
 * tables, a process's first touch of a shared 4 KiB page costs about
 * 5 us, of a 2 MiB page about as much as of one 4 KiB page
 * (bench/results-pages.txt).  Several processes may do this to the same
 * range at once; contents are kept.  Where a huge page cannot be made (an
 * older kernel, no memory in one piece, or still busy at a third try)
 * that part is mapped in with small pages, and b->small is set.  Returns
 * 0, or -1 if even that failed (nothing is wrong with the memory: the
 * writes then fault its pages in). */
int pp_shared_pages_map_in(pp_shared_pages *b, size_t from, size_t to);

#endif /* PIPER_PAGES_H */
