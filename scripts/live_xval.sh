#!/usr/bin/env bash
# The live cross-validation of a scenario: every strategy at the chosen point (every point when
# none is given), run live (one process per rank, real files) in a directory, against the
# simulation of the same seeds and more (--sim-seeds) with one mount calibrated to that directory at the same time
# scale (`live --calibrate --time-scale`), and each kind of read and write's cost (its fixed part
# and rate) fitted to what the live runs themselves paid, call by call (`live --fit-costs`). For
# each directory it writes reports/live/CAMPAIGN/NAME/ (the side-by-side report: failure rates with
# Wilson intervals, the difference's interval, ready-time ratios) and keeps what it was made from,
# compressed, in reports/live/data/CAMPAIGN/ (the campaign's options, the calibration, the fitted
# costs and both results files), so the reports can be rebuilt without the hours of live runs
# (--reuse). CAMPAIGN is the scenario's name unless --campaign names it.
#
#   scripts/live_xval.sh [--build-dir=DIR] [--runs=N] [--sim-seeds=N] [--scale=F] [--work=DIR]
#                        [--scenario=FILE] [--point=P] [--mount=NAME] [--set=KEY=VALUE]...
#                        [--strategy=NAME]... [--campaign=NAME] [--calibrated-costs] NAME=DIR...
#   scripts/live_xval.sh [--build-dir=DIR] --reuse
#   scripts/live_xval.sh [--build-dir=DIR] --resim
#
#   NAME=DIR        a directory to run in, named NAME in the reports (tmpfs=/dev/shm, disk=/var/tmp/x)
#   --scenario=FILE the scenario (default scenarios/om_read_while_write.yaml, whose default point
#                   is faults.stall.probability=0 and mount cache)
#   --point=P       the sweep point (default: the default scenario's, else every point)
#   --mount=NAME    the mount calibrated to the directory (default cache)
#   --set=KEY=VALUE an override applied to both sides (repeatable): sizes a live run can write
#   --strategy=NAME only this strategy (repeatable; default every strategy), on both sides
#   --campaign=NAME where the campaign is kept (reports/live/NAME, reports/live/data/NAME; default
#                   the scenario's name): a second campaign of one scenario (another point, other
#                   sizes) beside the first
#   --calibrated-costs  the model takes each read's and write's cost from the calibration alone,
#                   not from the live runs (the costs are fitted and kept all the same)
#   --runs=N        runs per strategy and point (default 300); --scale=F the time scale (default 0.01)
#   --sim-seeds=N   seeds the model runs (default 4 x runs: seeds 0 to N-1, the live runs' among
#                   them): the model is cheap, and its rate's interval is then half as wide, so
#                   the difference's interval is mostly the live side's
#   --work=DIR      where results are kept while running (default xval-work); an interrupted
#                   campaign (Ctrl-C) continues from there when run again with the same options
#   --reuse         rebuild every scenario's reports from reports/live/data/ only (no runs)
#   --resim         simulate every stored campaign again from its stored options, calibrations and
#                   fitted costs (NAME.costs, where the campaign has them) (the model changed, or a
#                   calibration line was added to a .set file), keep the new sim-NAME.jsonl.xz, then
#                   rebuild the reports as --reuse (no live runs)
#
# On the project's 2-core VM the cache race takes about an hour per directory at the defaults
# (tmpfs: 1 s a run; the disk, which fsyncs 180 MiB files for real: about 1.7 s). Run nothing
# else meanwhile: the live runs measure the machine as well.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
runs=300
sim_seeds=
scale=0.01
work=xval-work
reuse=0
resim=0
scenario=scenarios/om_read_while_write.yaml
point=unset
mount=cache
campaign_name=
calibrated_costs=0
sets=()
strategies=()
dirs=()
for arg in "$@"; do
  case "$arg" in
    --build-dir=*) build_dir="${arg#*=}" ;;
    --runs=*) runs="${arg#*=}" ;;
    --sim-seeds=*) sim_seeds="${arg#*=}" ;;
    --scale=*) scale="${arg#*=}" ;;
    --work=*) work="${arg#*=}" ;;
    --scenario=*) scenario="${arg#*=}" ;;
    --point=*) point="${arg#*=}" ;;
    --mount=*) mount="${arg#*=}" ;;
    --set=*) sets+=("${arg#*=}") ;;
    --strategy=*) strategies+=("${arg#*=}") ;;
    --campaign=*) campaign_name="${arg#*=}" ;;
    --calibrated-costs) calibrated_costs=1 ;;
    --reuse) reuse=1 ;;
    --resim) reuse=1; resim=1 ;;
    -*) echo "live_xval.sh: unknown option '$arg' (expected --runs=N, --sim-seeds=N, --scale=F, --work=DIR, --scenario=FILE, --point=P, --mount=NAME, --set=KEY=VALUE, --strategy=NAME, --campaign=NAME, --calibrated-costs, --reuse, --resim)" >&2
        exit 2 ;;
    *=*) dirs+=("$arg") ;;
    *) echo "live_xval.sh: unknown argument '$arg' (expected NAME=DIR or an option)" >&2
       exit 2 ;;
  esac
