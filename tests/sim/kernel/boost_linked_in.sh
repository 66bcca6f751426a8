#!/usr/bin/env bash
# Boost.Context must be linked into racesim's binaries, not loaded from its shared library: every
# context switch is a call into it (jump_fcontext), direct when linked in, through the PLT from
# the .so. Boost.Fiber, which the kernel no longer uses, must not be loaded either. On x86-64 the
# switch itself must be racesim's (sim/kernel/context_switch.cc, which returns with `ret` and
# keeps the return predictor in step), not Boost's: its symbol jump_fcontext must sit at the
# address of racesim_jump_fcontext. Fails if a FILE needs either shared library or, on x86-64,
# links Boost's switch.
#
#   boost_linked_in.sh OBJDUMP FILE...
set -euo pipefail
objdump=$1
shift
for file in "$@"; do
  needed=$("$objdump" -p "$file" | awk '$1 == "NEEDED" {print $2}')
  if [ -z "$needed" ]; then
    echo "FAIL: no dynamic section (NEEDED entries) in $file"
    exit 1
  fi
  if grep -E '^libboost_(fiber|context)\.so' <<<"$needed"; then
    echo "FAIL: $file loads the Boost libraries above at run time; CMakeLists.txt must set"
    echo "Boost_USE_STATIC_LIBS before find_package(Boost)"
    exit 1
  fi
  echo "ok: $file has Boost.Context linked in (needs: $(tr '\n' ' ' <<<"$needed"))"
  if [ "$(uname -m)" = x86_64 ]; then
    symbols=$("$objdump" -t "$file")
    ours=$(awk '$NF == "racesim_jump_fcontext" {print $1}' <<<"$symbols")
    linked=$(awk '$NF == "jump_fcontext" {print $1}' <<<"$symbols")
    if [ -z "$ours" ] || [ "$ours" != "$linked" ]; then
      echo "FAIL: $file switches contexts with Boost's jump_fcontext (at ${linked:-none}), not racesim's"
      echo "(racesim_jump_fcontext at ${ours:-none}): sim/kernel/context_switch.cc was not linked in its place"
      exit 1
    fi
    echo "ok: $file switches contexts with racesim's jump_fcontext (at $linked)"
  fi
done
