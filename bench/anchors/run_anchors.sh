#!/usr/bin/env bash
# Runs the kernel workloads (bench/workloads.h) on racesim, SimGrid and SimPy in turn, ROUNDS
# times each, and prints, for each engine, two rates: with creation (the default loop counts,
# spawning the N processes included) and steady state (a short run of 10 loops and a long run
# with 500,000 more items; rate = extra items / extra seconds, so creation and teardown cancel
# out). Then racesim's ratio to each engine, and memory per process. The targets (kernel issue,
# speed issue) are ratios to SimGrid. Last, each engine's growth from the smallest N to the
# largest: steady-state cost per item at the largest over the smallest, and the exponent
# k = 1 + log(cost ratio) / log(N ratio) that a run of N processes doing N times the work would
# grow with (the speed issue's scaling target is k <= 1.2 from 512 to 4,096 ranks).
#
#   bench/anchors/run_anchors.sh [ROUNDS] [BUILD_DIR] [SIZES] [WORKLOADS]
#       defaults: 5, build-anchors, "1000 10000", "timers ring barrier"
#   bench/anchors/run_anchors.sh 3 build-anchors "512 4096" timers
#       the bare timer loop at the scaling target's two sizes on all three engines: each
#       engine's own floor (bench/README.md, "Current figures")
#
# Installs SimGrid and SimPy from Debian if missing (scripts/setup.sh --with-anchors), builds a
# Release tree with RACESIM_ANCHORS=ON, then measures. Alternating the engines spreads machine
# noise over all of them; the median resists outliers. Each run is a separate OS process; the
# steady rate of SimGrid and SimPy is taken from the medians of their short and long runs'
# seconds, racesim's from BM_*Steady (which alternates the two runs within one process). SimPy is
# Debian's SimPy 2.3 (bench/anchors/simpy_workloads.py says why not 3).
set -euo pipefail
rounds=${1:-5}
build=${2:-build-anchors}
sizes=${3:-1000 10000}
workloads=${4:-timers ring barrier}
for n in $sizes; do
  [[ $n =~ ^[0-9]+$ && $n -ge 2 ]] || { echo "run_anchors.sh: SIZES: '$n' is not a process count >= 2" >&2; exit 2; }
done
for w in $workloads; do
  [[ $w == timers || $w == ring || $w == barrier ]] ||
    { echo "run_anchors.sh: WORKLOADS: '$w' is not one of timers, ring, barrier" >&2; exit 2; }
done
cd "$(dirname "$0")/../.."
scripts/setup.sh --deps-only --with-anchors >/dev/null
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRACESIM_ANCHORS=ON -DRACESIM_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target racesim_bench simgrid_workloads >/dev/null

short_loops=10
extra_items=500000
out=$(mktemp)
trap 'rm -f "$out"' EXIT

racesim_json() {  # BENCHMARK WORKLOAD N MODE
  "$build/bench/racesim_bench" --benchmark_filter="^$1/$3/" --benchmark_format=json \
      --benchmark_min_time=0.5 2>/dev/null |
    python3 -c '
import json, sys
b = json.load(sys.stdin)["benchmarks"][0]
print(json.dumps({"engine": "racesim", "workload": sys.argv[1], "n": int(sys.argv[2]),
                  "mode": sys.argv[3], "items_per_second": b["items_per_second"],
                  "bytes_per_process": b.get("bytes_per_process", 0)}))' "$2" "$3" "$4"
}
tag() {  # MODE LOOPS: adds the mode and loop count to an anchor's JSON line
  python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line); r["mode"] = sys.argv[1]; r["loops"] = int(sys.argv[2]); print(json.dumps(r))' "$1" "$2"
}

