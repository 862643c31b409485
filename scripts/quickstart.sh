#!/usr/bin/env bash
# One command from a fresh Debian 12 machine to a plan: installs the
# dependencies, builds piper (Release) into build/, and plans the shipped
# default input, writing its archive to outputs/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
./build/piper plan inputs/bert-large-a100-40gb.json --force
