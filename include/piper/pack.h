/*
 * pack.h - bounds-checked packing of values into byte buffers.
 *
 * One format for everything piper sends between ranks or keeps in a
 * checkpoint: the exchange of DP tables, the checkpoint's table blob, the
 * plan rank 0 shares, the resume header.  Values are written in the
 * machine's own byte order and sizes (every rank of a job, and the run that
 * resumes a checkpoint, is the same build on the same kind of machine).
 *
 * A reader never reads past its buffer: every read checks the bytes left
 * and, on a short or out-of-range read, marks the reader bad, zeroes the
 * output and returns -1; later reads fail too, so a caller may check once
 * at the end (pp_unpack_ok).  Pure: no I/O, no global state.
 */
#ifndef PIPER_PACK_H
#define PIPER_PACK_H

#include <stddef.h>
#include <stdint.h>

/* A growing output buffer.  Zero-initialise (or pp_pack_init), append, then
 * take the bytes (pp_pack_take) or free them (pp_pack_free). */
typedef struct pp_pack {
  char *buf;
  size_t len, cap;
} pp_pack;

/* Makes w empty (no allocation). */
void pp_pack_init(pp_pack *w);
/* Frees the buffer and resets w to empty; accepts an empty w. */
void pp_pack_free(pp_pack *w);
/* Appends n bytes at p (p may be NULL when n == 0).  Allocation failure
 * aborts the process (pp_xrealloc). */
void pp_pack_bytes(pp_pack *w, const void *p, size_t n);
/* Appends one int32 / int64 / double (allocation failure as above). */
void pp_pack_i32(pp_pack *w, int32_t v);
void pp_pack_i64(pp_pack *w, int64_t v);
void pp_pack_f64(pp_pack *w, double v);
/* Appends n ints / doubles (native size) from v. */
void pp_pack_ints(pp_pack *w, const int *v, size_t n);
void pp_pack_doubles(pp_pack *w, const double *v, size_t n);
/* Hands the bytes to the caller (who frees them; NULL if nothing was
 * written) and resets w to empty; *len gets their number. */
char *pp_pack_take(pp_pack *w, size_t *len);

/* A reader over len bytes at buf, which must outlive it. */
typedef struct pp_unpack {
  const char *buf;
  size_t len, pos;
  int bad; /* set by the first failed read */
} pp_unpack;

/* Starts r at the first of the len bytes at buf (not copied; a NULL buf
 * is an empty reader). */
void pp_unpack_init(pp_unpack *r, const void *buf, size_t len);
/* Bytes not yet read (0 once bad). */
size_t pp_unpack_left(const pp_unpack *r);
/* 1 if no read failed so far. */
int pp_unpack_ok(const pp_unpack *r);
/* 1 if no read failed and every byte was read. */
int pp_unpack_done(const pp_unpack *r);
/* Copies the next n bytes to out: 0, or -1 (bad; out zeroed) if fewer are
 * left. */
int pp_unpack_bytes(pp_unpack *r, void *out, size_t n);
/* Read one int32 / int64 / double: 0, or -1 (bad; *v = 0) if too few bytes are left. */
int pp_unpack_i32(pp_unpack *r, int32_t *v);
int pp_unpack_i64(pp_unpack *r, int64_t *v);
int pp_unpack_f64(pp_unpack *r, double *v);
/* Reads an int32 that must lie in [lo, hi]: 0, or -1 (bad; *v = lo) if it
 * does not or the bytes are short.  Use it for every count or index read
 * before allocating or indexing with it. */
int pp_unpack_int_in(pp_unpack *r, int32_t lo, int32_t hi, int *v);
/* Read n ints / doubles (native size) into v: 0, or -1 (bad) if fewer are left. */
int pp_unpack_ints(pp_unpack *r, int *v, size_t n);
int pp_unpack_doubles(pp_unpack *r, double *v, size_t n);
/* 1 if at least n items of size bytes each are left (for checking a count
 * before allocating n items), else 0 and the reader turns bad. */
int pp_unpack_has(pp_unpack *r, size_t n, size_t size);
/* The address of the next n bytes, skipped over; NULL (bad) if fewer are
 * left.  The pointer is into buf and may be unaligned. */
const void *pp_unpack_skip(pp_unpack *r, size_t n);

#endif /* PIPER_PACK_H */
