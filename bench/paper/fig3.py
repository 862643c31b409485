#!/usr/bin/env python3
"""Fig. 3 of the Piper paper, regenerated: search time against the device budget k for BERT with
32, 48, 64 and 96 transformer layers (extra layers inserted as the reference's
insertTransformerLayer does) and N in {480, 512, 1920, 2048}, memory and bandwidth from the file
(as the reference's scalability() leaves them).  piper: wall and CPU time of the whole process,
one rank (nice'd on a shared 2-core machine; CPU time is the fair comparison under contention).  The reference: its CPU time, only for BERT-32 and BERT-64
at N = 480 and 1920 and only while a run finishes within REF_TIMEOUT seconds (larger k are then
skipped for that series).

usage: fig3.py PIPER INPUTS_DIR WORK_DIR [PIPER_REF]  ->  results/fig3.csv"""
import sys

import common
import configs as C

REF_TIMEOUT = 30
REF_SERIES = {(32, 480), (32, 1920), (64, 480), (64, 1920)}


def main():
    piper, inputs, work = sys.argv[1], sys.argv[2], sys.argv[3]
    ref = sys.argv[4] if len(sys.argv) > 4 else None
    rows = []
    for layers in C.FIG3_LAYERS:
        path = common.bert_input(inputs, layers, work)
        for n in C.FIG3_MICROBATCHES:
            ref_on = ref is not None and (layers, n) in REF_SERIES
            for k in C.FIG3_DEVICES:
                tps, stages, wall, j = common.piper_plan(piper, path, ["--devices", k, "--microbatches", n])
                rt, rtps = "", ""
                if ref_on:
                    r = common.piper_ref(ref, path, k, 80e9, n, json_bw(path), "none", timeout=REF_TIMEOUT)
                    if r is None:
                        ref_on = False
                        rt = f">{REF_TIMEOUT}"
                    else:
                        rt, rtps = f"{r[2]:.3f}", common.fmt(r[0])
                rows.append([layers, n, k, common.fmt(tps), f"{wall:.3f}", f"{j['cpu_seconds']:.3f}", rt, rtps])
                print(",".join(map(str, rows[-1])), flush=True)
    common.write_csv("fig3.csv", ["layers", "microbatches", "devices", "piper_tps", "piper_wall_seconds",
                                  "piper_cpu_seconds", "ref_cpu_seconds", "ref_tps"], rows)


def json_bw(path):
    import json
    return json.load(open(path))["bandwidth"]


if __name__ == "__main__":
    main()
