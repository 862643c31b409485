#!/usr/bin/env python3
"""Fig. 3 of the Piper paper, regenerated: search time against the device budget k for BERT with
32, 48, 64 and 96 transformer layers (extra layers inserted as the reference's
insertTransformerLayer does) and N in {480, 512, 1920, 2048}, memory and bandwidth from the file
(as the reference's scalability() leaves them).

piper: wall and CPU time of the whole process, one rank, nice'd (on a shared machine CPU time is
the fair comparison).  The reference driver: its own CPU time.  Every run is bounded by CPU time
(RLIMIT_CPU), not wall time, so that how busy the machine is does not decide what is measured:
piper at FIG3_PIPER_CPU_LIMIT, the reference at FIG3_REF_CPU_LIMIT seconds (and 20 times that of
wall time).  A run over its limit is recorded as ">LIMIT" and the larger k of that series are not
run (they take longer still): "-".  The reference's series run in REF_ORDER, so that a run cut
short has measured the series the paper's comparison needs first.

The two programs can run as two processes (--part piper, --part ref: each writes its rows to
WORK_DIR/fig3-PART.csv as it goes), merged by --merge into results/fig3.csv with whatever each
part measured; without --part, both run in turn and are merged.  The commit, the dates and the
limits go to results/fig3-meta.txt, which report.py quotes.

usage: fig3.py PIPER INPUTS_DIR WORK_DIR [PIPER_REF] [--part piper|ref [--resume] | --merge]
environment: FIG3_PIPER_CPU_LIMIT (default 600), FIG3_REF_CPU_LIMIT (default 30) seconds;
FIG3_COMMIT (default: the last commit of this checkout) names the build in fig3-meta.txt"""
import csv
import datetime
import os
import subprocess
import sys

import common
import configs as C

PIPER_CPU_LIMIT = int(os.environ.get("FIG3_PIPER_CPU_LIMIT", "600"))
REF_CPU_LIMIT = int(os.environ.get("FIG3_REF_CPU_LIMIT", "30"))
# the reference: the series it was measured on before first, then the rest, smaller models first
REF_ORDER = [(32, 480), (32, 1920), (64, 480), (64, 1920)] + [
    (l, n) for l in C.FIG3_LAYERS for n in C.FIG3_MICROBATCHES if (l, n) not in
    {(32, 480), (32, 1920), (64, 480), (64, 1920)}]
HEADER = ["layers", "microbatches", "devices", "piper_tps", "piper_wall_seconds", "piper_cpu_seconds",
          "ref_cpu_seconds", "ref_tps"]


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def commit_of():
    """The commit piper was built from: FIG3_COMMIT if set, else the checkout this script is in."""
    if os.environ.get("FIG3_COMMIT"):
        return os.environ["FIG3_COMMIT"]
    try:
        return subprocess.run(["git", "-C", common.HERE, "log", "-1", "--format=%h %cI %s"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def json_bw(path):
    import json
    return json.load(open(path))["bandwidth"]


def run_piper(piper, inputs, work, out, done):
    for layers in C.FIG3_LAYERS:
        path = common.bert_input(inputs, layers, work)
        for n in C.FIG3_MICROBATCHES:
            on = True
            for k in C.FIG3_DEVICES:
                if (layers, n, k) in done:
                    on = on and not done[(layers, n, k)][2].startswith((">", "-"))
                    continue
                tps, wall, cpu = "", "-", "-"
                if on:
                    try:
                        t, _, w, j = common.piper_plan(piper, path, ["--devices", k, "--microbatches", n],
                                                       cpu_seconds=PIPER_CPU_LIMIT)
                        tps, wall, cpu = common.fmt(t), f"{w:.3f}", f"{j['cpu_seconds']:.3f}"
                    except common.OverLimit:
                        on, cpu = False, f">{PIPER_CPU_LIMIT}"
                out([layers, n, k, tps, wall, cpu])


def run_ref(ref, inputs, work, out, done):
    for layers, n in REF_ORDER:
        path = common.bert_input(inputs, layers, work)
        bw, on = json_bw(path), True
        for k in C.FIG3_DEVICES:
            if (layers, n, k) in done:
                on = on and not done[(layers, n, k)][0].startswith((">", "-"))
                continue
            rt, rtps = "-", ""
            if on:
                r = common.piper_ref(ref, path, k, 80e9, n, bw, "none", timeout=20 * REF_CPU_LIMIT,
                                     cpu_seconds=REF_CPU_LIMIT)
                if r is None:
                    on, rt = False, f">{REF_CPU_LIMIT}"
                else:
                    rt, rtps = f"{r[2]:.3f}", common.fmt(r[0])
            out([layers, n, k, rt, rtps])


def part(kind, argv, work, resume=False):
    """Runs one program over the grid, writing rows to WORK_DIR/fig3-KIND.csv as they come; with
    resume, the points that file already holds are kept and not run again."""
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, f"fig3-{kind}.csv")
    done = read_part(work, kind)[0] if resume else {}
    with open(path, "a" if resume else "w") as f:
        f.write(f"# {kind}: started {now()}\n")
        f.flush()

        def out(row):
            f.write(",".join(map(str, row)) + "\n")
            f.flush()
            print(kind, ",".join(map(str, row)), flush=True)

        if kind == "piper":
            run_piper(argv[1], argv[2], work, out, done)
        else:
            run_ref(argv[4], argv[2], work, out, done)
        f.write(f"# {kind}: finished {now()}\n")


def read_part(work, kind):
    rows, notes = {}, []
    path = os.path.join(work, f"fig3-{kind}.csv")
    if not os.path.exists(path):
        return rows, notes
    for line in open(path):
        if line.startswith("#"):
            notes.append(line[2:].strip())
            continue
        v = line.rstrip("\n").split(",")
        rows[(int(v[0]), int(v[1]), int(v[2]))] = v[3:]
    return rows, notes


def merge(work, have_ref):
    p, pnotes = read_part(work, "piper")
    r, rnotes = read_part(work, "ref")
    rows = []
    for layers in C.FIG3_LAYERS:
        for n in C.FIG3_MICROBATCHES:
            for k in C.FIG3_DEVICES:
                pv = p.get((layers, n, k), ["", "", "not run"])
                rv = r.get((layers, n, k), ["not run" if have_ref else "", ""])
                rows.append([layers, n, k] + pv + rv)
    common.write_csv("fig3.csv", HEADER, rows)
    with open(os.path.join(common.RESULTS, "fig3-meta.txt"), "w") as f:
        f.write(f"piper commit: {commit_of()}\n")
        for note in pnotes + rnotes:
            f.write(f"{note}\n")
        f.write(f"limits: piper {PIPER_CPU_LIMIT} s of CPU per run, reference {REF_CPU_LIMIT} s of CPU per run; "
                f"nice, one rank\n")


def main():
    import argparse
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1].split("\n")[0])
    ap.add_argument("piper")
    ap.add_argument("inputs")
    ap.add_argument("work")
    ap.add_argument("ref", nargs="?")
    ap.add_argument("--part", choices=["piper", "ref"])
    ap.add_argument("--merge", action="store_true")
    ap.add_argument("--resume", action="store_true", help="with --part: keep the points measured already")
    a = ap.parse_args()
    argv = [None, a.piper, a.inputs, a.work, a.ref]
    if a.merge:
        merge(a.work, a.ref is not None)
    elif a.part:
        part(a.part, argv, a.work, a.resume)
    else:
        part("piper", argv, a.work)
        if a.ref:
            part("ref", argv, a.work)
        merge(a.work, a.ref is not None)


if __name__ == "__main__":
    main()
