#!/usr/bin/env bash
# Redraws the pictures of bench/paper/results/ from its CSV files (charts.py) and, for Fig. 2,
# from the archives fig2.py wrote (piper plot: the device curves of Piper, its ablations and equi
# overlaid, and the plans).
#   bash bench/paper/draw.sh PIPER FIG2_ARCHIVE_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
piper=${1:?usage: draw.sh PIPER FIG2_ARCHIVE_DIR}
adir=${2:?usage: draw.sh PIPER FIG2_ARCHIVE_DIR}
for n in 960 512; do
  a=()
  for v in piper nodp notp noar equi-notp equi; do a+=("$adir/bert32-m8-n$n-$v.h5"); done
  "$piper" plot "${a[@]}" --out-dir "$here/results/fig2-n$n" >/dev/null
done
python3 "$here/charts.py" "$here/results" >/dev/null
