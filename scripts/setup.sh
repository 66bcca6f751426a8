#!/usr/bin/env bash
# Installs racesim's dependencies from Debian 12 packages, then configures and builds.
#
#   scripts/setup.sh                 install deps + Release build in build/
#   scripts/setup.sh --deps-only     install deps only
#   scripts/setup.sh --with-anchors  also install SimGrid/SimPy for bench/anchors
#   scripts/setup.sh --with-fuzz     also install clang and its sanitizer and libFuzzer runtimes
#   scripts/setup.sh --with-slurm    also install Slurm and munge (scripts/cluster/local_slurm.sh,
#                                    the slurm_sweep test)
#
# Safe to run again: apt-get skips what is installed, cmake reconfigures incrementally.
set -euo pipefail

deps_only=0
anchors=0
fuzz=0
slurm=0
build_dir=build
for arg in "$@"; do
  case "$arg" in
    --deps-only) deps_only=1 ;;
    --with-anchors) anchors=1 ;;
    --with-fuzz) fuzz=1 ;;
    --with-slurm) slurm=1 ;;
    --build-dir=*) build_dir="${arg#*=}" ;;
    *) echo "setup.sh: unknown option '$arg' (expected --deps-only, --with-anchors, --with-fuzz, --with-slurm, --build-dir=DIR)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential cmake git pkg-config
  libboost1.74-dev libboost-context1.74-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev libcli11-dev libfmt-dev nlohmann-json3-dev libabsl-dev zlib1g-dev
  gnuplot-nox
)
if [ "$anchors" = 1 ]; then
  packages+=(libsimgrid-dev python3-simpy)
fi
if [ "$fuzz" = 1 ]; then
  packages+=(clang libclang-rt-14-dev)
fi
if [ "$slurm" = 1 ]; then
  packages+=(slurm-wlm munge)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

[ "$deps_only" = 1 ] && exit 0

cd "$(dirname "$0")/.."
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j"$(nproc)"
