#!/usr/bin/env bash
# Boost.Fiber and Boost.Context must be linked into racesim's binaries, not loaded from their
# shared libraries: from the .so, every context switch reaches Boost's thread_local active
# context through __tls_get_addr and the PLT (BM_Ring 6 to 20% slower), and a process's fiber
# touches a second stack page when it ends (8.8 KiB per process instead of 4.6; bench/README.md).
# Fails if FILE needs either shared library.
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
echo "ok: $file has Boost.Fiber and Boost.Context linked in (needs: $(tr '\n' ' ' <<<"$needed"))"
