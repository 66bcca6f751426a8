#!/usr/bin/env bash
# Runs the kernel workloads (bench/workloads.h) on racesim, SimGrid and SimPy in turn, ROUNDS
# times each, and prints the median rate of each engine, racesim's ratio to each, and memory per
# process. The targets (kernel issue) are ratios to SimGrid.
#
#   bench/anchors/run_anchors.sh [ROUNDS] [BUILD_DIR]      (defaults: 5, build-anchors)
#
# Installs SimGrid and SimPy from Debian if missing (scripts/setup.sh --with-anchors), builds a
# Release tree with RACESIM_ANCHORS=ON, then measures. Alternating the engines spreads machine
# noise over all of them; the median resists outliers. Each run is a separate OS process. SimPy
# is Debian's SimPy 2.3 (bench/anchors/simpy_workloads.py says why not 3).
set -euo pipefail
rounds=${1:-5}
build=${2:-build-anchors}
cd "$(dirname "$0")/../.."
scripts/setup.sh --deps-only --with-anchors >/dev/null
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRACESIM_ANCHORS=ON -DRACESIM_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target racesim_bench simgrid_workloads >/dev/null

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for ((r = 1; r <= rounds; r++)); do
  for w in timers ring barrier; do
    case $w in timers) bm=BM_Timers ;; ring) bm=BM_Ring ;; barrier) bm=BM_Barrier ;; esac
    for n in 1000 10000; do
      "$build/bench/racesim_bench" --benchmark_filter="^${bm}/${n}/" --benchmark_format=json \
          --benchmark_min_time=0.5 2>/dev/null |
        python3 -c '
import json, sys
b = json.load(sys.stdin)["benchmarks"][0]
print(json.dumps({"engine": "racesim", "workload": sys.argv[1], "n": int(sys.argv[2]),
                  "items_per_second": b["items_per_second"],
                  "bytes_per_process": b["bytes_per_process"]}))' "$w" "$n" >>"$out"
      "$build/bench/simgrid_workloads" "$w" "$n" >>"$out"
      /usr/bin/python3 bench/anchors/simpy_workloads.py "$w" "$n" >>"$out"
    done
  done
done

python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
targets = {"timers": 5, "ring": 40, "barrier": 5}
print(f"median of {sys.argv[2]} alternating rounds; ratios are racesim's rate over the other engine's")
print(f"{'workload':<9} {'N':>6} {'racesim items/s':>16} {'simgrid items/s':>16} {'ratio':>7} {'target':>7}"
      f" {'simpy items/s':>14} {'ratio':>7}"
      f" {'racesim B/proc':>15} {'simgrid B/proc':>15} {'simpy B/proc':>13}")
for w in ("timers", "ring", "barrier"):
    for n in (1000, 10000):
        def med(engine, key):
            return statistics.median(r[key] for r in rows
                                     if r["engine"] == engine and r["workload"] == w and r["n"] == n)
        rs, sg, sp = (med(e, "items_per_second") for e in ("racesim", "simgrid", "simpy"))
        rm, sm, pm = (med(e, "bytes_per_process") for e in ("racesim", "simgrid", "simpy"))
        print(f"{w:<9} {n:>6} {rs:>16,.0f} {sg:>16,.0f} {rs / sg:>6.1f}x {targets[w]:>6}x"
              f" {sp:>14,.0f} {rs / sp:>6.1f}x"
              f" {rm:>15,.0f} {sm:>15,.0f} {pm:>13,.0f}")
PY
