#!/usr/bin/env bash
# Installs what piper needs to build and test on Debian 12 (run as root, or
# with sudo available): a C compiler, CMake, Open MPI, parallel HDF5, jansson,
# Criterion, clang (libFuzzer, for tests/fuzz), and the tools the tests call (h5dump, python3,
# rsvg-convert for the plot rendering test; Slurm for the Slurm test is installed by that test
# itself; nlohmann-json3-dev builds the reference planner the baseline and paper tests compare against).
set -euo pipefail
pkgs=(build-essential cmake pkg-config openmpi-bin libopenmpi-dev libhdf5-openmpi-dev zlib1g-dev hdf5-tools
      libjansson-dev libcriterion-dev python3 python3-h5py procps time clang-format clang
      nlohmann-json3-dev librsvg2-bin)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: everything is installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
