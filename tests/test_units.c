/*
 * test_units.c - unit tests of units.c: sizes with units, bounded integers
 * and the printing of byte counts.
 */
#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "piper/units.h"

/* Parses text and asserts success with the value want (exactly). */
static void size_ok(const char *text, int per_second, double want) {
  pp_error err = {0};
  double v = -1;
  pp_status st = pp_parse_size(text, per_second, "--size", &v, &err);
  cr_assert_eq(st, PP_OK, "'%s' was refused: %s", text, err.msg);
  cr_assert_eq(v, want, "'%s' gave %.17g, expected %.17g", text, v, want);
}

/* Parses text and asserts PP_ERR_USAGE with a message containing sub. */
static void size_bad(const char *text, int per_second, const char *sub) {
  pp_error err = {0};
  double v = 12345;
  pp_status st = pp_parse_size(text, per_second, "--size", &v, &err);
  cr_assert_eq(st, PP_ERR_USAGE, "'%s' was accepted (%.17g)", text, v);
  cr_assert_eq(v, 12345, "'%s': output written on failure", text);
  cr_assert(strstr(err.msg, "--size: ") == err.msg, "message does not start with the option: %s", err.msg);
  cr_assert(strstr(err.msg, sub), "'%s': message '%s' lacks '%s'", text, err.msg, sub);
}

Test(parse_size, plain_numbers) {
  size_ok("1", 0, 1);
  size_ok("8589934592", 0, 8589934592.0);
  size_ok("1288490188.8", 0, 1288490188.8);
  size_ok("0.5", 0, 0.5);
  size_ok(".5", 0, 0.5);
  size_ok("5.", 0, 5);
  size_ok("1e3", 0, 1000);
  size_ok("2.5E+2", 0, 250);
  size_ok("+7", 0, 7);
  size_ok("100B", 0, 100);
}

Test(parse_size, binary_units) {
  size_ok("1KiB", 0, 1024.0);
  size_ok("3MiB", 0, 3.0 * 1048576.0);
  size_ok("8GiB", 0, 8.0 * 1073741824.0);
  size_ok("2TiB", 0, 2.0 * 1099511627776.0);
  size_ok("1.5GiB", 0, 1.5 * 1073741824.0);
  size_ok("0.25 KiB", 0, 256);
}

Test(parse_size, decimal_units) {
  size_ok("1KB", 0, 1e3);
  size_ok("80GB", 0, 80e9);
  size_ok("7MB", 0, 7e6);
  size_ok("2TB", 0, 2e12);
  size_ok("1.2 GB", 0, 1.2 * 1e9);
}

Test(parse_size, per_second) {
  size_ok("25GiB/s", 1, 25.0 * 1073741824.0);
  size_ok("25GiB", 1, 25.0 * 1073741824.0);
  size_ok("100GB/s", 1, 100e9);
  size_ok("1000/s", 1, 1000);
  size_ok("1000B/s", 1, 1000);
  size_bad("25GiB/s", 0, "unknown unit in '25GiB/s'");
  size_bad("25GiB/h", 1, "unknown unit");
  size_bad("25GiB/s/s", 1, "unknown unit");
}

Test(parse_size, rejections) {
  size_bad("", 0, "empty value");
  size_bad("abc", 0, "'abc' is not a number");
  size_bad("GiB", 0, "is not a number");
  size_bad(" 8GiB", 0, "is not a number");
  size_bad("inf", 0, "is not a number");
  size_bad("nan", 0, "is not a number");
  size_bad("-", 0, "is not a number");
  size_bad(".", 0, "is not a number");
  size_bad("12XB", 0, "unknown unit in '12XB'");
  size_bad("8gib", 0, "unknown unit");
  size_bad("8GiB ", 0, "unknown unit");
  size_bad("0x10", 0, "unknown unit");
  size_bad("8 GiB trailing", 0, "unknown unit");
  size_bad("0", 0, "must be > 0");
  size_bad("0GiB", 0, "must be > 0, got '0GiB'");
  size_bad("-5GB", 0, "must be > 0");
  size_bad("-0", 0, "must be > 0");
  size_bad("1e-400", 0, "must be > 0");
  size_bad("1e400", 0, "'1e400' is too large");
  size_bad("1e308TiB", 0, "is too large");
  size_bad("1111111111111111111111111111111111111111111111111111111111111111111111", 0, "too many digits");
}

