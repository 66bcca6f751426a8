#!/usr/bin/env bash
# Regenerates reports/ from every scenario, or (--check) regenerates into a scratch directory
# and fails if anything differs from what is committed.
#
#   scripts/reports.sh [--check] [BUILD_DIR]     (BUILD_DIR defaults to build)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
build_dir=${1:-build}
shopt -s nullglob
files=(scenarios/*.yaml scenarios/examples/*.yaml)
if [ "$check" = 0 ]; then
  rm -rf reports.new
  "$build_dir/racesim" report "${files[@]}" --out reports.new
  rm -rf reports && mv reports.new reports
  exit 0
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
"$build_dir/racesim" report "${files[@]}" --out "$scratch" >/dev/null
if ! diff -r reports "$scratch" >"$scratch.diff" 2>&1; then
  head -n 60 "$scratch.diff"
  rm -f "$scratch.diff"
  echo "reports/ is out of date: run scripts/reports.sh and commit the result" >&2
  exit 1
fi
rm -f "$scratch.diff"
echo "reports/ is up to date"