done
if [ "$point" = unset ]; then
  point=""
  [ "$scenario" = scenarios/om_read_while_write.yaml ] && point=faults.stall.probability=0
fi
if [ -n "$sim_seeds" ] && ! { [[ "$sim_seeds" =~ ^[0-9]+$ ]] && [ "$sim_seeds" -ge "$runs" ]; }; then
  echo "live_xval.sh: --sim-seeds=$sim_seeds: expected a whole number of seeds, at least --runs ($runs), so that the live runs' seeds are among them" >&2
  exit 2
fi
racesim="$build_dir/racesim"
[ -x "$racesim" ] || { echo "live_xval.sh: no $racesim (build first: scripts/setup.sh)" >&2; exit 2; }
command -v xz > /dev/null || { echo "live_xval.sh: needs xz (Debian: apt-get install xz-utils)" >&2; exit 2; }

# The side-by-side report of scenario file $1 (campaign $2) in directory NAME $3, from
# $4/sim-NAME and $4/live-NAME.
report() {
  local file=$1 scn=$2 name=$3 from=$4
  rm -rf "reports/live/$scn/$name"
  "$racesim" report "$file" --results "$from/sim-$name" --results "$from/live-$name" --out "reports/live/$scn/$name" \
    > /dev/null
  echo "wrote reports/live/$scn/$name/$(basename "$file" .yaml).md"
}

