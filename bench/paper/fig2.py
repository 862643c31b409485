#!/usr/bin/env python3
"""Fig. 2 of the Piper paper, regenerated from one archive per variant: the optimal TPS for
every budget k <= 2048 (show --curve) and, for Piper and its ablations, for every bound s on the
sum of data-parallel degrees at k = 2048 (show --curve-dp-sum); BERT-32, 8 GB (GiB), 25 GiB/s,
N = 960 and 512 (the reference's parallelizabilityExperiment).  Archives go to ARCHIVE_DIR (not
committed: 7-8 MB each); the curves to results/fig2-n<N>-devices.csv and -dpsum.csv.

usage: fig2.py PIPER INPUTS_DIR ARCHIVE_DIR"""
import os
import subprocess
import sys

import common
import configs as C

VARIANTS = [("piper", []), ("nodp", ["--no-dp"]), ("notp", ["--no-tp"]), ("noar", ["--no-recompute"]),
            ("equi-notp", ["--planner", "equi", "--no-tp"]), ("equi", ["--planner", "equi"])]


def curve(piper, archive, flag):
    out = subprocess.run([piper, "show", archive, flag], capture_output=True, text=True, check=True).stdout
    vals = {}
    for line in out.split()[1:]:
        x, v = line.split(",")
        vals[int(x)] = None if v == "inf" else float(v)
    return vals


def main():
    piper, inputs, adir = sys.argv[1], sys.argv[2], sys.argv[3]
    os.makedirs(adir, exist_ok=True)
    for n in C.FIG2_MICROBATCHES:
        dev, dps = {}, {}
        for name, flags in VARIANTS:
            a = os.path.join(adir, f"bert32-m8-n{n}-{name}.h5")
            args = ["--devices", C.FIG2_DEVICES, "--memory", repr(C.GIB * C.FIG2_MEMORY_GB), "--microbatches", n,
                    "--bandwidth", repr(C.BANDWIDTH)] + flags
            tps, stages, wall, _ = common.piper_plan(piper, f"{inputs}/{C.BERT32}", args, archive=a)
            print(f"N = {n} {name}: tps {common.fmt(tps)}, {stages} stages, {wall:.1f} s", file=sys.stderr)
            dev[name] = curve(piper, a, "--curve")
            if not name.startswith("equi"):
                dps[name] = curve(piper, a, "--curve-dp-sum")
        names = [v[0] for v in VARIANTS]
        common.write_csv(f"fig2-n{n}-devices.csv", ["devices"] + [f"tps_{x}" for x in names],
                         [[k] + [common.fmt(dev[x][k]) for x in names] for k in sorted(dev["piper"])])
        dn = [x for x in names if x in dps]
        common.write_csv(f"fig2-n{n}-dpsum.csv", ["dp_sum"] + [f"tps_{x}" for x in dn],
                         [[s] + [common.fmt(dps[x][s]) for x in dn] for s in sorted(dps["piper"])])


if __name__ == "__main__":
    main()
