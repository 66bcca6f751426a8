#!/usr/bin/env bash
# Fuzzes with libFuzzer under ASan+UBSan for a bounded time, two targets one after the other:
# scenario files (tests/fuzz/scenario_fuzz.cc: load, compile, a short run), from the shipped
# scenarios and the past findings (tests/fuzz/regressions/), with a structure-aware mutator that
# edits YAML values in place with edge values of their kind; and results files and override files
# (tests/fuzz/results_fuzz.cc: what merge, check --results and --set-file read), from a real run's
# results and past findings (tests/fuzz/results_regressions/). Prints how many executions ran
# clean per target; a finding prints its input and exits 1 (add it to the target's regressions).
#
#   scripts/fuzz.sh                      build build-fuzz/ (clang) if needed, fuzz 60 s per target
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
cmake --build "$build_dir" -j"$(nproc)" --target racesim_scenario_fuzz racesim_results_fuzz racesim

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fuzz NAME CORPUS_DIR DICT: runs build_dir's racesim_NAME_fuzz for $seconds from CORPUS_DIR;
# prints how many executions ran clean, or the finding (base64) and exits 1.
fuzz() {
  local name=$1 corpus=$2 dict=$3
  local log="$work/$name.log"
  echo "== fuzzing $name for ${seconds}s, seed $seed ($(ls "$corpus" | wc -l) seeds, $(wc -l < "$dict") dictionary words)"
  local status=0
  mkdir -p "$work/$name-findings"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$build_dir/tests/fuzz/racesim_${name}_fuzz" -seed="$seed" -max_total_time="$seconds" -max_len=8192 -timeout=30 \
    -rss_limit_mb=4096 -dict="$dict" -artifact_prefix="$work/$name-findings/" -print_final_stats=1 "$corpus" \
    > "$log" 2>&1 || status=$?
  local runs
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  if [ "$status" != 0 ]; then
    tail -n 60 "$log"
    for f in "$work/$name-findings"/*; do
      [ -f "$f" ] || continue
      echo "== finding $(basename "$f") (base64; decode it into the target's regressions directory):"
      base64 "$f"
    done
    echo "fuzz.sh: $name: a finding after ${runs:-?} executions"
    exit 1
  fi
  grep -E '^#[0-9]+ *DONE' "$log" || true
  echo "fuzz.sh: $name: ${runs:-0} executions ran clean in ${seconds}s (corpus grew to $(ls "$corpus" | wc -l) inputs)"
}

# Scenario files: the shipped scenarios and past findings; the structure-aware mutator
# (tests/fuzz/yaml_mutator.cc) edits their values in place. Every key and every primitive, fault
# and check name they use is a dictionary word, so byte mutations put real words in real places.
mkdir -p "$work/scenario"
cp scenarios/*.yaml scenarios/examples/*.yaml tests/fuzz/regressions/*.yaml "$work/scenario/"
grep -ohE '[a-z_][a-z0-9_]*:' scenarios/*.yaml scenarios/examples/*.yaml tests/fuzz/regressions/*.yaml |
  sort -u | sed 's/.*/"&"/' > "$work/scenario.dict"
fuzz scenario "$work/scenario" "$work/scenario.dict"

# Results files and override files: a real run's results.jsonl, a side-by-side merge of two
# experiments, a calibration's override file, and past findings.
mkdir -p "$work/results"
cp tests/fuzz/results_regressions/* "$work/results/"
"$build_dir/racesim" run scenarios/examples/publish_race.yaml --seeds 4 --out "$work/r1" > /dev/null
"$build_dir/racesim" run scenarios/examples/publish_race.yaml --seeds 4 --seed-start 9 --out "$work/r2" > /dev/null
"$build_dir/racesim" merge "$work/r1" "$work/r2" --out "$work/both" > /dev/null
cp "$work/r1/results.jsonl" "$work/results/run.jsonl"
cp "$work/both/results.jsonl" "$work/results/side_by_side.jsonl"
printf '# measured\nplatform.storage.cache.bandwidth=2GB/s\nparams.t=250ms\nsweep.params.n=[1, 3]\n' > "$work/results/calibration.set"
printf '"\\"outcome\\""\n"\\"digest\\""\n"\\"end\\""\n"\\"experiment\\""\n"platform.storage."\n"params."\n"="\n' > "$work/results.dict"
fuzz results "$work/results" "$work/results.dict"
