#!/usr/bin/env bash
# Fuzzes scenario files with libFuzzer (tests/fuzz/scenario_fuzz.cc: load, compile, a short run)
# under ASan+UBSan for a bounded time, from a seed corpus of the shipped scenarios and the past
# findings (tests/fuzz/regressions/), with a dictionary of the keys they use. Prints how many
# inputs ran clean; a finding prints its input and exits 1 (add it to tests/fuzz/regressions/).
#
#   scripts/fuzz.sh                      build build-fuzz/ (clang) if needed, fuzz 60 s
#   scripts/fuzz.sh --time=600           fuzz longer
#   scripts/fuzz.sh --seed=1             libFuzzer's random seed (default 0: a new one each run);
#                                        CI fixes it, so a finding there replays here
#   scripts/fuzz.sh --build-dir=DIR      use (or make) a clang tree configured with
#                                        -DRACESIM_SANITIZE=ON -DRACESIM_FUZZ=ON
# Needs clang and libclang-rt-14-dev (scripts/setup.sh --with-fuzz installs them).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build-fuzz
seconds=60
seed=0
for arg in "$@"; do
  case "$arg" in
    --time=*) seconds="${arg#*=}" ;;
    --build-dir=*) build_dir="${arg#*=}" ;;
    --seed=*) seed="${arg#*=}" ;;
    *) echo "fuzz.sh: unknown option '$arg' (expected --time=SECONDS, --seed=N, --build-dir=DIR)" >&2; exit 2 ;;
  esac
done
case "$seconds" in
  ''|*[!0-9]*) echo "fuzz.sh: --time: expected whole seconds, got '$seconds'" >&2; exit 2 ;;
esac
case "$seed" in
  ''|*[!0-9]*) echo "fuzz.sh: --seed: expected a whole number, got '$seed'" >&2; exit 2 ;;
esac

fuzzer="$build_dir/tests/fuzz/racesim_scenario_fuzz"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRACESIM_SANITIZE=ON \
    -DRACESIM_FUZZ=ON -DRACESIM_BENCHMARKS=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
fi
cmake --build "$build_dir" -j"$(nproc)" --target racesim_scenario_fuzz

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus"
cp scenarios/*.yaml scenarios/examples/*.yaml tests/fuzz/regressions/*.yaml "$work/corpus/"
# Every key and every primitive, fault and check name the shipped scenarios use, as a libFuzzer
# dictionary, so mutations put real words in real places.
grep -ohE '[a-z_][a-z0-9_]*:' scenarios/*.yaml scenarios/examples/*.yaml tests/fuzz/regressions/*.yaml |
  sort -u | sed 's/.*/"&"/' > "$work/scenario.dict"

echo "== fuzzing scenario files for ${seconds}s, seed $seed ($(ls "$work/corpus" | wc -l) seeds, $(wc -l < "$work/scenario.dict") dictionary words)"
status=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  "$fuzzer" -seed="$seed" -max_total_time="$seconds" -max_len=8192 -timeout=30 -rss_limit_mb=4096 \
  -dict="$work/scenario.dict" -artifact_prefix="$work/" -print_final_stats=1 "$work/corpus" \
  > "$work/log" 2>&1 || status=$?
runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$work/log" | grep -oE '[0-9]+$' || true)
if [ "$status" != 0 ]; then
  tail -n 60 "$work/log"
  for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
    [ -f "$f" ] || continue
    echo "== finding $(basename "$f") (base64; decode into tests/fuzz/regressions/NAME.yaml):"
    base64 "$f"
  done
  echo "fuzz.sh: a finding after ${runs:-?} executions"
  exit 1
fi
grep -E '^#[0-9]+ *DONE' "$work/log" || true
echo "fuzz.sh: ${runs:-0} executions ran clean in ${seconds}s (corpus grew to $(ls "$work/corpus" | wc -l) inputs)"
