#!/usr/bin/env bash
# Installs what hase needs to build and test on Debian bookworm (run as root; idempotent).
# Debian packages via apt-get; onnxruntime-node (the test peer for the ort-cpu profile) via npm.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(
  build-essential cmake pkg-config
  libprotobuf-dev protobuf-compiler libonnx-dev       # ONNX loading + shape inference
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev     # configs, JSON, command line
  libfmt-dev libspdlog-dev                            # formatting, logging
  libxgboost-dev                                      # learned latency model
  zlib1g-dev                                          # gzip datasets / model files
  libsqlite3-dev                                      # durable queue
  libglpk-dev                                         # LP makespan lower bound
  libcpp-httplib-dev libssl-dev                       # REST daemon, scrapers
  libgtest-dev libgmock-dev libbenchmark-dev          # tests, benchmarks
)
# onnxruntime-node (tests only) needs node and npm. A machine whose nodejs comes from
# NodeSource ships npm inside it, and Debian's npm package then conflicts: only ask apt for
# them when the commands are absent.
command -v node >/dev/null 2>&1 || PKGS+=(nodejs)
command -v npm >/dev/null 2>&1 || PKGS+=(npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# onnxruntime-node: CPU binaries ship in the npm package; its install script would try to
# download GPU binaries, which ONNXRUNTIME_NODE_INSTALL=skip turns off.
if [ -f tools/ort/package.json ] && [ ! -d tools/ort/node_modules/onnxruntime-node ]; then
  (cd tools/ort && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi
