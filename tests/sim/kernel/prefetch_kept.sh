#!/usr/bin/env bash
# The kernel's dispatch-time prefetch must survive optimisation. GCC once compiled
# Simulation::prefetch_next() out of Simulation::advance() without a word (its only effects were
# __builtin_prefetch calls, so it looked like a const function whose call is dead code), and
# BM_Timers/10000 lost 40% of its speed. Passes when advance() in the given binary or library
# prefetches itself or calls prefetch_next().
#
#   prefetch_kept.sh OBJDUMP FILE
set -euo pipefail
objdump=$1
file=$2
body=$("$objdump" -d -r -C --no-show-raw-insn "$file" |
  awk '/<racesim::kernel::Simulation::advance\(\)>:$/ {on = 1; next} on && /^$/ {on = 0} on {print}')
if [ -z "$body" ]; then
  echo "FAIL: no Simulation::advance() in $file"
  exit 1
fi
if grep -q 'prefetch' <<<"$body"; then
  echo "ok: Simulation::advance() in $file prefetches the next process"
  exit 0
fi
echo "FAIL: Simulation::advance() in $file neither prefetches nor calls prefetch_next():"
echo "the dispatch-time prefetch was optimised away (see prefetch() in sim/kernel/simulation.cc)"
exit 1
