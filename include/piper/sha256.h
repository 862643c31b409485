/*
 * sha256.h - SHA-256 (FIPS 180-4), for archive and checkpoint identities.
 */
#ifndef PIPER_SHA256_H
#define PIPER_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct pp_sha256 {
  uint32_t h[8];
  uint64_t len; /* bytes so far */
  unsigned char buf[64];
  size_t used;
} pp_sha256;

/* SHA-256 (FIPS 180-4) of a byte stream: init, then update with each piece
 * (n may be 0), then pp_sha256_final_hex.  The state is the caller's;
 * nothing allocates or fails. */
void pp_sha256_init(pp_sha256 *c);
void pp_sha256_update(pp_sha256 *c, const void *data, size_t n);
/* Writes the digest as 64 lowercase hex digits and a NUL into hex[65]. */
void pp_sha256_final_hex(pp_sha256 *c, char hex[65]);

#endif /* PIPER_SHA256_H */
