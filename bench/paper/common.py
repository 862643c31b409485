"""Helpers of the bench/paper scripts: running piper and the reference driver, writing CSV,
making the larger BERT inputs the reference's experiments use."""
import copy
import csv
import json
import os
import resource
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")


def cpu_limit(seconds):
    """A preexec_fn that caps the child's CPU time at `seconds` (RLIMIT_CPU: SIGXCPU, then SIGKILL),
    or None for no cap.  A CPU bound, unlike a wall-clock one, does not depend on how busy the
    machine is."""
    if seconds is None:
        return None
    return lambda: resource.setrlimit(resource.RLIMIT_CPU, (int(seconds), int(seconds) + 5))


class OverLimit(Exception):
    """A run stopped by its CPU-time limit."""


def piper_plan(piper, path, args, archive=None, cpu_seconds=None):
    """Runs `piper plan`; returns (tps or None, stages, wall seconds of the whole process, report);
    report["cpu_seconds"] is the process's user + system CPU time.  With cpu_seconds, the run is
    stopped after that much CPU time and OverLimit raised."""
    cmd = ["nice", piper, "plan", path, "--quiet", "--format", "json"] + [str(a) for a in args]
    cmd += ["--out", archive, "--force"] if archive else ["--no-archive"]
    t0 = time.perf_counter()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, preexec_fn=cpu_limit(cpu_seconds))
    if cpu_seconds is not None and p.returncode < 0:
        raise OverLimit(f"{' '.join(cmd)}: stopped by signal {-p.returncode} after {cpu_seconds} s of CPU")
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter() - t0
    if p.returncode not in (0, 3):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
    j = json.loads(p.stdout)
    j["cpu_seconds"] = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return (j["tps"] if j["feasible"] else None), len(j["stages"]), wall, j


def piper_ref(ref, path, k, mem, n, bw, flag, timeout=None, cpu_seconds=None):
    """Runs the reference driver; returns (tps or None, stages, cpu seconds), or None when it ran
    past `timeout` seconds of wall time or `cpu_seconds` of CPU time."""
    try:
        p = subprocess.run(["nice", ref, path, str(k), repr(float(mem)), str(n), repr(float(bw)), flag],
                           capture_output=True, text=True, timeout=timeout, preexec_fn=cpu_limit(cpu_seconds))
    except subprocess.TimeoutExpired:
        return None
    if cpu_seconds is not None and p.returncode < 0:
        return None
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, p.args, p.stdout, p.stderr)
    tps, stages, cpu = p.stdout.split()
    return (None if tps == "infeasible" else float(tps)), int(stages), float(cpu)


def write_csv(name, header, rows):
    os.makedirs(RESULTS, exist_ok=True)
    path = os.path.join(RESULTS, name)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def fmt(v, digits=12):
    return "infeasible" if v is None else f"{v:.{digits}g}"


def insert_transformer_layer(j, fresh):
    """One more transformer layer, as the reference's Instance::insertTransformerLayer (algo.cpp)
    does it: a copy of a transformer layer v that has transformer neighbours on both sides, put
    between v and its successor s (edge v->s becomes v->new->s, same cost; sync maps rewired).
    The reference picks v from an unordered set; this picks the first in node order."""
    tr = {n["id"] for n in j["nodes"] if n.get("name") == "ParallelTransformerLayer"}
    prev, nxt = {}, {}
    for e in j["edges"]:
        if e["sourceId"] in tr and e["destId"] in tr:
            prev[e["destId"]] = e["sourceId"]
            nxt[e["sourceId"]] = e["destId"]
    v = next(n["id"] for n in j["nodes"] if n["id"] in prev and n["id"] in nxt)
    s, nu = nxt[v], fresh
    node = {n["id"]: n for n in j["nodes"]}
    cost = None
    for e in j["edges"]:
        if e["sourceId"] == v and e["destId"] == s:
            e["destId"] = nu
            cost = e["communicationCost"]
    j["edges"].append({"sourceId": nu, "destId": s, "communicationCost": cost})
    for lst in node[v]["TMPCs"].values():
        for t in lst:
            t["syncTimeBw"][str(nu)] = t["syncTimeBw"].pop(str(s))
    for lst in node[s]["TMPCs"].values():
        for t in lst:
            t["syncTimeFw"][str(nu)] = t["syncTimeFw"].pop(str(v))
    new = {"id": nu, "name": "ParallelTransformerLayer", "TMPCs": copy.deepcopy(node[v]["TMPCs"])}
    for lst in new["TMPCs"].values():
        for t in lst:
            t["syncTimeFw"] = {str(v): t["syncTimeFw"][str(prev[v])]}
            t["syncTimeBw"] = {str(s): t["syncTimeBw"][str(nu)]}
    j["nodes"].append(new)


def bert_input(inputs_dir, layers, out_dir):
    """Path of a BERT input with `layers` transformer layers (32 = the shipped file)."""
    src = os.path.join(inputs_dir, "bert32a100.json")
    if layers == 32:
        return src
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"bert{layers}a100.json")
    if not os.path.exists(path):
        j = json.load(open(src))
        for i in range(33, layers + 1):
            insert_transformer_layer(j, 123456789 + i)
        with open(path, "w") as f:
            json.dump(j, f)
    return path
