#!/usr/bin/env bash
# Boost.Context must be linked into racesim's binaries, not loaded from its shared library: every
# context switch is a call into it (jump_fcontext), direct when linked in, through the PLT from
# the .so. Boost.Fiber, which the kernel no longer uses, must not be loaded either. Fails if FILE
# needs either shared library.
#
#   boost_linked_in.sh OBJDUMP FILE
set -euo pipefail
objdump=$1
file=$2
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
