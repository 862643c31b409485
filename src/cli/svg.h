/*
 * svg.h - a minimal writer of self-contained SVG 1.1 pictures (no scripts,
 * no external fonts or images), deterministic: the same calls give the same
 * bytes.  Coordinates are printed with two decimals.
 */
#ifndef PIPER_CLI_SVG_H
#define PIPER_CLI_SVG_H

#include <stdio.h>

typedef struct pp_svg {
  FILE *f;
  double w, h; /* canvas size in px */
} pp_svg;

/* Starts a picture of w x h px on f with a white background and a title
 * (also the accessible name).  The stream stays owned by the caller. */
void pp_svg_begin(pp_svg *s, FILE *f, double w, double h, const char *title);

/* Ends the picture (closes the svg element). */
void pp_svg_end(pp_svg *s);

/* Text at (x, y) (baseline); anchor "start", "middle" or "end"; size in px;
 * rotate in degrees about (x, y) (0 = none); weight 1 = bold.  Escapes
 * the XML special characters of text. */
void pp_svg_text(pp_svg *s, double x, double y, const char *anchor, double size, double rotate, int bold,
                 const char *fill, const char *text);

/* A rectangle; stroke may be NULL (none). */
void pp_svg_rect(pp_svg *s, double x, double y, double w, double h, const char *fill, const char *stroke);

/* A line segment; dash 1 = dashed. */
void pp_svg_line(pp_svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width,
                 int dash);

/* A polyline through n points (x[i], y[i]); NaN entries break the line into
 * separate runs (gaps for infeasible budgets). */
void pp_svg_polyline(pp_svg *s, const double *x, const double *y, int n, const char *stroke, double width);

/* A small filled circle (a marker). */
void pp_svg_dot(pp_svg *s, double x, double y, double r, const char *fill);

/* Writes v with few significant digits ("0.00256", "1.2e+03") into buf. */
const char *pp_svg_num(double v, char *buf, size_t n);

/* One of 8 distinguishable colours (cycling). */
const char *pp_svg_color(int i);

#endif /* PIPER_CLI_SVG_H */
