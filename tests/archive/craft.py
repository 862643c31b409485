#!/usr/bin/python3
"""Derives malformed archives and checkpoints from one valid archive.

usage: craft.py VALID.h5 OUTDIR

Writes OUTDIR/valid.ckpt (a valid checkpoint built from the archive's own
tables, for --resume), then one file per case: OUTDIR/a-NAME.h5 (archives)
and OUTDIR/c-NAME.ckpt (checkpoints), and OUTDIR/cases.tsv listing
"kind<TAB>file<TAB>expected substring of the message" (the dataset or
attribute the reader must name; "-" for any, or the valid file's output;
"=" for a valid archive stored otherwise: the valid file's output); kind
"summary" for an attribute only `collect` reads.  Every case is something piper
never writes: wrong rank, shape, type or size, out-of-range and wrapped
indices, fill-value bombs, NaN and negative values, inconsistent attributes,
truncations and bit flips.
"""
import io
import json
import os
import shutil
import struct
import sys

import h5py
import numpy as np

from craft_fault import attribute_message

src, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
cases = []


def arch(name, expect, edit, kind="archive"):
    path = os.path.join(out, "a-%s.h5" % name)
    shutil.copy(src, path)
    with h5py.File(path, "r+") as f:
        edit(f)
    cases.append((kind, path, expect))


def raw(name, expect, edit):
    path = os.path.join(out, "a-%s.h5" % name)
    data = bytearray(open(src, "rb").read())
    open(path, "wb").write(edit(data))
    cases.append(("archive", path, expect))


def replace(f, name, data, **kw):
    del f[name]
    f.create_dataset(name, data=data, **kw)


def set_attr(f, obj, name, value, dtype=None):
    del f[obj].attrs[name]
    if dtype is None:
        f[obj].attrs[name] = value
    else:
        f[obj].attrs.create(name, value, dtype=dtype)


def fill_bomb(f, name, n, dtype):
    del f[name]
    f.create_dataset(name, shape=(n,), dtype=dtype, chunks=(min(n, 1 << 16),), fillvalue=0)


with h5py.File(src, "r") as f:
    K = int(f["/problem"].attrs["devices"])
    N = int(f["/problem"].attrs["microbatches"])
    S = min(K, N)
    attrs = f["/problem"].attrs
    chunks = int(attrs.get("virtual_stages", 1))
    # the top of s the reader allows: with virtual stages s counts chunks
    s_top = len(json.loads(f["/problem/input_json"][()])["nodes"]) if chunks > 1 else S
    # the schedule's part of the identity (src/archive/writer.c), absent for 2bw
    sched = attrs.get("schedule", b"2bw")
    uniform = int(attrs.get("uniform", 0))
    sched_params = ""
    if sched != b"2bw" or uniform or chunks > 1:
        sched_params = " schedule=%s uniform=%d virtual_stages=%d" % (sched.decode(), uniform, chunks)
    fr = f["/dp/table_first_row"][:]
    fs = f["/dp/table_first_step"][:]
    rk = f["/dp/row_k"][:]
    rs = f["/dp/row_first_step"][:]
    ss = f["/dp/step_s"][:]
    sv = f["/dp/step_value"][:]
    sizes = f["/downsets/size"][:]
    count = int(f["/downsets"].attrs["count"])
    identity = f["/problem"].attrs["identity"]

# ---- archives: types, ranks, shapes, sizes ----
arch("tmpc-wide", "/plan/node_tmpc",
     lambda f: replace(f, "/plan/node_tmpc", np.array([b"x" * 20000] * f["/plan/node_id"].shape[0])))
arch("devices-array", "/problem attribute devices",
     lambda f: set_attr(f, "/problem", "devices", np.arange(64, dtype=np.int64)))
arch("knapsack-array", "/problem attribute knapsack",
     lambda f: set_attr(f, "/problem", "knapsack", np.array([b"greedy", b"exact"])))
arch("microbatches-float", "/problem attribute microbatches",
     lambda f: set_attr(f, "/problem", "microbatches", 512.0))
arch("input-path-long", "/problem attribute input_path",
     lambda f: set_attr(f, "/problem", "input_path", np.string_(b"p" * 60000)))
