#!/usr/bin/env python3
"""Builds the measured-truth scheduling experiment from timm's measured inference throughput.

    /usr/bin/python3 tools/timm_experiment.py ../shared/data/models/timm OUT [--seeds 1-5] [--large]

Writes into OUT (nothing is copied from the data; only derived numbers):
  truth.csv          `--truth table:` file (sim/table_truth.h): per-batch latency of every zoo
                     CNN that timm measured (ResNet-18…152, VGG-11…19, DenseNet-121…201,
                     MobileNetV2, MobileNetV3 small/large), at input 224 and batch 256, on the
                     four GPU types timm measured (RTX 3090, RTX 4090, RTX 5090, RTX PRO 6000
                     Max-Q); AMP (fp16 autocast), NCHW, PyTorch eager (non-dynamo files, the
                     newest per GPU).
  cluster.yaml       4 × RTX PRO 6000 Max-Q, 4 × RTX 5090, 8 × RTX 4090, 8 × RTX 3090, up to 4
                     tasks per GPU.
  workload_S.yaml    one workload per seed S: 200 tasks, 80 queued at t = 0 and the rest
                     arriving as a Poisson process (mean gap 0.5 s); model uniform over the 16;
                     sample count from a lognormal target runtime (median 30 s on an RTX 3090,
                     sigma 0.8, clipped to 2-600 s) at the *measured* RTX 3090 throughput.

With --large (issue 28, a large fleet with arrivals): cluster.yaml has 64 GPUs (8 × RTX PRO
6000 Max-Q, 12 × RTX 5090, 20 × RTX 4090, 24 × RTX 3090) and each workload_S.yaml 1 000 tasks,
all arriving as one Poisson process (mean gap 0.3 s, from t = 0), drawn as above.

Assumption (stated, not measured): timm ran each model at its own batch size (mostly 1024, lower
where it ran out of memory); latency at batch 256 is taken as 256 × (step time / batch), i.e.
throughput is saturated from batch 256 up. The truth table has no demand column: every task
saturates its GPU (demand 1), so co-location follows hase's contention model at demand 1.
Then run, per seed (hase's own predictor is the oracle, with the precision timm used):

    hase simulate --cluster OUT/cluster.yaml --workload OUT/workload_S.yaml \\
        --truth table:OUT/truth.csv --precision tensor --seed S
"""
import argparse
import csv
import math
import os
import random
import sys

FILES = {  # newest eager (non-dynamo) file per GPU; hase catalog name
    "RTX-3090": "benchmark-infer-amp-nchw-pt240-cu124-rtx3090.csv",
    "RTX-4090": "benchmark-infer-amp-nchw-pt291-cu128-4090.csv",
    "RTX-5090": "benchmark-infer-amp-nchw-pt291-cu130-5090.csv",
    "RTX-PRO-6000-Max-Q": "benchmark-infer-amp-nchw-pt291-cu130-pro6000maxq.csv",
}
ZOO = {  # timm name -> zoo name (same architectures as torchvision's)
    "resnet18": "resnet18", "resnet34": "resnet34", "resnet50": "resnet50",
    "resnet101": "resnet101", "resnet152": "resnet152",
    "vgg11": "vgg11", "vgg13": "vgg13", "vgg16": "vgg16", "vgg19": "vgg19",
    "densenet121": "densenet121", "densenet161": "densenet161",
    "densenet169": "densenet169", "densenet201": "densenet201",
    "mobilenetv2_100": "mobilenet_v2", "mobilenetv3_large_100": "mobilenet_v3_large",
    "mobilenetv3_small_100": "mobilenet_v3_small",
}
BATCH = 256
CLUSTER = [("pro6000", "RTX-PRO-6000-Max-Q", 4), ("rtx5090", "RTX-5090", 4),
           ("rtx4090", "RTX-4090", 8), ("rtx3090", "RTX-3090", 8)]
CLUSTER_LARGE = [("pro6000", "RTX-PRO-6000-Max-Q", 8), ("rtx5090", "RTX-5090", 12),
                 ("rtx4090", "RTX-4090", 20), ("rtx3090", "RTX-3090", 24)]


def per_sample_ms(path):
    out = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            name = row["model"]
            if name not in ZOO or row["infer_img_size"] != "224":
                continue
            if not row["infer_step_time"] or not row["infer_batch_size"]:
                continue
            out[ZOO[name]] = float(row["infer_step_time"]) / float(row["infer_batch_size"])
    return out


def parse_seeds(spec):
    if "-" in spec:
        a, b = spec.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(s) for s in spec.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("timm_dir")
    ap.add_argument("out")
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--large", action="store_true",
                    help="64 GPUs and 1 000 Poisson-arriving tasks per seed (see above)")
    args = ap.parse_args()
    table = {}
    for gpu, name in FILES.items():
        path = os.path.join(args.timm_dir, name)
        if not os.path.exists(path):
            sys.exit(f"timm_experiment: {path}: not found (expected the timm result tables)")
        table[gpu] = per_sample_ms(path)
    models = sorted(set.intersection(*(set(t) for t in table.values())))
    if len(models) != len(ZOO):
        missing = sorted(set(ZOO.values()) - set(models))
        sys.exit(f"timm_experiment: models missing on some GPU: {missing}")
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "truth.csv"), "w") as f:
        f.write("# Derived by tools/timm_experiment.py from timm's benchmark-infer-amp-nchw "
                "tables (AMP, eager); latency per batch of 256 = 256 x step time / batch.\n")
        f.write("model,batch_size,input_size,gpu_type,latency_ms\n")
        for m in models:
            for gpu in FILES:
                f.write(f"{m},{BATCH},224,{gpu},{table[gpu][m] * BATCH:.4f}\n")
    with open(os.path.join(args.out, "cluster.yaml"), "w") as f:
        f.write("# Measured-truth experiment (tools/timm_experiment.py{}): the four GPU types "
                "timm measured.\nname: timm-{}\nmax_tasks_per_gpu: 4\nnodes:\n".format(
                    " --large" if args.large else "", 64 if args.large else 24))
        for node, gpu, n in (CLUSTER_LARGE if args.large else CLUSTER):
            f.write(f"  - name: {node}\n    gpus:\n      - {{type: {gpu}, count: {n}}}\n")
    for seed in parse_seeds(args.seeds):
        rng = random.Random(seed)
        lines = [f"# Measured-truth experiment, seed {seed} (tools/timm_experiment.py).",
                 "tasks:"]
        t = 0.0
        n_tasks, at_zero, gap_s = (1000, 0, 0.3) if args.large else (200, 80, 0.5)
        for i in range(n_tasks):
            if i >= at_zero:
                t += rng.expovariate(1 / gap_s)
            m = rng.choice(models)
            target_s = min(600.0, max(2.0, math.exp(math.log(30.0) + 0.8 * rng.gauss(0, 1))))
            samples = max(BATCH, int(target_s * 1000 / table["RTX-3090"][m]))
            lines.append(f"  - {{name: t{i:03d}, model: {m}, batch_size: {BATCH}, "
                         f"input_size: 224, samples: {samples}, arrival_s: {t:.3f}}}")
        with open(os.path.join(args.out, f"workload_{seed}.yaml"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"{args.out}: truth.csv ({len(models)} models x {len(FILES)} GPU types), cluster.yaml, "
          f"workload_<seed>.yaml for seeds {args.seeds}")


if __name__ == "__main__":
    main()
