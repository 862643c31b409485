#!/usr/bin/env python3
"""Pictures of the bench/paper CSV files as self-contained SVG (and PNG where rsvg-convert is
installed): Fig. 1 bars, Fig. 2 throughput over the bound s, Fig. 3 search times, the appendix
ratios.  (The Fig. 2 device curves and plans are drawn by `piper plot` from the archives.)

usage: charts.py RESULTS_DIR"""
import csv
import math
import os
import shutil
import subprocess
import sys
from xml.sax.saxutils import escape

COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#999999"]


class Svg:
    def __init__(self, w, h, title):
        self.w, self.h, self.parts = w, h, []
        self.parts.append(f'<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" '
                          f'version="1.1" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
                          f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif">\n<title>{escape(title)}</title>\n'
                          f'<rect x="0" y="0" width="{w}" height="{h}" fill="#ffffff"/>')

    def text(self, x, y, t, size=11, anchor="start", rot=0, bold=False, fill="#000000"):
        tr = f' transform="rotate({rot} {x:.2f} {y:.2f})"' if rot else ""
        b = ' font-weight="bold"' if bold else ""
        self.parts.append(f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size}" text-anchor="{anchor}" '
                          f'fill="{fill}"{b}{tr}>{escape(str(t))}</text>')

    def rect(self, x, y, w, h, fill, stroke=None):
        s = f' stroke="{stroke}"' if stroke else ""
        self.parts.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(w, 0):.2f}" height="{max(h, 0):.2f}" '
                          f'fill="{fill}"{s}/>')

    def line(self, x1, y1, x2, y2, stroke="#444444", width=1, dash=False):
        d = ' stroke-dasharray="4 3"' if dash else ""
        self.parts.append(f'<line x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}" stroke="{stroke}" '
                          f'stroke-width="{width}"{d}/>')

    def poly(self, pts, stroke, width=2):
        if len(pts) == 1:
            self.parts.append(f'<circle cx="{pts[0][0]:.2f}" cy="{pts[0][1]:.2f}" r="2.5" fill="{stroke}"/>')
        elif pts:
            p = " ".join(f"{x:.2f},{y:.2f}" for x, y in pts)
            self.parts.append(f'<polyline fill="none" points="{p}" stroke="{stroke}" stroke-width="{width}"/>')
            for x, y in pts:
                self.parts.append(f'<circle cx="{x:.2f}" cy="{y:.2f}" r="2.5" fill="{stroke}"/>')

    def save(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.parts) + "\n</svg>\n")
        if shutil.which("rsvg-convert"):
            subprocess.run(["rsvg-convert", "-o", path[:-4] + ".png", path], check=True)
        print(path)


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def fig1(res):
    data = rows(os.path.join(res, "fig1.csv"))
    mems = sorted({int(r["memory_gib"]) for r in data})
    variants = list(dict.fromkeys(r["variant"] for r in data))
    groups = [(m, k) for m in mems for k in sorted({int(r["devices"]) for r in data if int(r["memory_gib"]) == m})]
    bw, gap = 9, 16
    gw = bw * len(variants) + gap
    W, H, x0, y0, ph = 90 + gw * len(groups) + 40, 470, 70, 50, 300
    s = Svg(W, H, "Fig. 1")
    s.text(W / 2, 24, "Fig. 1: throughput relative to Piper (BERT-32, N = 1920, 25 GiB/s)", 14, "middle", bold=True)
    s.rect(x0, y0, gw * len(groups), ph, "none", "#444444")
    for v in (0.25, 0.5, 0.75, 1.0):
        y = y0 + ph - ph * v
        s.line(x0 - 4, y, x0 + gw * len(groups), y, "#e5e5e5")
        s.text(x0 - 8, y + 4, f"{v:.2f}", 10, "end")
    s.text(22, y0 + ph / 2, "throughput / Piper's throughput", 12, "middle", rot=-90)
    look = {(int(r["memory_gib"]), int(r["devices"]), r["variant"]): float(r["ratio_to_piper"]) for r in data}
    for gi, (m, k) in enumerate(groups):
        gx = x0 + gi * gw + gap / 2
        for vi, v in enumerate(variants):
            r = look.get((m, k, v), 0.0)
            s.rect(gx + vi * bw, y0 + ph - ph * r, bw - 1, ph * r, COLORS[vi])
        s.text(gx + gw / 2 - gap / 2, y0 + ph + 14, f"k={k}", 9, "middle")
    for m in mems:
        idx = [i for i, g in enumerate(groups) if g[0] == m]
        s.text(x0 + (idx[0] + (idx[-1] - idx[0] + 1) / 2) * gw, y0 + ph + 32, f"{m} GiB per device", 11, "middle",
               bold=True)
        s.line(x0 + idx[0] * gw, y0, x0 + idx[0] * gw, y0 + ph + 36, "#999999")
    for vi, v in enumerate(variants):
        s.rect(x0 + vi * 150, H - 40, 14, 10, COLORS[vi])
        s.text(x0 + vi * 150 + 20, H - 31, v, 11)
    s.text(x0, H - 12, "bars at 0: that variant has no feasible plan; budgets where Piper has none are left out", 10,
           fill="#555555")
    s.save(os.path.join(res, "fig1.svg"))


