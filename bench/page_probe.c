/*
 * page_probe.c - what a first touch of memory costs on this machine, the
 * figures behind the page-mapping choices of src/dist/dist_tables.c and
 * src/core (bench/bench_pages.sh builds and runs it).
 *
 * For a region of MB mebibytes (default 64) it prints microseconds per
 * 4 KiB page for:
 *   anon_fault      private anonymous memory, one write per page (a fault each);
 *   anon_populate   the same memory mapped in by one MADV_POPULATE_WRITE call,
 *   anon_then_copy  then written whole by memcpy (on a machine whose
 *                   hypervisor builds its own page tables lazily, such as a
 *                   shadow-paging guest, this first write still costs per page);
 *   anon_huge       the same with MADV_HUGEPAGE (2 MiB pages where enabled),
 *                   populated, then written;
 *   shm_fault       a file in /dev/shm (as MPI shared windows are), one write per page;
 *   shm_peer_read   that file read by a second process, after its own
 *                   MADV_POPULATE_READ: each process that maps a page pays
 *                   its first touch;
 *   shm_memcpy_read a fresh /dev/shm file mapped writable, mapped in by
 *                   MADV_POPULATE_WRITE, written by memcpy, made read-only
 *                   (mprotect) and read: how a rank wrote its tables into the
 *                   node's window before pp_pages_copy;
 *   shm_kernel_read the same, written by the kernel instead
 *                   (process_vm_writev on this process, as pp_pages_copy
 *                   does), so that the first touch through the process's own
 *                   mapping is the read, after the mapping is read-only;
 *   shm_huge_write  a memfd (as the node's tables are, pp_shared_pages) mapped
 *                   at a 2 MiB boundary, each 2 MiB made one huge page (one
 *                   small page mapped in, then MADV_COLLAPSE, as
 *                   pp_shared_pages_map_in does), mapped in and written by memcpy;
 *   shm_huge_peer_read that memfd read by a second process that maps it at
 *                   a 2 MiB boundary, after its own MADV_POPULATE_READ;
 *   anon_huge_idle  anon_huge again after IDLE_SECONDS with the probe's
 *                   own memory freed: a guest that hands its free memory back
 *                   to the host (free page reporting, as a virtio balloon
 *                   does, for free blocks of 2 MiB and more, after about
 *                   2 s) gets it back page by page on the next first touch,
 *                   so huge pages cost far more when they come from it;
 *   free            munmap of the touched private memory.
 * Each figure is the median of ROUNDS (default 5) rounds.  Prints figures;
 * checks nothing.  usage: page_probe [MB] [ROUNDS]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the pause before anon_huge_idle */
#define IDLE_SECONDS 3

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

enum {
  ANON_FAULT,
  ANON_POPULATE,
  ANON_COPY,
  ANON_HUGE,
  SHM_FAULT,
  SHM_PEER,
  SHM_MEMCPY,
  SHM_KERNEL,
  SHM_HUGE_WRITE,
  SHM_HUGE_PEER,
  ANON_HUGE_IDLE,
  FREE,
  N_FIG
};
static const char *const names[N_FIG] = {
    "anon_fault",      "anon_populate",  "anon_then_copy",     "anon_huge", "shm_fault", "shm_peer_read",
    "shm_memcpy_read", "shm_kernel_read", "shm_huge_write", "shm_huge_peer_read", "anon_huge_idle", "free"};

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *map_anon(size_t n) {
  char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  return p;
}

static void touch(char *p, size_t n) {
  for (size_t i = 0; i < n; i += 4096) p[i] = 1;
}

/* A fresh file of n bytes in /dev/shm, already unlinked. */
static int shm_file(size_t n) {
  char name[64];
  snprintf(name, sizeof name, "/dev/shm/page_probe.%ld", (long)getpid());
  int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0 || ftruncate(fd, (off_t)n) != 0) {
    perror(name);
    exit(1);
  }
  unlink(name); /* the mapping and the child's inherited descriptor keep it */
  return fd;
}

/* Microseconds per page to write n bytes of src into a fresh shared file
 * (by memcpy or by the kernel, in 1 MiB calls), make them read-only and
 * read one byte of every 64. */
static double shm_write_seal_read(size_t n, const char *src, int by_kernel) {
  int fd = shm_file(n);
  char *s = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const double t0 = now();
  madvise(s, n, MADV_POPULATE_WRITE);
  if (by_kernel) {
    for (size_t at = 0; at < n; at += (size_t)1 << 20) {
      const size_t len = n - at < ((size_t)1 << 20) ? n - at : (size_t)1 << 20;
      struct iovec from = {(void *)(src + at), len}, to = {s + at, len};
      if (process_vm_writev(getpid(), &from, 1, &to, 1, 0) != (ssize_t)len) memcpy(s + at, src + at, len);
    }
  } else {
    memcpy(s, src, n);
  }
  mprotect(s, n, PROT_READ);
  volatile long sum = 0;
  for (size_t i = 0; i < n; i += 64) sum += s[i];
  const double us = (now() - t0) / (double)(n / 4096) * 1e6;
  munmap(s, n);
  close(fd);
  return us;
}

/* One round: fig[i] = microseconds per page. */
/* n bytes of fd mapped at a 2 MiB boundary (the reservation's slack is
 * left mapped PROT_NONE: the probe is short-lived). */
