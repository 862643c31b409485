/*
 * table_csv.h - reading the CSV study table of `piper collect --format csv`
 * (a header line, then one row per archive; fields separated by commas,
 * quoted as RFC 4180 when they hold commas or quotes), for `piper plot`.
 */
#ifndef PIPER_CLI_TABLE_CSV_H
#define PIPER_CLI_TABLE_CSV_H

#include "piper/error.h"

typedef struct pp_csv {
  int n_cols, n_rows;
  char **names; /* [n_cols] header fields */
  double *num;  /* [n_rows * n_cols] each field as a number, NaN if it is not one */
} pp_csv;

/* Reads path.  Returns PP_OK and *out (free with pp_csv_free), or
 * PP_ERR_INPUT naming the file and line: unreadable, no header, a row with
 * another number of fields, or no rows at all (an empty study). */
pp_status pp_csv_read(const char *path, pp_csv **out, pp_error *err);

/* Finds column name; PP_ERR_INPUT listing the columns if there is none, or
 * naming the row if some value in it is not a number. */
pp_status pp_csv_numeric_column(const pp_csv *t, const char *path, const char *name, int *col, pp_error *err);

/* Frees a table; accepts NULL. */
void pp_csv_free(pp_csv *t);

#endif /* PIPER_CLI_TABLE_CSV_H */