def line_chart(path, title, series, xlabel, ylabel, logx=True, logy=False, note=""):
    """series: [(label, [(x, y)])]"""
    xs = [x for _, pts in series for x, _ in pts]
    ys = [y for _, pts in series for _, y in pts if y is not None and y > 0]
    W, H, x0, y0, pw, ph = 820, 470 + 18 * len(series), 90, 45, 690, 340
    fx = (lambda x: math.log2(x)) if logx else (lambda x: x)
    fyv = (lambda y: math.log10(y)) if logy else (lambda y: y)
    xl, xh = fx(min(xs)), fx(max(xs))
    yl, yh = (fyv(min(ys)), fyv(max(ys))) if logy else (0, max(ys) * 1.05)
    if logy:
        yl, yh = math.floor(yl), math.ceil(yh)
    X = lambda x: x0 + pw * (fx(x) - xl) / ((xh - xl) or 1)
    Y = lambda y: y0 + ph - ph * (fyv(y) - yl) / ((yh - yl) or 1)
    s = Svg(W, H, title)
    s.text(W / 2, 24, title, 14, "middle", bold=True)
    s.rect(x0, y0, pw, ph, "none", "#444444")
    if logx:
        e = math.ceil(xl)
        while e <= xh + 1e-9:
            s.line(X(2 ** e), y0, X(2 ** e), y0 + ph, "#e5e5e5")
            s.text(X(2 ** e), y0 + ph + 16, f"{2 ** e:g}", 10, "middle")
            e += 1
    if logy:
        for e in range(int(yl), int(yh) + 1):
            s.line(x0, Y(10 ** e), x0 + pw, Y(10 ** e), "#e5e5e5")
            s.text(x0 - 6, Y(10 ** e) + 4, f"{10 ** e:g}", 10, "end")
    else:
        step = 10 ** math.floor(math.log10(yh / 5))
        step *= 2 if yh / step > 12 else 1
        v = 0
        while v <= yh:
            s.line(x0, Y(v), x0 + pw, Y(v), "#e5e5e5")
            s.text(x0 - 6, Y(v) + 4, f"{v:g}", 10, "end")
            v += step
    s.text(x0 + pw / 2, y0 + ph + 38, xlabel, 12, "middle")
    s.text(30, y0 + ph / 2, ylabel, 12, "middle", rot=-90)
    for i, (label, pts) in enumerate(series):
        c = COLORS[i % len(COLORS)]
        s.poly([(X(x), Y(y)) for x, y in pts if y is not None and y > 0], c)
        ly = y0 + ph + 62 + 18 * i
        s.line(x0 + 10, ly - 4, x0 + 40, ly - 4, c, 3)
        s.text(x0 + 48, ly, label, 11)
    if note:
        s.text(x0, H - 8, note, 10, fill="#555555")
    s.save(path)


def fig2(res):
    for n in (960, 512):
        p = os.path.join(res, f"fig2-n{n}-dpsum.csv")
        if not os.path.exists(p):
            continue
        data = rows(p)
        cols = [c for c in data[0] if c.startswith("tps_")]
        series = [(c[4:], [(int(r["dp_sum"]), 1 / num(r[c]) if num(r[c]) else None) for r in data]) for c in cols]
        line_chart(os.path.join(res, f"fig2-n{n}-dpsum.svg"),
                   f"Fig. 2 (right): best throughput vs bound s on the sum of d, k = 2048, N = {n}", series,
                   "bound s on the sum of data-parallel degrees (log scale)", "throughput (samples/s)")


def fig3(res):
    data = rows(os.path.join(res, "fig3.csv"))
    for n in sorted({int(r["microbatches"]) for r in data}):
        series = []
        for layers in sorted({int(r["layers"]) for r in data}):
            sel = [r for r in data if int(r["microbatches"]) == n and int(r["layers"]) == layers]
            # measured points only (not those over the CPU limit or not run)
            for who, col in (("piper", "piper_cpu_seconds"), ("reference", "ref_cpu_seconds")):
                pts = [(int(r["devices"]), num(r[col])) for r in sel if num(r[col])]
                if pts:
                    series.append((f"{who}, BERT-{layers} (CPU time)", pts))
        if not series:
            continue
        line_chart(os.path.join(res, f"fig3-n{n}.svg"), f"Fig. 3: search time against the budget k, N = {n}", series,
                   "device budget k (log scale)", "seconds (log scale)", logy=True,
                   note="CPU time of the whole process (piper: one rank), nice'd on a shared 2-core machine")


def appendix(res):
    for name in ("gnmt", "resnet"):
        p = os.path.join(res, f"appendix-{name}.csv")
        if not os.path.exists(p):
            continue
        data = rows(p)
        mems = sorted({float(r["memory_gib"]) for r in data})
        series = []
        for m in mems:
            sel = [r for r in data if float(r["memory_gib"]) == m]
            series.append((f"{m:g} GiB: TPS(Piper) / TPS(equi)",
                           [(int(r["devices"]), num(r["ratio_piper_over_equi"]) or 0.0) for r in sel]))
        line_chart(os.path.join(res, f"appendix-{name}.svg"),
                   f"Appendix, {name}: Piper's throughput over equi's (0 = equi OOM)", [
                       (l, [(x, y if y else 1e-9) for x, y in pts]) for l, pts in series],
                   "device budget k (log scale)", "TPS(Piper) / TPS(equi)")


if __name__ == "__main__":
    res = sys.argv[1]
    for f in (fig1, fig2, fig3, appendix):
        try:
            f(res)
        except FileNotFoundError as e:
            print(f"skipping {f.__name__}: {e}", file=sys.stderr)