for ((r = 1; r <= rounds; r++)); do
  for w in $workloads; do
    case $w in timers) bm=BM_Timers ;; ring) bm=BM_Ring ;; barrier) bm=BM_Barrier ;; esac
    for n in $sizes; do
      long_loops=$((short_loops + extra_items / n))
      racesim_json "$bm" "$w" "$n" creation >>"$out"
      "$build/bench/simgrid_workloads" "$w" "$n" | tag creation 0 >>"$out"
      /usr/bin/python3 bench/anchors/simpy_workloads.py "$w" "$n" | tag creation 0 >>"$out"
      racesim_json "${bm}Steady" "$w" "$n" steady >>"$out"
      for loops in "$short_loops" "$long_loops"; do
        "$build/bench/simgrid_workloads" "$w" "$n" "$loops" | tag steady "$loops" >>"$out"
        /usr/bin/python3 bench/anchors/simpy_workloads.py "$w" "$n" "$loops" | tag steady "$loops" >>"$out"
      done
    done
  done
done

python3 - "$out" "$rounds" "$short_loops" "$sizes" "$workloads" <<'PY'
import json, math, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
short = int(sys.argv[3])
sizes = [int(n) for n in sys.argv[4].split()]
workloads = sys.argv[5].split()
targets = {"creation": {"timers": 5, "ring": 40, "barrier": 5},
           "steady": {"timers": None, "ring": None, "barrier": 5}}

def pick(engine, w, n, mode, loops=None):
    return [r for r in rows if r["engine"] == engine and r["workload"] == w and r["n"] == n
            and r["mode"] == mode and (loops is None or r["loops"] == loops)]

def rate(engine, w, n, mode):
    if engine == "racesim" or mode == "creation":
        return statistics.median(r["items_per_second"] for r in pick(engine, w, n, mode))
    s = pick(engine, w, n, mode, short)
    l = [r for r in pick(engine, w, n, mode) if r["loops"] != short]
    extra = l[0]["items"] - s[0]["items"]
    dt = statistics.median(r["seconds"] for r in l) - statistics.median(r["seconds"] for r in s)
    if dt <= 0:
        sys.exit(f"{engine} {w} {n}: the long run was not slower than the short one; rerun")
    return extra / dt

print(f"median of {sys.argv[2]} alternating rounds; ratios are racesim's rate over the other engine's")
for mode, title in (("creation", "with creation (default loop counts)"),
                    ("steady", "steady state (extra items / extra seconds)")):
    print(f"\n{title}")
    print(f"{'workload':<9} {'N':>6} {'racesim items/s':>16} {'simgrid items/s':>16} {'ratio':>7}"
          f" {'target':>7} {'simpy items/s':>14} {'ratio':>7}"
          + (f" {'racesim B/proc':>15} {'simgrid B/proc':>15} {'simpy B/proc':>13}"
             if mode == "creation" else ""))
    for w in workloads:
        for n in sizes:
            rs, sg, sp = (rate(e, w, n, mode) for e in ("racesim", "simgrid", "simpy"))
            t = targets[mode][w] if n in (1000, 10000) else None  # the targets are set at those N
            line = (f"{w:<9} {n:>6} {rs:>16,.0f} {sg:>16,.0f} {rs / sg:>6.1f}x"
                    f" {(str(t) + 'x') if t else '-':>7} {sp:>14,.0f} {rs / sp:>6.1f}x")
            if mode == "creation":
                rm, sm, pm = (statistics.median(r["bytes_per_process"] for r in pick(e, w, n, mode))
                              for e in ("racesim", "simgrid", "simpy"))
                line += f" {rm:>15,.0f} {sm:>15,.0f} {pm:>13,.0f}"
            print(line)

lo, hi = min(sizes), max(sizes)
if lo != hi:
    print(f"\ngrowth from N = {lo:,} to {hi:,} (steady state): cost per item at {hi:,} over {lo:,},"
          f" and k = 1 + log(cost ratio) / log({hi / lo:g})")
    print(f"{'workload':<9} " + " ".join(f"{e + ' cost':>13} {'k':>5}" for e in ("racesim", "simgrid", "simpy")))
    for w in workloads:
        cells = []
        for e in ("racesim", "simgrid", "simpy"):
            cost = rate(e, w, lo, "steady") / rate(e, w, hi, "steady")
            cells.append(f"{cost:>12.2f}x {1 + math.log(cost) / math.log(hi / lo):>5.2f}")
        print(f"{w:<9} " + " ".join(cells))
PY
