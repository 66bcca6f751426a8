#!/usr/bin/env bash
# How the instructions of one run of every shipped scenario grow from 512 to 4,096 ranks
# (bench/scaling_bench.cc under callgrind): the part of bench/scaling.sh's growth that the
# algorithms make, apart from what the memory hierarchy adds once the ranks' state leaves the
# caches. Instruction counts are deterministic (same binary, same counts on any machine state),
# so this measure is free of the noise that moves one scaling point by up to 50% on a shared VM.
#
#   bench/scaling_instructions.sh [BUILD_DIR] [SCENARIO_INDEX ...]
#                     (defaults: build, every scenario of `racesim_scaling --benchmark_list_tests`)
#
# Needs valgrind (apt-get install valgrind). Counts only inside run::run_one (callgrind's
# --toggle-collect), so the study's compilation and the benchmark's start are left out; one
# benchmark iteration (one seed of every strategy) per point. About 15 minutes for all eight
# scenarios on this project's 2-core VM.
#
# The scaling bound (work per run no faster than n log n from 512 to 4,096 ranks) is judged
# here, in instructions, which no machine noise moves (bench/README.md, "Current figures"): the
# script exits 1 if any scenario's instruction exponent is above 1.2.
#
# Prints one row per scenario: instructions per run and per event at 512 and 4,096 ranks, and
# the exponents of instructions (k instr) and of events (k events) per run between them:
# k = log(x4096 / x512) / log 8. n log2 n over that range is 1.14. A k instr above k events
# is work per event that grows with the ranks (a scan, a deeper structure, longer names); k
# events above 1 is the model doing more per rank at more ranks (more retries, more contention).
set -euo pipefail
build=${1:-build}
shift || true
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "scaling_instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" --target racesim_scaling >/dev/null
bin="$build/bench/racesim_scaling"
scenarios=("$@")
if [ ${#scenarios[@]} -eq 0 ]; then
  mapfile -t scenarios < <("$bin" --benchmark_list_tests | sed -n 's|^BM_Scaling/\([0-9]*\)/512.*|\1|p')
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for s in "${scenarios[@]}"; do
  for r in 512 4096; do
    valgrind --tool=callgrind --collect-atstart=no --toggle-collect='racesim::run::run_one*' \
        --callgrind-out-file="$work/cg.$s.$r" \
        "$bin" --benchmark_filter="^BM_Scaling/$s/$r/" --benchmark_min_time=0.001 --benchmark_format=json \
        >"$work/out.$s.$r.json" 2>"$work/log.$s.$r" || { cat "$work/log.$s.$r" >&2; exit 1; }
  done
done
python3 - "$work" "${scenarios[@]}" <<'PY'
import json, math, sys
work, scenarios = sys.argv[1], sys.argv[2:]
def point(s, r):
    bench = [b for b in json.load(open(f"{work}/out.{s}.{r}.json"))["benchmarks"] if b.get("run_type") != "aggregate"]
    if len(bench) != 1 or bench[0].get("error_occurred"):
        sys.exit(f"scenario {s} at {r} ranks: {bench[0].get('error_message') if bench else 'no benchmark ran'}")
    b = bench[0]
    totals = [l for l in open(f"{work}/cg.{s}.{r}") if l.startswith("totals:") or l.startswith("summary:")]
    if not totals:
        sys.exit(f"scenario {s} at {r} ranks: callgrind wrote no totals")
    instr = int(totals[0].split()[1])
    if instr == 0:
        sys.exit(f"scenario {s} at {r} ranks: no instructions inside run::run_one (was it renamed?)")
    runs = b["runs"]
    return b["label"], instr / runs, b["events_per_run"]
print(f"{'scenario':<36} {'instr/run 512':>14} {'4096':>14} {'instr/event 512':>16} {'4096':>8}"
      f" {'k instr':>8} {'k events':>9}")
worst = 0
over = []  # scenarios above the bound, with their exponent
for s in scenarios:
    label, i512, e512 = point(s, 512)
    _, i4096, e4096 = point(s, 4096)
    k = math.log(i4096 / i512) / math.log(8)
    ke = math.log(e4096 / e512) / math.log(8)
    worst = max(worst, k)
    if k > 1.2:
        over.append(f"{label} {k:.2f}")
    print(f"{label:<36} {i512:>14,.0f} {i4096:>14,.0f} {i512 / e512:>16,.0f} {i4096 / e4096:>8,.0f}"
          f" {k:>8.2f} {ke:>9.2f}")
print(f"largest instruction exponent: {worst:.2f} (n log2 n over 512 to 4,096 ranks: 1.14)")
if over:
    sys.exit("FAIL: above the scaling bound of 1.2 (bench/README.md, 'Current figures'): " + ", ".join(over))
print("ok: every exponent at most 1.2")
PY
