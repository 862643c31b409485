#!/usr/bin/env python3
"""The layering of src/ (README, "Source layout"), checked on the build.

1. Headers: a probe that includes <mpi.h> (or <hdf5.h>) is compiled with the
   exact command line of a source of each layer (compile_commands.json).  It
   must fail in every layer but the one that owns the API, and compile there
   (the positive control: the probe itself is sound).
2. Symbols: every symbol a layer's library leaves undefined must come from
   the library itself, from a layer below it, or from a foreign API that the
   layer owns (MPI for dist and archive, HDF5 for archive, jansson for model);
   anything else (an MPI, HDF5 or jansson call outside its owner, a call into
   a layer above or beside) is a violation.  libc and libm are allowed
   everywhere.
3. Positive control of 2: a probe object calling json_object, MPI_Barrier,
   H5open and pp_dist_rank (declared by hand, so no header is needed) is
   added to a copy of the core's library; the check must report all four.

usage: check_layering.py BUILD_DIR
Prints one line per check and "N passed, N failed"; exits 1 on any failure.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache

# layer -> the layers below it that it may call
BELOW = {
    "base": [],
    "model": ["base"],
    "core": ["model", "base"],
    "gen": ["base"],
    "dist": ["core", "model", "base"],
    "archive": ["dist", "core", "model", "base"],
    "cli": ["archive", "dist", "core", "model", "base", "gen"],
}
# foreign APIs: symbol pattern, header, owning layers
FOREIGN = {
    "MPI": (re.compile(r"^(P?MPIX?_|ompi_)"), "mpi.h", {"dist", "archive"}),
    "HDF5": (re.compile(r"^H5"), "hdf5.h", {"archive"}),
    "jansson": (re.compile(r"^(json_|jansson_)"), None, {"model"}),
    "zlib": (re.compile(r"^(uncompress|compress|inflate|deflate|zlib|adler32|crc32)"), None, {"archive"}),
}

passed = failed = 0


def report(ok, what):
    global passed, failed
    print(("ok    " if ok else "FAIL  ") + what)
    if ok:
        passed += 1
    else:
        failed += 1


@lru_cache(maxsize=None)
def nm(path, *flags):
    out = subprocess.run(["nm", *flags, path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"nm {path} failed: {out.stderr.strip()}")
    return {line.split()[-1] for line in out.stdout.splitlines() if line and not line.endswith(":")}


def violations(layer, lib, libs):
    """Undefined symbols of lib (as if it were `layer`) that it may not use."""
    own = nm(lib, "-g", "--defined-only")
    allowed = set(own)
    for b in BELOW[layer]:
        allowed |= nm(libs[b], "-g", "--defined-only")
    others = {}
    for l, path in libs.items():
        if l != layer and l not in BELOW[layer]:
            for s in nm(path, "-g", "--defined-only"):
                others.setdefault(s, l)
    bad = []
    for s in sorted(nm(lib, "-u")):
        if s in allowed or re.match(r"^__(asan|ubsan|sanitizer|lsan|gcov)", s):
            continue
        for api, (pat, _, owners) in FOREIGN.items():
            if pat.match(s) and layer not in owners:
                bad.append(f"{s} ({api})")
                break
        else:
            if s in others:
                bad.append(f"{s} (layer {others[s]})")
    return bad


def compile_cmd(entries, layer):
    for e in entries:
        if f"/src/{layer}/" in e["file"]:
            args = e.get("arguments") or shlex.split(e["command"])
            return args, e["directory"], e["file"]
    sys.exit(f"no source of layer {layer} in compile_commands.json")


def probe_compile(entries, layer, src_text, tmp, name):
    args, cwd, source = compile_cmd(entries, layer)
    probe = os.path.join(tmp, name + ".c")
    obj = os.path.join(tmp, name + ".o")
    with open(probe, "w") as f:
        f.write(src_text)
    cmd, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if os.path.abspath(os.path.join(cwd, a)) == os.path.abspath(source):
            continue
        cmd.append(a)
    cmd += ["-c", probe, "-o", obj]
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode == 0, obj, r.stderr


def main():
    build = os.path.abspath(sys.argv[1])
    ccj = os.path.join(build, "compile_commands.json")
    if not os.path.exists(ccj):
        sys.exit(f"{ccj} missing (CMAKE_EXPORT_COMPILE_COMMANDS)")
    entries = json.load(open(ccj))
    libs = {l: os.path.join(build, f"libpiper_{l}.a") for l in BELOW}
    for l, p in libs.items():
        if not os.path.exists(p):
            sys.exit(f"{p} missing: build the project first")
    tmp = tempfile.mkdtemp(prefix="piper-layering-")
    try:
        # 1. headers
        for api, (_, header, owners) in FOREIGN.items():
            if not header:
                continue
            for layer in BELOW:
                ok, _, err = probe_compile(entries, layer, f"#include <{header}>\nint piper_probe;\n", tmp,
                                           f"inc_{layer}")
                if layer in owners:
                    report(ok, f"{layer}: <{header}> compiles (positive control){'' if ok else ': ' + err}")
                else:
                    report(not ok, f"{layer}: <{header}> does not compile")
        # 2. symbols of every layer
        for layer in BELOW:
            bad = violations(layer, libs[layer], libs)
            report(not bad, f"{layer}: calls only itself, {', '.join(BELOW[layer]) or 'libc'}"
                   f"{''.join(', ' + a for a, v in FOREIGN.items() if layer in v[2])}"
                   + ("" if not bad else ": " + " ".join(bad)))
        # 3. positive control: forbidden calls planted in the core are found
        text = ("void *json_object(void); int MPI_Barrier(void *); int H5open(void); int pp_dist_rank(const void *);\n"
                "void *piper_probe(void) { MPI_Barrier(0); H5open(); pp_dist_rank(0); return json_object(); }\n")
        ok, obj, err = probe_compile(entries, "core", text, tmp, "planted")
        if not ok:
            report(False, "planted probe compiles: " + err)
        else:
            fake = os.path.join(tmp, "libpiper_core.a")
            shutil.copy(libs["core"], fake)
            subprocess.run(["ar", "r", fake, obj], check=True, capture_output=True)
            bad = violations("core", fake, libs)
            want = ["json_object", "MPI_Barrier", "H5open", "pp_dist_rank"]
            found = [w for w in want if any(b.startswith(w + " ") for b in bad)]
            report(found == want, f"core with planted calls: found {', '.join(bad) or 'nothing'} (positive control)")
    finally:
        shutil.rmtree(tmp)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
