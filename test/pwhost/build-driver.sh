#!/usr/bin/env bash
# Builds pwdriver-waits: the shared real-host driver (../shared/tools/pwhost/pwdriver.cc, on
# proxy-wasm-cpp-host + WAMR) with pwdriver-waits.patch, which lets time pass where a proxy's would:
#   --wait-ticks N          fire up to N ticks (virtual clock + the module's tick period each) while a
#                           stream is paused, and while a root context drains at shutdown
#                           (proxy_on_done answered false, until the module calls proxy_done);
#   --answer-at-shutdown    answer callouts made during shutdown (Envoy keeps a draining root's calls);
# and, as Envoy, it hands a response's trailers (--resp-trailer) to the module (proxy_on_response_trailers).
# Without them the module's retries (on its timer) and its shutdown flush cannot be observed.
# Reuses the libraries of build.sh in PWHOST_DIR (builds them first when missing).
# Prints the binary's path on the last line of stdout.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TOOLS=${PWHOST_TOOLS:-$ROOT/../shared/tools/pwhost}
[[ -d $TOOLS ]] || TOOLS=/work/shared/tools/pwhost
OUT=${PWHOST_DIR:-/tmp/pwhost}
CXX=${CXX:-g++}
if [[ ! -f $OUT/libproxy_wasm.a || ! -f $OUT/wamr-build/libiwasm.a ]]; then
  PWHOST_DIR=$OUT bash "$TOOLS/build.sh" >&2
fi
# Up to date: nothing to do.
if [[ -x $OUT/pwdriver-waits && $OUT/pwdriver-waits -nt $HERE/pwdriver-waits.patch && $OUT/pwdriver-waits -nt $TOOLS/pwdriver.cc && $OUT/pwdriver-waits -nt $OUT/libproxy_wasm.a ]]; then
  echo "$OUT/pwdriver-waits"
  exit 0
fi
cp "$TOOLS/pwdriver.cc" "$OUT/pwdriver-waits.cc"
patch -s "$OUT/pwdriver-waits.cc" < "$HERE/pwdriver-waits.patch"
SRC=$OUT/src
"$CXX" -std=c++20 -O2 -g0 -fPIC -Wno-deprecated-declarations -Wall \
  -DPROXY_WASM_HAS_RUNTIME_WAMR -DPROXY_WASM_HOST_ENGINE_WAMR \
  -I"$SRC/cpphost" -I"$SRC/sdk" -I"$SRC/wamr/core/iwasm/include" \
  -o "$OUT/pwdriver-waits" "$OUT/pwdriver-waits.cc" \
  -Wl,--whole-archive "$OUT/libproxy_wasm.a" -Wl,--no-whole-archive "$OUT/wamr-build/libiwasm.a" \
  -Wl,-z,noexecstack -lcrypto -lpthread -ldl -lm
echo "$OUT/pwdriver-waits"