arch("input-json-1d", "/problem/input_json",
     lambda f: replace(f, "/problem/input_json", np.frombuffer(f["/problem/input_json"][()], dtype=np.uint8)))
arch("row-k-missing", "/dp/row_k", lambda f: f.__delitem__("/dp/row_k"))
arch("row-k-float", "/dp/row_k", lambda f: replace(f, "/dp/row_k", rk.astype(np.float64)))
arch("step-s-2d", "/dp/step_s", lambda f: replace(f, "/dp/step_s", np.stack([ss, ss])))
arch("curve-shuffle", "/curve/tps", lambda f: replace(f, "/curve/tps", f["/curve/tps"][:], shuffle=True, chunks=(4,)))
arch("members-cols", "/downsets/members",
     lambda f: replace(f, "/downsets/members", f["/downsets/members"][:, :-1]))
# ---- fill-value bombs: chunked datasets that declare far more than they store ----
arch("bomb-step-value", "/dp/step_value", lambda f: fill_bomb(f, "/dp/step_value", len(sv), np.float64))
arch("bomb-16g", "/dp/step_value", lambda f: fill_bomb(f, "/dp/step_value", 2 << 30, np.float64))
arch("bomb-1e19", "/dp/row_k", lambda f: fill_bomb(f, "/dp/row_k", (1 << 62), np.int32))
arch("bomb-members", "/downsets/members",
     lambda f: (f.__delitem__("/downsets/members"),
                f.create_dataset("/downsets/members", shape=(count, f["/graph/node_id"].shape[0]),
                                 dtype=np.uint8, chunks=(1, f["/graph/node_id"].shape[0]))))
# ---- out-of-range and wrapped indices ----
def wrap_rows(f):
    x = fr.copy()
    x[5:] += (1 << 32) + 1
    replace(f, "/dp/table_first_row", x)
arch("first-row-wrap", "/dp/table_first_row", wrap_rows)
arch("first-row-negative", "/dp/table_first_row",
     lambda f: replace(f, "/dp/table_first_row", np.where(np.arange(len(fr)) == 3, -7, fr)))
arch("row-step-range", "/dp", lambda f: replace(f, "/dp/row_first_step", np.where(np.arange(len(rs)) == 9, 10**12, rs)))
arch("step-s-negative", "/dp", lambda f: replace(f, "/dp/step_s", np.where(np.arange(len(ss)) == 40, -5, ss).astype(np.int32)))
arch("step-s-beyond", "/dp", lambda f: replace(f, "/dp/step_s", np.where(ss == ss.max(), s_top + 3, ss).astype(np.int32)))
if chunks > 1:
    # the whole graph's entries hold all p v chunks: one entry (3 slots of
    # the same s) of its first row with entries one chunk short, in range
    # and in order, dominating nothing
    def chunk_short(f):
        x = int(rs[int(fr[-2]) + 1])
        replace(f, "/dp/step_s", np.where((np.arange(len(ss)) >= x) & (np.arange(len(ss)) < x + 3), ss - 1, ss)
                .astype(np.int32))
    arch("chunk-short", "/dp.*chunk count", chunk_short)
if chunks == 1 and (sched != b"2bw" or uniform):
    # every row whole (the union of the rows up to it, pruned), as earlier
    # versions of piper wrote the Pareto rows: each row now holds only what
    # it adds to the row before
    E = 3 if uniform else 2

    def whole_rows(f):
        nrk, nrs, nss, nsv, nfr, nfs = [], [], [], [], [0], [0]
        for t in range(count):
            whole = []
            for r in range(int(fr[t]), int(fr[t + 1])):
                a = int(rs[r])
                b = int(rs[r + 1]) if r + 1 < int(fr[t + 1]) else int(fs[t + 1])
                got = [(int(sv[x + 2]) if E == 3 else 0, int(ss[x]), float(sv[x]), float(sv[x + 1]))
                       for x in range(a, b, E)]
                u = sorted(set(whole + [e for e in got if e[3] != np.inf]))
                whole = [e for e in u if not any(o != e and o[0] == e[0] and o[1] <= e[1] and o[2] <= e[2]
                                                 and o[3] <= e[3] for o in u)]
                nrk.append(int(rk[r]))
                nrs.append(len(nss))
                for e in whole or [(-1, 0, np.inf, np.inf)]:
                    nss.extend([e[1]] * E)
                    nsv.extend([e[2], e[3]] + ([float(e[0])] if E == 3 else []))
            nfr.append(len(nrk))
            nfs.append(len(nss))
        for name, data, like in (("row_k", nrk, rk), ("row_first_step", nrs, rs), ("step_s", nss, ss),
                                 ("step_value", nsv, sv), ("table_first_row", nfr, fr),
                                 ("table_first_step", nfs, fs)):
            replace(f, "/dp/" + name, np.array(data, dtype=like.dtype))
    arch("rows-whole", "/dp.*every row whole", whole_rows)
