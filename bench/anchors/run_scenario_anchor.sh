#!/usr/bin/env bash
# The scenario-level anchor: the compiled-model cache race (scenarios/om_read_while_write.yaml)
# on a `local` mount, on racesim and on a hand-written SimPy model of it
# (bench/anchors/simpy_om_cache.py), at 8 and 64 ranks on one node.
#
#   bench/anchors/run_scenario_anchor.sh [ROUNDS] [BUILD_DIR] [VALIDATE_SEEDS]
#                                                  (defaults: 5, build-anchors, 2000)
#
# 1. Validation: both engines run VALIDATE_SEEDS seeds of every strategy at 8 ranks, at the
#    scenario's first sweep point (no fault); per strategy, the failure rates must agree (a
#    two-proportion z test, |z| < 3.29, i.e. p > 0.001 under equal rates). The SimPy model draws
#    from Python's generators, not racesim's streams, so runs agree in distribution, not seed by
#    seed. A disagreement fails the script: a speed ratio between models that do not simulate the
#    same thing means nothing.
# 2. Speed: ROUNDS alternating rounds of BM_OmReadWhileWriteLocal/R (one seed of each of the 11
#    strategies per iteration, one core) and of the SimPy model (one OS process of SEEDS seeds of
#    the 11 strategies), at R = 8 and 64; prints median runs per second and the ratio (the speed
#    issue's target: at least 20x).
set -euo pipefail
rounds=${1:-5}
build=${2:-build-anchors}
vseeds=${3:-2000}
cd "$(dirname "$0")/../.."
scripts/setup.sh --deps-only --with-anchors >/dev/null
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DRACESIM_ANCHORS=ON -DRACESIM_TESTS=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target racesim racesim_bench >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "validation: $vseeds seeds of each strategy at 8 ranks on local, first sweep point"
"$build/racesim" run scenarios/om_read_while_write.yaml --set platform.storage.cache.kind=local \
    --seeds "$vseeds" --out "$work/racesim" >/dev/null
/usr/bin/python3 bench/anchors/simpy_om_cache.py 8 "$vseeds" >"$work/simpy.json"
python3 - "$work/racesim/summary.csv" "$work/simpy.json" <<'PY'
import csv, json, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["point"] == "faults.stall.probability=0"]
simpy = json.load(open(sys.argv[2]))
bad = 0
print(f"{'strategy':<22} {'racesim failed':>15} {'simpy failed':>13} {'z':>6}")
for r in rows:
    s = r["strategy"]
    n1, f1 = int(r["runs"]), int(r["failures"])
    n2, f2 = simpy["seeds"], simpy["failures"][s]
    p = (f1 + f2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    z = 0.0 if se == 0 else (f1 / n1 - f2 / n2) / se
    ok = abs(z) < 3.29
    bad += not ok
    print(f"{s:<22} {f1:>8} ({f1 / n1:5.1%}) {f2:>6} ({f2 / n2:5.1%}) {z:>6.2f}{'' if ok else '  DISAGREE'}")
if len(rows) != len(simpy["failures"]):
    sys.exit(f"racesim ran {len(rows)} strategies, the SimPy model {len(simpy['failures'])}")
if bad:
    sys.exit(f"{bad} strategies disagree: the models differ; no speed ratio is reported")
PY

echo
out="$work/speed.jsonl"
for ((r = 1; r <= rounds; r++)); do
  for ranks in 8 64; do
    seeds=$((ranks == 8 ? 300 : 60))
    "$build/bench/racesim_bench" --benchmark_filter="^BM_OmReadWhileWriteLocal/${ranks}/" \
        --benchmark_format=json --benchmark_min_time=1 2>/dev/null |
      python3 -c '
import json, sys
b = json.load(sys.stdin)["benchmarks"][0]
print(json.dumps({"engine": "racesim", "ranks": int(sys.argv[1]), "runs_per_second": b["items_per_second"]}))' "$ranks" >>"$out"
    /usr/bin/python3 bench/anchors/simpy_om_cache.py "$ranks" "$seeds" >>"$out"
  done
done
python3 - "$out" "$rounds" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"speed: median of {sys.argv[2]} alternating rounds, runs per second on one core")
print(f"{'ranks':>5} {'racesim runs/s':>15} {'simpy runs/s':>13} {'ratio':>7} {'target':>7}")
for ranks in (8, 64):
    med = {e: statistics.median(r["runs_per_second"] for r in rows if r["engine"] == e and r["ranks"] == ranks)
           for e in ("racesim", "simpy")}
    print(f"{ranks:>5} {med['racesim']:>15,.0f} {med['simpy']:>13,.0f} {med['racesim'] / med['simpy']:>6.1f}x {'20x':>7}")
PY
