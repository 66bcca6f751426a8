#!/usr/bin/env bash
# The scenario-level anchor: the compiled-model cache race (scenarios/om_read_while_write.yaml)
# on a `local` mount, on racesim and on a hand-written SimPy model of it
# (bench/anchors/simpy_om_cache.py), at 8 and 64 ranks on one node, and at 512 and 4,096.
#
#   bench/anchors/run_scenario_anchor.sh [ROUNDS] [BUILD_DIR] [VALIDATE_SEEDS] [SCALE_ROUNDS]
#                                                  (defaults: 5, build-anchors, 2000, 3)
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
# 3. Scale: SCALE_ROUNDS alternating rounds (0: skip) of the same at 512 and 4,096 ranks, all on
#    one node (BM_OmReadWhileWriteLocal/512 and /4096; the SimPy model with 4 seeds at 512 and
#    1 at 4,096, 44 and 11 runs). Prints the ratio at each size and each engine's growth
#    exponent k = log(t4096 / t512) / log 8 of its median time per run (the scaling bound is
#    k <= 1.2), and racesim's events per run. The SimPy model is the same
#    mechanism written independently, so its k bounds what the model's own work grows by; it is
#    not a measurement of it: the models are validated at 8 ranks only, and SimPy's events are
#    not counted (bench/README.md, "Current figures").
set -euo pipefail
rounds=${1:-5}
build=${2:-build-anchors}
vseeds=${3:-2000}
scale_rounds=${4:-3}
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

# One JSON line: racesim's runs per second and events per run on BM_OmReadWhileWriteLocal/RANKS.
racesim_rate() {
  "$build/bench/racesim_bench" --benchmark_filter="^BM_OmReadWhileWriteLocal/$1/" \
      --benchmark_format=json --benchmark_min_time=1 2>/dev/null |
    python3 -c '
import json, sys
b = json.load(sys.stdin)["benchmarks"][0]
print(json.dumps({"engine": "racesim", "ranks": int(sys.argv[1]), "runs_per_second": b["items_per_second"],
                  "events_per_run": b["events_per_run"]}))' "$1"
}
# Appends ROUNDS alternating rounds of both engines to OUT, at each RANKS:SIMPY_SEEDS in turn.
measure() {  # OUT ROUNDS RANKS:SIMPY_SEEDS...
  local out=$1 n=$2 r pair
  shift 2
  for ((r = 1; r <= n; r++)); do
    for pair in "$@"; do
      racesim_rate "${pair%%:*}" >>"$out"
      /usr/bin/python3 bench/anchors/simpy_om_cache.py "${pair%%:*}" "${pair#*:}" >>"$out"
    done
  done
}

# Prints the medians of OUT (written by measure): MODE speed is runs per second and the ratio at
# 8 and 64 ranks against the 20x target; MODE scale adds time per run at 512 and 4,096 ranks,
# racesim's events per run and each engine's growth exponent between the two.
summarise() {  # MODE OUT ROUNDS
  python3 - "$@" <<'PY'
import json, math, statistics, sys
mode, path, rounds = sys.argv[1], sys.argv[2], sys.argv[3]
rows = [json.loads(l) for l in open(path) if l.strip()]
sizes = (8, 64) if mode == "speed" else (512, 4096)
def median(engine, ranks, key):
    v = [r[key] for r in rows if r["engine"] == engine and r["ranks"] == ranks]
    if not v or min(v) <= 0:
        sys.exit(f"{mode}: no {key} for {engine} at {ranks} ranks")
    return statistics.median(v)
if mode == "speed":
    print(f"speed: median of {rounds} alternating rounds, runs per second on one core")
    print(f"{'ranks':>5} {'racesim runs/s':>15} {'simpy runs/s':>13} {'ratio':>7} {'target':>7}")
    for ranks in sizes:
        a, b = median("racesim", ranks, "runs_per_second"), median("simpy", ranks, "runs_per_second")
        print(f"{ranks:>5} {a:>15,.0f} {b:>13,.0f} {a / b:>6.1f}x {'20x':>7}")
    sys.exit(0)
print(f"scale: median of {rounds} alternating rounds, all ranks on one node, one core")
print(f"{'ranks':>5} {'racesim ms/run':>15} {'simpy ms/run':>13} {'ratio':>7} {'racesim events/run':>19}")
t = {}
for ranks in sizes:
    for e in ("racesim", "simpy"):
        t[e, ranks] = 1e3 / median(e, ranks, "runs_per_second")
    t["events", ranks] = median("racesim", ranks, "events_per_run")
    print(f"{ranks:>5} {t['racesim', ranks]:>15,.1f} {t['simpy', ranks]:>13,.1f} "
          f"{t['simpy', ranks] / t['racesim', ranks]:>6.1f}x {t['events', ranks]:>19,.0f}")
k = {e: math.log(t[e, 4096] / t[e, 512]) / math.log(8) for e in ("racesim", "simpy", "events")}
print(f"growth exponent k from 512 to 4,096 ranks: racesim {k['racesim']:.2f} (its events {k['events']:.2f}), "
      f"SimPy {k['simpy']:.2f}")
PY
}

echo
measure "$work/speed.jsonl" "$rounds" 8:300 64:60
summarise speed "$work/speed.jsonl" "$rounds"
if ((scale_rounds > 0)); then
  echo
  measure "$work/scale.jsonl" "$scale_rounds" 512:4 4096:1
  summarise scale "$work/scale.jsonl" "$scale_rounds"
fi
