#!/usr/bin/env bash
# hase kernels vs onnxruntime-node's graph optimisation, on full-weight files, in one run.
#   bench/kernels_vs_ort.sh [BUILD_DIR] [MODEL ...]  (default build/; vgg16 resnet50 vit_b_16
#                                                     convnext_tiny)
# Generates full-weight files (VGG-16 ~550 MB, ViT-B/16 ~350 MB, ConvNeXt-Tiny ~115 MB,
# ResNet-50 ~100 MB) from the weight-free models/MODEL.onnx with hase_materialize into
# BUILD_DIR/bench/ (never committed; reused on later runs); a model without its weight-free
# file is skipped. Then times
#   - `hase kernels FILE` pinned to one core (taskset -c 0), best of 5, wall clock;
#   - onnxruntime-node InferenceSession.create(FILE, {graphOptimizationLevel: 'extended',
#     executionProviders: ['cpu']}), wall clock in node (ORT's model load + optimisation + kernel
#     set-up; ORT reads every weight byte), best of 3, same file, same run.
# Targets: hase ≤ 1 s for VGG-16 and < 0.5 s for ViT-B/16 and ConvNeXt-Tiny, on one core.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
shift || true
MODELS=("$@")
[ ${#MODELS[@]} -gt 0 ] || MODELS=(vgg16 resnet50 vit_b_16 convnext_tiny)
HASE=$BUILD/src/cli/hase
MAT=$BUILD/tools/hase_materialize
[ -x "$HASE" ] && [ -x "$MAT" ] || { echo "build hase and hase_materialize first: cmake --build $BUILD --target hase hase_materialize" >&2; exit 2; }
mkdir -p "$BUILD/bench"
have_ort=0
[ -f tools/ort/node_modules/onnxruntime-node/package.json ] && have_ort=1

printf '%-14s %9s %14s %8s %16s\n' model "file MB" "hase 1 core s" "kernels" "ORT create s"
for m in "${MODELS[@]}"; do
  if [ ! -f "models/$m.onnx" ]; then
    printf '%-10s  skipped: no models/%s.onnx (tools/export_zoo.py %s)\n' "$m" "$m" "$m"
    continue
  fi
  full=$BUILD/bench/$m.full.onnx
  [ -f "$full" ] || "$MAT" "models/$m.onnx" "$full" >/dev/null
  mb=$(( $(stat -c %s "$full") / 1000000 ))
  best=""
  for i in 1 2 3 4 5; do
    s=$( { /usr/bin/time -f '%e' taskset -c 0 "$HASE" kernels "$full" --format csv > "$BUILD/bench/$m.csv"; } 2>&1 | tail -1 )
    best=$(python3 -c "print(min(float('$s'), float('${best:-1e9}')))")
  done
  n=$(( $(wc -l < "$BUILD/bench/$m.csv") - 1 ))
  ort="-"
  if [ $have_ort = 1 ]; then
    ort=$(NODE_PATH=tools/ort/node_modules node -e "
      const ort = require('onnxruntime-node');
      (async () => {
        let best = 1e9;
        for (let i = 0; i < 3; ++i) {
          const t0 = process.hrtime.bigint();
          const s = await ort.InferenceSession.create(process.argv[1],
              {graphOptimizationLevel: 'extended', executionProviders: ['cpu']});
          best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
          await s.release();
        }
        console.log(best.toFixed(2));
      })();" "$full")
  fi
  printf '%-14s %9s %14s %8s %16s\n' "$m" "$mb" "$best" "$n" "$ort"
done
