#!/usr/bin/env bash
# Regenerates reports/ from every scenario, or (--check) runs every scenario once to check its
# expectations and regenerate its report into a scratch directory (`racesim check --report`), and
# fails if an expectation fails or anything differs from what is committed. reports/live/ (the
# live cross-validation, made from stored live runs by scripts/live_xval.sh) is left alone.
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
  # Each scenario's `ci:` subset where it has one (the same runs --check makes).
  "$build_dir/racesim" check --ci "${files[@]}" --report reports.new >/dev/null
  # reports/live/ is the live cross-validation (scripts/live_xval.sh), from stored runs: kept.
  if [ -d reports/live ]; then mv reports/live reports.new/live; fi
  rm -rf reports && mv reports.new reports
  exit 0
fi
scratch=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$scratch" "$log"' EXIT
status=0
"$build_dir/racesim" check --ci "${files[@]}" --report "$scratch" >"$log" 2>&1 || status=$?
if [ "$status" != 0 ]; then
  grep -v '^PASS \|^wrote ' "$log" | head -n 60
  echo "scenario expectations failed (racesim check exit $status)" >&2
  exit 1
fi
tail -n 1 "$log"
if ! diff -r --exclude=live reports "$scratch" >"$scratch.diff" 2>&1; then
  head -n 60 "$scratch.diff"
  rm -f "$scratch.diff"
  echo "reports/ is out of date: run scripts/reports.sh and commit the result" >&2
  exit 1
fi
rm -f "$scratch.diff"
echo "reports/ is up to date"
