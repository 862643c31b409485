#!/usr/bin/env python3
"""Compares piper's equi baseline (`piper plan --planner equi`) with the public reference code's
PipeDream-2BW-like planner (piper-ref ... equi|equi-notp) on every configuration of the Piper
paper's Fig. 1 and appendix tables: same feasibility and TPS within a relative 1e-9.

usage: equi_parity.py PIPER PIPER_REF INPUTS_DIR [--quick] [--out TSV]
Prints one TSV row per configuration; exits 1 if any row disagrees."""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import configs  # noqa: E402

QUICK = {"bert32_m1_k8_equi", "bert32_m8_k8_equi-notp", "bert32_m8_k128_equi", "bert32_m8_k2048_equi",
         "bert32_m80_k2048_equi-notp", "bert32_m2_k512_equi", "resnet_k8_m4.0", "resnet_k32_m2.0",
         "resnet_k128_m16.0"}


def run_piper(piper, path, k, mem, n, flag):
    cmd = [piper, "plan", path, "--planner", "equi", "--devices", str(k), "--memory", repr(mem),
           "--microbatches", str(n), "--bandwidth", repr(configs.BANDWIDTH), "--no-archive", "--quiet",
           "--format", "json"]
    if flag == "equi-notp":
        cmd.append("--no-tp")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    return (j["tps"] if j["feasible"] else None), len(j["stages"])


def run_ref(ref, path, k, mem, n, flag):
    p = subprocess.run([ref, path, str(k), repr(mem), str(n), repr(configs.BANDWIDTH), flag],
                       capture_output=True, text=True, check=True)
    tps, stages, cpu = p.stdout.split()
    return (None if tps == "infeasible" else float(tps)), int(stages), float(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("piper")
    ap.add_argument("ref")
    ap.add_argument("inputs")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    rows, bad = [], 0
    for name, f, k, mem, n, flag in configs.equi_configs():
        if a.quick and name not in QUICK:
            continue
        path = os.path.join(a.inputs, f)
        ptps, pst = run_piper(a.piper, path, k, mem, n, flag)
        rtps, rst, cpu = run_ref(a.ref, path, k, mem, n, flag)
        if ptps is None or rtps is None:
            ok = ptps is None and rtps is None
        else:
            # relative 1e-9 (the reference prints 12 significant digits)
            ok = abs(ptps - rtps) <= 1e-9 * abs(rtps)
        bad += not ok
        fmt = lambda v: "infeasible" if v is None else f"{v:.12g}"
        rows.append(f"{name}\t{f}\t{k}\t{mem!r}\t{n}\t{flag}\t{fmt(ptps)}\t{fmt(rtps)}\t{pst}\t{rst}\t"
                    f"{'ok' if ok else 'DIFFERS'}")
        print(rows[-1], flush=True)
    header = "case\tinput\tdevices\tmemory_bytes\tmicrobatches\tvariant\tpiper_tps\tref_tps\tpiper_stages\t" \
             "ref_stages\tverdict"
    if a.out:
        with open(a.out, "w") as fo:
            fo.write(header + "\n" + "\n".join(rows) + "\n")
    print(f"{len(rows) - bad} of {len(rows)} configurations agree", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
