#!/usr/bin/env python3
"""Fig. 1 of the Piper paper, regenerated: throughput of each variant relative to Piper
(TPS(Piper) / TPS(variant)) for BERT-32, N = 1920, 25 GiB/s, memory 1, 2, 8, 80 GB (GiB, as the
reference's plots() computes them) and k = 8 ... 2048.  Budgets where Piper itself is infeasible
are left out, as the reference does; an infeasible variant has ratio 0.

usage: fig1.py PIPER INPUTS_DIR  ->  results/fig1.csv"""
import sys

import common
import configs as C


def main():
    piper, inputs = sys.argv[1], sys.argv[2]
    path = f"{inputs}/{C.BERT32}"
    rows = []
    for gb in C.FIG1_MEMORY_GB:
        for k in C.FIG1_DEVICES:
            base = ["--devices", k, "--memory", repr(C.GIB * gb), "--microbatches", C.FIG1_MICROBATCHES,
                    "--bandwidth", repr(C.BANDWIDTH)]
            res = {}
            for label, flags, _ in C.FIG1_VARIANTS:
                tps, stages, wall, _ = common.piper_plan(piper, path, base + flags)
                res[label] = (tps, stages, wall)
                if label == "Piper" and tps is None:
                    break
            if res["Piper"][0] is None:
                print(f"memory {gb} GB, k = {k}: Piper infeasible, left out", file=sys.stderr)
                continue
            for label, _, _ in C.FIG1_VARIANTS:
                tps, stages, wall = res[label]
                ratio = 0.0 if tps is None else res["Piper"][0] / tps
                rows.append([gb, k, label, common.fmt(tps), stages, f"{ratio:.3f}", f"{wall:.2f}"])
                print(",".join(map(str, rows[-1])), flush=True)
    common.write_csv("fig1.csv", ["memory_gib", "devices", "variant", "tps", "stages", "ratio_to_piper",
                                  "wall_seconds"], rows)


if __name__ == "__main__":
    main()