arch("row-k-beyond", "/dp", lambda f: replace(f, "/dp/row_k", np.where(rk == rk.max(), K + 5, rk).astype(np.int32)))
# ---- values ----
arch("value-nan", "/dp", lambda f: replace(f, "/dp/step_value", np.where(np.arange(len(sv)) == len(sv) // 2, np.nan, sv)))
arch("value-negative", "/dp", lambda f: replace(f, "/dp/step_value", np.where(np.isfinite(sv), -sv, sv)))
arch("value-rising", "/dp", lambda f: replace(f, "/dp/step_value", np.where(np.isfinite(sv), 1.0 / np.maximum(sv, 1e-30), sv)))
def nudge_last(f):
    x = sv.copy()
    x[-1] *= 0.5
    replace(f, "/dp/step_value", x)
arch("value-nudged", "-", nudge_last)
arch("memory-inf", "/problem attribute memory", lambda f: set_attr(f, "/problem", "memory", np.inf))
arch("bandwidth-nan", "/problem attribute bandwidth", lambda f: set_attr(f, "/problem", "bandwidth", np.nan))
# ---- inconsistent parts ----
arch("devices-128", "/problem", lambda f: set_attr(f, "/problem", "devices", 128, dtype=np.int64))
def devices_with_identity(f):
    import hashlib
    a = f["/problem"].attrs
    text = f["/problem/input_json"][()]
    params = ("\n--piper-parameters devices=%d memory=%.17g microbatches=%d bandwidth=%.17g "
              "no_dp=%d no_tp=%d no_recompute=%d knapsack=%d" %
              (2 * K, a["memory"], a["microbatches"], a["bandwidth"], a["no_dp"], a["no_tp"],
               a["no_recompute"], 1 if a["knapsack"] == b"exact" else 0)) + sched_params
    set_attr(f, "/problem", "devices", 2 * K, dtype=np.int64)
    set_attr(f, "/problem", "identity", np.string_(hashlib.sha256(text + params.encode()).hexdigest()))
arch("devices-doubled-with-identity", "/dp attribute devices", devices_with_identity)
arch("dp-devices", "/dp attribute devices", lambda f: set_attr(f, "/dp", "devices", K + 1, dtype=np.int64))
arch("input-edited", "/problem/input_json",
     lambda f: replace(f, "/problem/input_json", np.array(f["/problem/input_json"][()] + b" ")))
arch("curve-value", "/curve/tps", lambda f: replace(f, "/curve/tps", f["/curve/tps"][:] * 0.9))
arch("curve-short", "/curve", lambda f: replace(f, "/curve/tps", f["/curve/tps"][:-1]))
arch("plan-tps", "/plan", lambda f: set_attr(f, "/plan", "tps", float(f["/plan"].attrs["tps"]) * 0.5))
arch("plan-node-id", "/plan", lambda f: replace(f, "/plan/node_id", f["/plan/node_id"][:] + 1000))
arch("plan-stage-d", "/plan", lambda f: replace(f, "/plan/stage_d", f["/plan/stage_d"][:] * 0 + 7))
arch("plan-first-node", "/plan/stage_first_node",
     lambda f: replace(f, "/plan/stage_first_node", f["/plan/stage_first_node"][:][::-1].copy()))
arch("members-flip", "/downsets/members",
     lambda f: replace(f, "/downsets/members", np.where(np.arange(f["/downsets/members"].size).reshape(f["/downsets/members"].shape) == 100, 1, f["/downsets/members"][:]).astype(np.uint8)))
arch("count-attr", "/downsets", lambda f: set_attr(f, "/downsets", "count", count + 1, dtype=np.int64))
# ---- attributes only a study's row reads (kind "summary": `collect` names
# them, `show` gives the valid file's output) ----
arch("run-seconds-missing", "/run attribute seconds_before_write",
     lambda f: f["/run"].attrs.__delitem__("seconds_before_write"), kind="summary")
arch("devices-used-over", "/plan attribute devices_used",
     lambda f: set_attr(f, "/plan", "devices_used", K + 1, dtype=np.int64), kind="summary")
# ---- /dp's chunks as stored: read raw and inflated by piper where they are
# deflated native values, through HDF5 otherwise (both valid: same output);
# a deflated chunk whose bytes are damaged is named ----
def deflated(f):
    replace(f, "/dp/step_value", sv, chunks=(min(len(sv), 64),), compression="gzip", compression_opts=1)


arch("step-value-deflated", "=", deflated)
arch("step-value-big-endian", "=",
     lambda f: replace(f, "/dp/step_value", sv.astype(">f8"), chunks=(min(len(sv), 64),), compression="gzip"))


def damage_chunk(name, index):
    def edit(d):
        with h5py.File(io.BytesIO(bytes(d)), "r") as f:
            info = f[name].id.get_chunk_info(index)
        for j in range(info.byte_offset + info.size // 2, info.byte_offset + info.size):
            d[j] ^= 0x5A
        return bytes(d)
    return edit


path = os.path.join(out, "a-deflated-base.h5")
shutil.copy(src, path)
with h5py.File(path, "r+") as f:
    deflated(f)
src_deflated, src = src, path
raw("step-value-chunk-damaged", "/dp/step_value", damage_chunk("/dp/step_value", 1))
src = src_deflated
cases = [c for c in cases if c[1] != path]


# attributes HDF5 cannot parse (the datatype claims 4096 bytes, more than the
# message holds): named as unreadable, not as missing; an optional one
# (schedule) is not taken as absent
def unparsable(attr):
    def edit(d):
        body = attribute_message(src, d, "/problem", attr)[1]
        name_size = struct.unpack_from("<H", d, body + 2)[0]
        datatype = body + 8 + (name_size + 7) // 8 * 8
        struct.pack_into("<I", d, datatype + 4, 4096)  # the datatype's size
        return bytes(d)
    return edit


raw("attribute-unparsable", "/problem attribute devices: unreadable", unparsable("devices"))
raw("optional-attribute-unparsable", "/problem attribute schedule: unreadable", unparsable("schedule"))


# a dataset whose object header HDF5 cannot parse (the version-1 header's
# version byte set to 9): it is there, so it is named unreadable, not missing
def header_unparsable(name):
    def edit(d):
        with h5py.File(io.BytesIO(bytes(d)), "r") as f:
            header = h5py.h5o.get_info(f[name].id).addr
        assert d[header] == 1, "%s: not a version-1 object header" % name
        d[header] = 9
        return bytes(d)
    return edit


raw("dataset-header-unparsable", "/dp/step_value: unreadable", header_unparsable("/dp/step_value"))
# ---- truncations and bit flips (no dataset to name: any clear message) ----
raw("truncated-half", "-", lambda d: bytes(d[: len(d) // 2]))
raw("truncated-tail", "-", lambda d: bytes(d[:-100]))
for i, frac in enumerate((0.2, 0.35, 0.5, 0.65, 0.8, 0.95)):
    def flip(d, frac=frac):
        at = int(len(d) * frac)
        for j in range(at, min(len(d), at + 32)):
            d[j] ^= 0xA5
        return bytes(d)
    raw("flip-%d" % i, "-", flip)

# ---- checkpoints: a valid one from the archive's tables, then damaged ones ----
layer_start = [0]
for size in range(0, int(sizes.max()) + 1):
    layer_start.append(layer_start[-1] + int((sizes == size).sum()))
layers_done = max(1, (len(layer_start) - 2) // 2)
end = layer_start[layers_done + 1]


def pack(i, rows=None, starts=None, s=None, v=None, tid=None, k_last=None, n_rows=None, steps=None):
    r0, r1, s0, s1 = int(fr[i]), int(fr[i + 1]), int(fs[i]), int(fs[i + 1])
    rows = rk[r0:r1].astype(np.int32) if rows is None else rows
    starts = np.append(rs[r0:r1] - s0, s1 - s0).astype(np.int32) if starts is None else starts
    s = ss[s0:s1].astype(np.int32) if s is None else s
    v = sv[s0:s1].astype(np.float64) if v is None else v
    head = struct.pack("=iiiiq", i if tid is None else tid, 0, K if k_last is None else k_last,
                       len(rows) if n_rows is None else n_rows, len(s) if steps is None else steps)
    return head + rows.tobytes() + starts.tobytes() + s.tobytes() + v.tobytes()


def checkpoint(path, blob, layers=layers_done, ident=identity, downsets=count, tables_kw=None):
    with h5py.File(path, "w") as f:
        f.attrs["identity"] = ident
        f.attrs.create("layers_done", layers, dtype=np.int64)
        f.attrs.create("downsets", downsets, dtype=np.int64)
        if tables_kw is None:
            f.create_dataset("tables", data=np.frombuffer(blob, dtype=np.uint8), chunks=True)
        else:
            f.create_dataset("tables", **tables_kw)


def blob(changed=None):
    """The packed tables of downsets 1 .. end - 1; changed(i) may replace one."""
    return b"".join((changed(i) if changed else None) or pack(i) for i in range(1, end))


checkpoint(os.path.join(out, "valid.ckpt"), blob())
mid = max(1, end // 2)


def ckpt(name, expect, **kw):
    path = os.path.join(out, "c-%s.ckpt" % name)
    b = kw.pop("blob", None)
    checkpoint(path, blob() if b is None else b, **kw)
    cases.append(("checkpoint", path, expect))


def at(i0, **kw):
    return blob(lambda i: pack(i, **kw) if i == i0 else None)


r0, r1, s0, s1 = int(fr[mid]), int(fr[mid + 1]), int(fs[mid]), int(fs[mid + 1])
bad_starts = np.append(rs[r0:r1] - s0, s1 - s0).astype(np.int32)
if len(bad_starts) > 2:
    bad_starts[1] = 1 << 30
ckpt("row-start-range", "/tables", blob=at(mid, starts=bad_starts))
neg = ss[s0:s1].astype(np.int32).copy()
neg[-1] = -3
ckpt("step-negative", "/tables", blob=at(mid, s=neg))
beyond = ss[s0:s1].astype(np.int32).copy()
beyond[-1] = s_top + 10
ckpt("step-beyond-S", "/tables", blob=at(mid, s=beyond))
ckpt("table-twice", "/tables", blob=blob(lambda i: pack(mid) if i == mid + 1 else None))
ckpt("id-out-of-range", "/tables", blob=at(mid, tid=end + 5))
ckpt("rows-huge", "/tables", blob=at(mid, n_rows=(1 << 31) - 1))
ckpt("steps-huge", "/tables", blob=at(mid, steps=1 << 40))
ckpt("k-last", "/tables", blob=at(mid, k_last=K + 1))
nanv = sv[s0:s1].copy()
nanv[-1] = np.nan
ckpt("value-nan", "/tables", blob=at(mid, v=nanv))
ckpt("value-rising", "/tables", blob=at(mid, v=sv[s0:s1][::-1].copy()))
ckpt("truncated", "/tables", blob=blob()[:-13])
ckpt("layers-beyond", "layers_done", layers=len(layer_start) + 3)
ckpt("layers-more-than-tables", "/tables", layers=layers_done + 1)
ckpt("downsets-attr", "downsets", downsets=count + 1)
ckpt("identity-array", "identity", ident=np.array([identity, identity]))
ckpt("bomb", "/tables", tables_kw=dict(shape=(1 << 40,), dtype=np.uint8, chunks=(1 << 20,)))

with open(os.path.join(out, "cases.tsv"), "w") as f:
    for kind, path, expect in cases:
        f.write("%s\t%s\t%s\n" % (kind, path, expect))
print("%d cases in %s" % (len(cases), out))