static char *map_huge_aligned(int fd, size_t n) {
  const size_t huge = (size_t)2 << 20;
  char *raw = mmap(NULL, n + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) exit(1);
  char *at = (char *)(((unsigned long)raw + huge - 1) & ~(unsigned long)(huge - 1));
  if (mmap(at, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) exit(1);
  return at;
}

/* Microseconds per 4 KiB page for a second process (a child) to map the n
 * bytes of fd (read-only, or at a 2 MiB boundary with huge), map them in
 * (MADV_POPULATE_READ) and read them; -1 if it could not tell. */
static double peer_read_us(int fd, size_t n, int huge) {
  int pipefd[2];
  if (pipe(pipefd) != 0) exit(1);
  pid_t pid = fork();
  if (pid == 0) {
    const char *q = huge ? map_huge_aligned(fd, n) : mmap(NULL, n, PROT_READ, MAP_SHARED, fd, 0);
    double a = now();
    madvise((void *)q, n, MADV_POPULATE_READ);
    volatile long sum = 0;
    for (size_t i = 0; i < n; i += 64) sum += q[i];
    double us = (now() - a) / (double)(n / 4096) * 1e6;
    ssize_t w = write(pipefd[1], &us, sizeof us);
    _exit(w == (ssize_t)sizeof us ? 0 : 1);
  }
  double us = -1;
  if (read(pipefd[0], &us, sizeof us) != (ssize_t)sizeof us) us = -1;
  waitpid(pid, NULL, 0);
  close(pipefd[0]);
  close(pipefd[1]);
  return us;
}

/* The shm_huge figures: written by this process, read by a child. */
static void shm_huge(size_t n, const char *src, double *fig) {
  const double pages = (double)(n / 4096);
  const size_t huge = (size_t)2 << 20;
  int fd = memfd_create("page_probe", 0);
  if (fd < 0 || ftruncate(fd, (off_t)n) != 0) exit(1);
  char *p = map_huge_aligned(fd, n);
  double t0 = now();
  for (size_t c = 0; c + huge <= n; c += huge)
    if (madvise(p + c, 4096, MADV_POPULATE_WRITE) == 0) madvise(p + c, huge, MADV_COLLAPSE);
  madvise(p, n, MADV_POPULATE_WRITE);
  memcpy(p, src, n);
  fig[SHM_HUGE_WRITE] = (now() - t0) / pages * 1e6;
  fig[SHM_HUGE_PEER] = peer_read_us(fd, n, 1);
  munmap(p, n);
  close(fd);
}

/* Microseconds per 4 KiB page of n bytes of private memory on 2 MiB pages
 * (MADV_HUGEPAGE, 2 MiB aligned so that whole huge pages fit), populated,
 * then written by memcpy from src. */
static double anon_huge_us(size_t n, const char *src) {
  const size_t huge = (size_t)2 << 20;
  char *raw = map_anon(n + huge);
  char *h = (char *)(((unsigned long)raw + huge - 1) & ~(unsigned long)(huge - 1));
  madvise(h, n, MADV_HUGEPAGE);
  const double t0 = now();
  madvise(h, n, MADV_POPULATE_WRITE);
  memcpy(h, src, n);
  const double t1 = now();
  munmap(raw, n + huge);
  return (t1 - t0) / (double)(n / 4096) * 1e6;
}

static void round_once(size_t n, const char *src, double *fig) {
  const double pages = (double)(n / 4096);
  char *p = map_anon(n);
  double t0 = now();
  touch(p, n);
  double t1 = now();
  munmap(p, n);
  double t2 = now();
  fig[ANON_FAULT] = (t1 - t0) / pages * 1e6;
  fig[FREE] = (t2 - t1) / pages * 1e6;

  p = map_anon(n);
  t0 = now();
  madvise(p, n, MADV_POPULATE_WRITE);
  t1 = now();
  memcpy(p, src, n);
  t2 = now();
  munmap(p, n);
  fig[ANON_POPULATE] = (t1 - t0) / pages * 1e6;
  fig[ANON_COPY] = (t2 - t1) / pages * 1e6;

  fig[ANON_HUGE] = anon_huge_us(n, src);

  int fd = shm_file(n);
  char *s = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  t0 = now();
  touch(s, n);
  t1 = now();
  fig[SHM_FAULT] = (t1 - t0) / pages * 1e6;
  fig[SHM_PEER] = peer_read_us(fd, n, 0);
  munmap(s, n);
  close(fd);
  fig[SHM_MEMCPY] = shm_write_seal_read(n, src, 0);
  fig[SHM_KERNEL] = shm_write_seal_read(n, src, 1);
  shm_huge(n, src, fig);
  sleep(IDLE_SECONDS);
  fig[ANON_HUGE_IDLE] = anon_huge_us(n, src);
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  const size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 64;
  const int rounds = argc > 2 ? atoi(argv[2]) : 5;
  if (mb < 1 || mb > 4096 || rounds < 1 || rounds > 100) {
    fprintf(stderr, "usage: page_probe [MB 1..4096] [ROUNDS 1..100]\n");
    return 2;
  }
  const size_t n = mb << 20;
  char *src = malloc(n);
  if (!src) return 1;
  memset(src, 3, n);
  double *all = malloc(sizeof(double) * (size_t)rounds * N_FIG);
  if (!all) return 1;
  for (int r = 0; r < rounds; r++) round_once(n, src, all + (size_t)r * N_FIG);
  printf("# us per 4 KiB page, %zu MiB, median of %d rounds\n", mb, rounds);
  for (int f = 0; f < N_FIG; f++) {
    double v[100];
    for (int r = 0; r < rounds; r++) v[r] = all[(size_t)r * N_FIG + (size_t)f];
    qsort(v, (size_t)rounds, sizeof v[0], cmp);
    printf("%-19s %8.2f\n", names[f], v[rounds / 2]);
  }
  free(all);
  free(src);
  return 0;
}
