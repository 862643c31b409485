#!/usr/bin/env python3
"""The appendix tables of the Piper paper, regenerated: GNMT and ResNet-50 over (k, memory) as
the reference's runGNMT() and runResnet() list them (25 GiB/s, N from the file): Piper's TPS, the
equi baseline's TPS (runPipeDream2BWPlannerNonTransformer without TP) or OOM, the ratio
TPS(Piper) / TPS(equi), and piper's runtime (wall time of the whole process, one rank).  Rows
where Piper is infeasible are left out, as the reference does.  With PIPER_REF also the
reference's equi TPS (its Piper DP on GNMT takes minutes per row and is not rerun here).

usage: appendix.py PIPER INPUTS_DIR [PIPER_REF]  ->  results/appendix-gnmt.csv, -resnet.csv"""
import sys

import common
import configs as C


def main():
    piper, inputs = sys.argv[1], sys.argv[2]
    ref = sys.argv[3] if len(sys.argv) > 3 else None
    for name, f, pairs, n in (("resnet", C.RESNET, C.RESNET_PAIRS, C.RESNET_MICROBATCHES),
                              ("gnmt", C.GNMT, C.GNMT_PAIRS, C.GNMT_MICROBATCHES)):
        rows = []
        for k, gb in pairs:
            base = ["--devices", k, "--memory", repr(gb * C.GIB), "--bandwidth", repr(C.BANDWIDTH)]
            tps, stages, wall, j = common.piper_plan(piper, f"{inputs}/{f}", base)
            if tps is None:
                print(f"{name} k = {k}, {gb} GiB: Piper infeasible, left out", file=sys.stderr)
                continue
            etps, est, _, _ = common.piper_plan(piper, f"{inputs}/{f}", base + ["--planner", "equi", "--no-tp"])
            rtps = ""
            if ref:
                r = common.piper_ref(ref, f"{inputs}/{f}", k, gb * C.GIB, n, C.BANDWIDTH, "equi-notp")
                rtps = common.fmt(r[0]).replace("infeasible", "OOM")
            ratio = "" if etps is None else f"{tps / etps:.3f}"
            rows.append([k, gb, f"{tps:.3f}", "OOM" if etps is None else f"{etps:.3f}", ratio, f"{wall:.1f}",
                         f"{j['seconds']:.1f}", stages, est, rtps])
            print(name, ",".join(map(str, rows[-1])), flush=True)
        common.write_csv(f"appendix-{name}.csv", ["devices", "memory_gib", "piper_tps", "equi_tps",
                                                  "ratio_piper_over_equi", "piper_wall_seconds",
                                                  "piper_search_seconds", "piper_stages", "equi_stages",
                                                  "ref_equi_tps"], rows)


if __name__ == "__main__":
    main()
