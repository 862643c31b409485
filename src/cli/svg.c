/*
 * svg.c - the SVG writer (see svg.h).
 */
#include "svg.h"

#include <math.h>

static void esc(FILE *f, const char *t) {
  for (; *t; t++) {
    switch (*t) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    default:
      if ((unsigned char)*t >= 0x20 || *t == '\t') fputc(*t, f);
    }
  }
}

void pp_svg_begin(pp_svg *s, FILE *f, double w, double h, const char *title) {
  s->f = f;
  s->w = w;
  s->h = h;
  fprintf(f,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
          "viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n<title>",
          w, h, w, h);
  esc(f, title);
  fprintf(f, "</title>\n<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n", w, h);
}

void pp_svg_end(pp_svg *s) { fputs("</svg>\n", s->f); }

void pp_svg_text(pp_svg *s, double x, double y, const char *anchor, double size, double rotate, int bold,
                 const char *fill, const char *text) {
  fprintf(s->f, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"", x, y, size,
          anchor, fill);
  if (bold) fputs(" font-weight=\"bold\"", s->f);
  if (rotate != 0) fprintf(s->f, " transform=\"rotate(%.1f %.2f %.2f)\"", rotate, x, y);
  fputc('>', s->f);
  esc(s->f, text);
  fputs("</text>\n", s->f);
}

void pp_svg_rect(pp_svg *s, double x, double y, double w, double h, const char *fill, const char *stroke) {
  fprintf(s->f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y, w < 0 ? 0 : w,
          h < 0 ? 0 : h, fill);
  if (stroke) fprintf(s->f, " stroke=\"%s\" stroke-width=\"1\"", stroke);
  fputs("/>\n", s->f);
}

void pp_svg_line(pp_svg *s, double x1, double y1, double x2, double y2, const char *stroke, double width,
                 int dash) {
  fprintf(s->f,
          "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>\n",
          x1, y1, x2, y2, stroke, width, dash ? " stroke-dasharray=\"4 3\"" : "");
}

void pp_svg_polyline(pp_svg *s, const double *x, const double *y, int n, const char *stroke, double width) {
  int i = 0;
  while (i < n) {
    while (i < n && (isnan(x[i]) || isnan(y[i]))) i++;
    int j = i;
    while (j < n && !isnan(x[j]) && !isnan(y[j])) j++;
    if (j - i == 1) pp_svg_dot(s, x[i], y[i], 2, stroke);
    if (j - i >= 2) {
      fputs("<polyline fill=\"none\" points=\"", s->f);
      for (int k = i; k < j; k++) fprintf(s->f, "%s%.2f,%.2f", k > i ? " " : "", x[k], y[k]);
      fprintf(s->f, "\" stroke=\"%s\" stroke-width=\"%.1f\" stroke-linejoin=\"round\"/>\n", stroke, width);
    }
    i = j;
  }
}

void pp_svg_dot(pp_svg *s, double x, double y, double r, const char *fill) {
  fprintf(s->f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.1f\" fill=\"%s\"/>\n", x, y, r, fill);
}

const char *pp_svg_num(double v, char *buf, size_t n) {
  if (fabs(v) >= 1 && fabs(v) < 1e7 && v == floor(v))
    snprintf(buf, n, "%.0f", v); /* tick values such as 1000, not 1e+03 */
  else
    snprintf(buf, n, "%.3g", v);
  return buf;
}

const char *pp_svg_color(int i) {
  /* Okabe & Ito (2008) colour-blind-safe palette, then two greys */
  static const char *c[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                            "#E69F00", "#56B4E9", "#000000", "#999999"};
  return c[((i % 8) + 8) % 8];
}
