#!/usr/bin/env bash
# ASan + UBSan over hase's input parsers, kernels and service (issue #15): builds the `asan`
# CMake preset (CMakePresets.json) for these test targets only, runs them, then runs the fuzz
# targets for HASE_FUZZ_ITERATIONS inputs each (default 10 000). Any sanitizer report fails
# (halt_on_error; UBSan does not recover). Leak checking is off: protobuf/ONNX keep
# process-lifetime allocations that LeakSanitizer reports as leaks.
#
# Usage: tools/ci/sanitize.sh [-j N]     (from anywhere; build tree: build-asan/)
set -euo pipefail
cd "$(dirname "$0")/../.."
jobs=2
if [[ "${1:-}" == "-j" ]]; then jobs="$2"; fi
targets=(telemetry_parse_test telemetry_http_test graph_onnx_loader_test kernels_test
         service_test service_api_test service_guard_test service_kube_test fuzz_test)
start=$(date +%s)
cmake --preset asan >/dev/null
help=$(cmake --build build-asan --target help)
existing=()
for t in "${targets[@]}"; do
  if grep -qx "\.\.\. $t" <<<"$help"; then existing+=("$t"); fi
done
cmake --build build-asan -j "$jobs" --target "${existing[@]}"
built=$(date +%s)
export ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export HASE_FUZZ_ITERATIONS=${HASE_FUZZ_ITERATIONS:-10000}
status=0
for t in "${existing[@]}"; do
  bin=$(find build-asan/tests -type f -name "$t" -perm -u+x | head -1)
  echo "== $t (ASan + UBSan)"
  if ! "$bin" --gtest_brief=1; then status=1; fi
done
end=$(date +%s)
echo "sanitize.sh: build $((built - start)) s, tests $((end - built)) s, targets: ${existing[*]}"
exit $status
