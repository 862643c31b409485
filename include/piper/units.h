/*
 * units.h - parsing numbers with units from the command line and grid files.
 */
#ifndef PIPER_UNITS_H
#define PIPER_UNITS_H

#include "piper/error.h"

/* Parses a byte size: a plain number of bytes (fractions allowed, e.g.
 * "1288490188.8") optionally followed by KiB/MiB/GiB/TiB (powers of 1024),
 * KB/MB/GB/TB (powers of 1000) or B.  When per_second is set, an optional
 * trailing "/s" is accepted (for bandwidths).  The result must be finite and
 * > 0.  Returns PP_OK or PP_ERR_USAGE with a message naming what. */
pp_status pp_parse_size(const char *text, int per_second, const char *what, double *out, pp_error *err);

/* Parses a decimal integer in [lo, hi]; PP_ERR_USAGE names what. */
pp_status pp_parse_int(const char *text, long long lo, long long hi, const char *what, long long *out,
                       pp_error *err);

/* Formats bytes as "8 GiB" / "1.2 GiB" / "512 B" into buf. */
const char *pp_format_bytes(double bytes, char *buf, unsigned long n);

#endif /* PIPER_UNITS_H */