# reports/live/README.md: what is here and how it was made, from each campaign's options.
index() {
  {
    echo "# Live runs against the model"
    echo
    echo "<!-- Generated by scripts/live_xval.sh; do not edit. -->"
    echo
    echo "Scenarios run live (one process per rank, real files) and simulated on the same seeds with one mount"
    echo "calibrated to the directory at the live runs' time scale, every strategy side by side; see"
    echo "scenarios/README.md, \"Cross-validation\". Each campaign's options, calibrations and runs are in"
    echo "[data/](data/); \`scripts/live_xval.sh --reuse\` rebuilds every report from them."
    for campaign in reports/live/data/*/campaign; do
      local scn dir file
      dir=$(dirname "$campaign")
      scn=$(basename "$dir")
      file=$(sed -n 's/^scenario=//p' "$campaign")
      echo
      echo "## $scn"
      echo
      echo "\`$file\`$(sed -n 's/^point=\(..*\)/ at \1/p' "$campaign"), $(sed -n 's/^runs=//p' "$campaign") runs per strategy and point at time scale"
      echo "$(sed -n 's/^scale=//p' "$campaign"), mount \`$(sed -n 's/^mount=//p' "$campaign")\` calibrated$(sed -n 's/^set=\(.*\)/, \`\1\`/p' "$campaign" | tr -d '\n') on both sides$(sed -n 's/^strategy=\(.*\)/ \`\1\`/p' "$campaign" | tr -d '\n' | sed 's/^ \(.*\)/, strategies \1 only/'):"
      echo
      for set in "$dir"/*.set; do
        local name
        name=$(basename "$set" .set)
        local costs=""
        if [ -f "$dir/$name.costs" ]; then
          costs=", the costs fitted to the live runs \`$name.costs\`"
          grep -q '^calibrated_costs=1$' "$campaign" && costs="$costs (kept; the model takes the calibration's)"
        fi
        echo "- [$name]($scn/$name/$(basename "$file" .yaml).md): $(grep -m1 '^# file system' "$set" | sed 's/^# //'); the runs and the calibration in"
        echo "  [data/$scn/](data/$scn/) (\`$name.set\`$costs, \`sim-$name.jsonl.xz\`, \`live-$name.jsonl.xz\`)"
      done
    done
  } > reports/live/README.md
}

if [ "$reuse" = 1 ]; then
  for campaign in reports/live/data/*/campaign; do
    dir=$(dirname "$campaign")
    scn=$(basename "$dir")
    file=$(sed -n 's/^scenario=//p' "$campaign")
    for set in "$dir"/*.set; do
      name=$(basename "$set" .set)
      if [ "$resim" = 1 ]; then
        # Campaigns from before sim_seeds simulated the live runs' seeds only.
        seeds=$(sed -n 's/^sim_seeds=//p' "$campaign")
        [ -n "$seeds" ] || seeds=$(sed -n 's/^runs=//p' "$campaign")
        args=(--seeds "$seeds" --set-file "$set")
        # The costs fitted to the live runs, where the campaign has them and used them.
        if [ -f "$dir/$name.costs" ] && ! grep -q '^calibrated_costs=1$' "$campaign"; then
          args+=(--set-file "$dir/$name.costs")
        fi
        p=$(sed -n 's/^point=//p' "$campaign")
        [ -n "$p" ] && args+=(--point "$p")
        while IFS= read -r kv; do args+=(--set "$kv"); done < <(sed -n 's/^set=//p' "$campaign")
        while IFS= read -r s; do args+=(-s "$s"); done < <(sed -n 's/^strategy=//p' "$campaign")
        echo "== $scn, $name: the simulation again"
        rm -rf "$work/$scn/sim-$name"
        mkdir -p "$work/$scn"
        "$racesim" run "$file" "${args[@]}" --out "$work/$scn/sim-$name" > /dev/null
        xz -9 -c "$work/$scn/sim-$name/results.jsonl" > "$dir/sim-$name.jsonl.xz"
      fi
      for side in sim live; do
        mkdir -p "$work/$scn/$side-$name"
        xz -dc "$dir/$side-$name.jsonl.xz" > "$work/$scn/$side-$name/results.jsonl"
      done
      report "$file" "$scn" "$name" "$work/$scn"
    done
  done
  index
  exit 0
fi
[ "${#dirs[@]}" -gt 0 ] || { echo "live_xval.sh: give at least one NAME=DIR (e.g. tmpfs=/dev/shm)" >&2; exit 2; }
[ -f "$scenario" ] || { echo "live_xval.sh: no scenario $scenario" >&2; exit 2; }
scn=${campaign_name:-$(basename "$scenario" .yaml)}
[[ "$scn" =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "live_xval.sh: --campaign=$scn: expected a name (letters, digits, _ . -)" >&2; exit 2; }
data=reports/live/data/$scn
w=$work/$scn
mkdir -p "$w" "$data"
point_args=()
[ -n "$point" ] && point_args=(--point "$point")
set_args=()
for kv in "${sets[@]}"; do set_args+=(--set "$kv"); done
for s in "${strategies[@]}"; do set_args+=(-s "$s"); done
{
  echo "scenario=$scenario"
  echo "point=$point"
  echo "mount=$mount"
  echo "scale=$scale"
  echo "runs=$runs"
  echo "sim_seeds=${sim_seeds:-$((4 * runs))}"
  echo "calibrated_costs=$calibrated_costs"
  for kv in "${sets[@]}"; do echo "set=$kv"; done
  for s in "${strategies[@]}"; do echo "strategy=$s"; done
} > "$w/campaign"
for spec in "${dirs[@]}"; do
  name=${spec%%=*}
  dir=${spec#*=}
  echo "== $scn, $name ($dir): calibration"
  [ -f "$w/$name.set" ] || "$racesim" live --calibrate --dir "$dir" --mount "$mount" --time-scale "$scale" \
    --out "$w/$name.set"
  echo "== $scn, $name ($dir): $runs live runs per strategy at time scale $scale"
  if [ -f "$w/live-$name/results.jsonl" ] && ! grep -q '^{"end"' "$w/live-$name/results.jsonl"; then
    "$racesim" live "$scenario" "${point_args[@]}" "${set_args[@]}" --runs "$runs" --dir "$dir" --time-scale "$scale" \
      --resume "$w/live-$name"
  elif [ ! -f "$w/live-$name/results.jsonl" ]; then
    "$racesim" live "$scenario" "${point_args[@]}" "${set_args[@]}" --runs "$runs" --dir "$dir" --time-scale "$scale" \
      --out "$w/live-$name"
  fi
  echo "== $scn, $name: each read's and write's cost, fitted to the live runs"
  "$racesim" live --fit-costs "$w/live-$name" --mount "$mount" --out "$w/$name.costs"
  cost_args=(--set-file "$w/$name.costs")
  [ "$calibrated_costs" = 1 ] && cost_args=()
  echo "== $scn, $name: the simulation of the same seeds and more, calibrated"
  rm -rf "$w/sim-$name"
  "$racesim" run "$scenario" "${point_args[@]}" "${set_args[@]}" --seeds "${sim_seeds:-$((4 * runs))}" --set-file "$w/$name.set" \
    "${cost_args[@]}" --out "$w/sim-$name" > /dev/null
  cp "$w/campaign" "$data/campaign"
  cp "$w/$name.set" "$data/$name.set"
  cp "$w/$name.costs" "$data/$name.costs"
  for side in sim live; do xz -9 -c "$w/$side-$name/results.jsonl" > "$data/$side-$name.jsonl.xz"; done
  report "$scenario" "$scn" "$name" "$w"
done
index