Test(parse_size, null_error_is_allowed) {
  double v = 0;
  cr_assert_eq(pp_parse_size("zz", 0, "x", &v, NULL), PP_ERR_USAGE);
  cr_assert_eq(pp_parse_size("4KiB", 0, "x", &v, NULL), PP_OK);
  cr_assert_eq(v, 4096);
}

/* Asserts pp_parse_int(text, lo, hi) gives want. */
static void int_ok(const char *text, long long lo, long long hi, long long want) {
  pp_error err = {0};
  long long v = -12345;
  cr_assert_eq(pp_parse_int(text, lo, hi, "--n", &v, &err), PP_OK, "'%s' refused: %s", text, err.msg);
  cr_assert_eq(v, want, "'%s' gave %lld", text, v);
}

static void int_bad(const char *text, long long lo, long long hi, const char *sub) {
  pp_error err = {0};
  long long v = -12345;
  cr_assert_eq(pp_parse_int(text, lo, hi, "--n", &v, &err), PP_ERR_USAGE, "'%s' accepted", text);
  cr_assert_eq(v, -12345, "'%s': output written on failure", text);
  cr_assert(strstr(err.msg, sub), "'%s': message '%s' lacks '%s'", text, err.msg, sub);
}

Test(parse_int, ranges) {
  int_ok("1", 1, 10, 1);
  int_ok("10", 1, 10, 10);
  int_ok("-3", -5, 5, -3);
  int_ok("0", 0, 0, 0);
  int_ok("9223372036854775807", 0, LLONG_MAX, LLONG_MAX);
  int_ok("-9223372036854775808", LLONG_MIN, 0, LLONG_MIN);
  int_bad("0", 1, 10, "--n: must be between 1 and 10, got 0");
  int_bad("11", 1, 10, "must be between 1 and 10, got 11");
  int_bad("-1", 1, 1000000, "got -1");
}

Test(parse_int, rejections) {
  int_bad("", 1, 10, "empty value");
  int_bad("abc", 1, 10, "'abc' is not an integer");
  int_bad("1.5", 1, 10, "'1.5' is not an integer");
  int_bad("1e3", 1, 10000, "is not an integer");
  int_bad(" 5", 1, 10, "is not an integer");
  int_bad("5 ", 1, 10, "is not an integer");
  int_bad("5x", 1, 10, "is not an integer");
  int_bad("-", 1, 10, "is not an integer");
  int_bad("0x10", 0, 100, "is not an integer");
  int_bad("99999999999999999999", 1, 10, "is not an integer");
  int_bad("-99999999999999999999", -10, 10, "is not an integer");
}

/* Asserts pp_format_bytes(b) prints want. */
static void fmt_is(double b, const char *want) {
  char buf[64];
  const char *r = pp_format_bytes(b, buf, sizeof buf);
  cr_assert_eq(r, buf);
  cr_assert_str_eq(buf, want, "%.17g bytes printed as '%s', expected '%s'", b, buf, want);
}

Test(format_bytes, values) {
  fmt_is(0, "0 B");
  fmt_is(512, "512 B");
  fmt_is(1023, "1023 B");
  fmt_is(1024, "1 KiB");
  fmt_is(1536, "1.50 KiB");
  fmt_is(8.0 * 1073741824.0, "8 GiB");
  fmt_is(1.25 * 1073741824.0, "1.25 GiB");
  fmt_is(80e9, "74.51 GiB");
  fmt_is(3.0 * 1099511627776.0, "3 TiB");
  fmt_is(2048.0 * 1099511627776.0, "2 PiB");
  fmt_is(5e20, "444089.21 PiB");
}

Test(format_bytes, small_buffer_is_terminated) {
  char buf[4];
  memset(buf, 'x', sizeof buf);
  pp_format_bytes(8.0 * 1073741824.0, buf, sizeof buf);
  cr_assert_eq(buf[3], '\0');
  cr_assert_str_eq(buf, "8 G");
}
