#!/usr/bin/env bash
# Builds pwdriver-callgrind: pwdriver-waits (build-driver.sh) linked against a second build of
# WAMR that differs from build.sh's in one option, WAMR_DISABLE_WRITE_GS_BASE=1. Where the CPU
# has FSGSBASE, WAMR's build detects it and writes the linear memory's base to the GS register
# (`wrgsbase`) on every call into the module; valgrind cannot execute that instruction, so the
# instruction-count bench (test/bench/pwhost.ts) runs this build. The fast interpreter never reads
# GS, and on a CPU without FSGSBASE build.sh's own WAMR is configured the same way. Every other
# option is taken from build.sh's WAMR build (its CMakeCache.txt), so the two cannot drift apart.
# Prints the binary's path on the last line of stdout.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${PWHOST_DIR:-/tmp/pwhost}
CXX=${CXX:-g++}
bash "$HERE/build-driver.sh" >/dev/null
DRIVER=$OUT/pwdriver-callgrind
LIB=$OUT/wamr-build-callgrind/libiwasm.a
if [[ -x $DRIVER && $DRIVER -nt $OUT/pwdriver-waits && $DRIVER -nt $HERE/build-callgrind-driver.sh ]]; then
  echo "$DRIVER"
  exit 0
fi
mapfile -t options < <(sed -nE 's/^(WAMR_BUILD_[A-Z_]+|CMAKE_BUILD_TYPE|CMAKE_POSITION_INDEPENDENT_CODE|CMAKE_C_COMPILER):[A-Z]+=(.*)$/-D\1=\2/p' "$OUT/wamr-build/CMakeCache.txt")
(( ${#options[@]} > 5 )) || { echo "build-callgrind-driver.sh: no WAMR options in $OUT/wamr-build/CMakeCache.txt" >&2; exit 1; }
cmake -S "$OUT/src/wamr" -B "$OUT/wamr-build-callgrind" -GNinja "${options[@]}" -DWAMR_DISABLE_WRITE_GS_BASE=1 >"$OUT/wamr-callgrind-cmake.log" 2>&1 \
  || { tail -30 "$OUT/wamr-callgrind-cmake.log" >&2; exit 1; }
ninja -C "$OUT/wamr-build-callgrind" -j2 vmlib >"$OUT/wamr-callgrind-ninja.log" 2>&1 || { tail -30 "$OUT/wamr-callgrind-ninja.log" >&2; exit 1; }
SRC=$OUT/src
"$CXX" -std=c++20 -O2 -g0 -fPIC -Wno-deprecated-declarations -Wall \
  -DPROXY_WASM_HAS_RUNTIME_WAMR -DPROXY_WASM_HOST_ENGINE_WAMR \
  -I"$SRC/cpphost" -I"$SRC/sdk" -I"$SRC/wamr/core/iwasm/include" \
  -o "$DRIVER" "$OUT/pwdriver-waits.cc" \
  -Wl,--whole-archive "$OUT/libproxy_wasm.a" -Wl,--no-whole-archive "$LIB" \
  -Wl,-z,noexecstack -lcrypto -lpthread -ldl -lm
echo "$DRIVER"
