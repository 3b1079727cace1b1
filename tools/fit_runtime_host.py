#!/usr/bin/env python3
"""Fits the PyTorch-eager per-operator host cost of the `pytorch-eager` runtime profile.

    python3 tools/fit_runtime_host.py ../shared/data/kernels/neusight

NeuSight times each PyTorch 2.1 call with CUDA events on an otherwise empty stream, so a tiny
elementwise call measures the host path from one event to the next (Python, dispatcher,
cudaLaunchKernel) plus a kernel of a few microseconds (PITFALLS 3: "small elementwise kernels
measure dispatch"). Per machine: the median latency of add/mul/tanh calls on at most 64 K
elements; the runtime constant is the median over the five machines, in microseconds. Uses only
the Python standard library. Output feeds kPytorchOpFloorUs in src/hase/predict/runtime_profile.cc.
"""
import csv
import gzip
import os
import statistics
import sys


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/kernels/neusight"
    per_gpu = {}
    for op in ("add", "mul", "tanh"):
        d = os.path.join(root, op)
        for name in sorted(os.listdir(d)):
            if not name.endswith(".csv.gz"):
                continue
            with gzip.open(os.path.join(d, name), "rt") as f:
                for r in csv.DictReader(f):
                    if int(r["B"]) * int(r["H"]) <= 65536:
                        per_gpu.setdefault(name[:-7], []).append(1000.0 * float(r["Latency"]))
    floors = {g: statistics.median(v) for g, v in per_gpu.items()}
    for g, us in sorted(floors.items()):
        print(f"{g}: median small-op latency {us:.1f} us ({len(per_gpu[g])} calls)")
    print(f"pytorch-eager host cost per operator (median over machines): "
          f"{statistics.median(floors.values()):.1f} us")


if __name__ == "__main__":
    main()
