#!/usr/bin/env bash
# probe/run.sh OUTDIR — measures this machine's GPU for hase (one GPU, < 10 minutes once built).
#
#   1. builds hase and hase-probe if BUILD (default: build/) lacks them;
#   2. writes the kernel lists of the zoo's ResNet-50, MobileNetV2 and YOLOv8n (when present
#      under models/) with `hase kernels --format json`, per batch size;
#   3. hase-probe info  → OUTDIR/gpu.json
#      hase-probe micro → OUTDIR/profile.yaml (docs/microbenchmark-profile.md) + micro.csv
#   4. hase-probe kernels under each background load (a stressor process per level)
#      → OUTDIR/kernels.csv (docs/training-data.md, source=probe), models.csv (sum of kernel
#        times vs whole model on one stream and as one CUDA graph), load.csv (NVML/GPM readings
#        under DCGM field names).
#
# Environment (all optional):
#   HASE_BUILD_DIR      build directory (default: <repo>/build)
#   HASE_PROBE_DEVICE   CUDA device ordinal (default 0)
#   HASE_PROBE_MODELS   model names under models/ (default "resnet50 mobilenet_v2 yolov8n")
#   HASE_PROBE_BATCHES  batch sizes (default "1 8")
#   HASE_PROBE_LOADS    load schedule (default below; syntax in probe/host/stress_level.h)
#   HASE_PROBE_REPS     timed launches per kernel (default 15; 3 warm-up launches before)
#   HASE_PROBE_QUICK=1  smoke run: small microbenchmarks, idle + one load, 5 reps
# Without MPS, the stressor's kernels time-slice with the timed ones; start MPS
# (nvidia-cuda-mps-control -d) first to measure SM sharing instead. load.csv shows which.
set -euo pipefail

if [[ $# -ne 1 || "$1" == -* ]]; then
  echo "usage: probe/run.sh OUTDIR" >&2
  exit 2
fi
OUT=$1
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${HASE_BUILD_DIR:-$ROOT/build}
DEVICE=${HASE_PROBE_DEVICE:-0}
MODELS=${HASE_PROBE_MODELS:-"resnet50 mobilenet_v2 yolov8n"}
BATCHES=${HASE_PROBE_BATCHES:-"1 8"}
# Eight levels: under time-slicing a timed launch can wait a time slice (~1-2 ms), so each loaded
# level costs about kernels x (warm-up + reps) x 1 ms; ~700 kernels x 18 → ~15 s per level.
LOADS=${HASE_PROBE_LOADS:-"idle;sm=0.5;sm=1;dram=0.5;dram=1;tensor=0.5;tensor=1;sm=0.5,dram=0.5"}
REPS=${HASE_PROBE_REPS:-15}
MICRO_FLAGS=()
if [[ "${HASE_PROBE_QUICK:-0}" == 1 ]]; then
  LOADS=${HASE_PROBE_LOADS:-"idle;sm=0.5,dram=0.5"}
  REPS=${HASE_PROBE_REPS:-5}
  MICRO_FLAGS=(--quick)
fi

start=$(date +%s)
step() { echo "[probe/run.sh +$(( $(date +%s) - start ))s] $*" >&2; }

HASE=$BUILD/src/cli/hase
PROBE=$BUILD/probe/hase-probe
if [[ ! -x "$HASE" || ! -x "$PROBE" ]]; then
  step "building hase and hase-probe in $BUILD"
  cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DHASE_BUILD_TESTS=OFF \
    -DHASE_BUILD_BENCH=OFF >&2
  cmake --build "$BUILD" -j"$(nproc)" --target hase hase-probe >&2
fi
if [[ ! -x "$PROBE" ]]; then
  echo "probe/run.sh: $PROBE was not built (is nvcc with cuDNN 9 installed? see README § probe)" >&2
  exit 1
fi

mkdir -p "$OUT/kernels"
step "GPU"
"$PROBE" info --device "$DEVICE" | tee "$OUT/gpu.json"

step "kernel lists"
KERNEL_ARGS=()
for m in $MODELS; do
  f=$ROOT/models/$m.onnx
  if [[ ! -f "$f" ]]; then
    step "skipping $m: $f not found"
    continue
  fi
  for b in $BATCHES; do
    j=$OUT/kernels/${m}_b$b.json
    "$HASE" kernels "$f" --batch "$b" --format json > "$j"
    KERNEL_ARGS+=(--kernels "$j")
  done
done
if [[ ${#KERNEL_ARGS[@]} -eq 0 ]]; then
  echo "probe/run.sh: no model found under $ROOT/models" >&2
  exit 1
fi

step "microbenchmarks"
"$PROBE" micro --device "$DEVICE" --out "$OUT/profile.yaml" --csv "$OUT/micro.csv" \
  "${MICRO_FLAGS[@]}"

step "kernel timing under loads: $LOADS"
"$PROBE" kernels --device "$DEVICE" "${KERNEL_ARGS[@]}" --out "$OUT/kernels.csv" \
  --model-out "$OUT/models.csv" --load-out "$OUT/load.csv" --load "$LOADS" --reps "$REPS" --warmup 3 \
  | tee "$OUT/summary.txt"

{
  echo "# hase probe run"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "command: HASE_PROBE_LOADS='$LOADS' HASE_PROBE_BATCHES='$BATCHES' HASE_PROBE_REPS=$REPS probe/run.sh $OUT"
  echo "hase commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "gpu: $(grep -o '"name": "[^"]*"' "$OUT/gpu.json" | head -1)"
  echo "driver: $(grep -o '"driver": "[^"]*"' "$OUT/gpu.json" | head -1)"
  echo "elapsed_s: $(( $(date +%s) - start ))"
} > "$OUT/RUN.txt"
step "done: $OUT (RUN.txt, profile.yaml, kernels.csv, models.csv, load.csv)"
