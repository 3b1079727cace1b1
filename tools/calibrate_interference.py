#!/usr/bin/env python3
"""Calibrates kappa of hase's co-location contention model on ../shared/data/interference.

    python3 tools/calibrate_interference.py ../shared/data/interference \
        > data/interference_calibration.txt

Model (src/hase/sched/contention_model.h): a task beside co-runners of demand d_j runs
s = 1 + kappa * sum_j d_j times slower than alone, demand in (0, 1].

Gavel (gavel/simulation_throughputs_tidy.csv; training jobs, pairs sharing one K80/P100/V100,
scale factor 1, consolidated): for every measured pair (zeros = not measured, skipped),
s_ij = isolated_i / colocated_i. For each partner j, c_j = median_i (s_ij - 1) = kappa * d_j.
The heaviest partners saturate the GPU (d = 1), so kappa = the 90th percentile of c_j over
partners (a robust max). The spread of log(s_ij - 1) around log(kappa * d_j) gives the
pair-noise sigma the analytic truth model uses.

bencyq_hase (ONNX Runtime kernels under a stressor, A100 / A6000): s = latency at a load level
/ latency at the file's lowest-load level, against the stressor's DCGM sm_active gain:
kappa_bg = median (s - 1) / (sm_active - sm_active_min). Reported as a cross-check only: the
timings include host<->device copies that do not slow down, so it underestimates kappa.
Uses only the Python standard library.
"""
import csv
import math
import os
import statistics
import sys
from collections import defaultdict


def gavel(root):
    path = os.path.join(root, "gavel", "simulation_throughputs_tidy.csv")
    iso = {}
    pairs = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["consolidated"] != "yes" or r["scale_factor"] != "1":
                continue
            if not r["colocated_job"]:
                iso[(r["gpu"], r["job"])] = float(r["throughput_job"])
            elif r["colocated_scale_factor"] == "1":
                pairs.append((r["gpu"], r["job"], r["colocated_job"], float(r["throughput_job"])))
    out = {}
    for gpu in sorted({p[0] for p in pairs}):
        by_partner = defaultdict(list)
        for g, job, other, tp in pairs:
            if g != gpu or tp <= 0 or iso.get((g, job), 0) <= 0:
                continue
            by_partner[other].append(iso[(g, job)] / tp - 1.0)
        c = {j: statistics.median(v) for j, v in by_partner.items() if v}
        cs = sorted(c.values())
        kappa = cs[int(0.9 * (len(cs) - 1))]
        resid = []
        for j, v in by_partner.items():
            d = min(1.0, c[j] / kappa) if kappa > 0 else 1.0
            for s1 in v:
                if s1 > 0 and kappa * d > 0:
                    resid.append(math.log(s1 / (kappa * d)))
        n = sum(len(v) for v in by_partner.values())
        out[gpu] = (kappa, statistics.pstdev(resid), n, len(c), statistics.median(cs))
    return out


def bencyq(root):
    d = os.path.join(root, "bencyq_hase")
    res = {}
    for name in sorted(os.listdir(d)):
        if not name.endswith(".csv"):
            continue
        rows = list(csv.DictReader(open(os.path.join(d, name))))
        levels = sorted({float(r["DCGM_sm_active"]) for r in rows})
        if len(levels) < 2:
            continue
        lo = levels[0]
        base = {r["Kernel_ID"]: float(r["Latency_ms"]) for r in rows
                if float(r["DCGM_sm_active"]) == lo}
        ratios = []
        for r in rows:
            sa = float(r["DCGM_sm_active"])
            if sa - lo < 0.1 or r["Kernel_ID"] not in base:
                continue
            ratios.append((float(r["Latency_ms"]) / base[r["Kernel_ID"]] - 1.0) / (sa - lo))
        res[name] = (rows[0]["GPU"], statistics.median(ratios), len(ratios), lo)
    return res


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/data/interference"
    g = gavel(root)
    print("# kappa calibration (tools/calibrate_interference.py)")
    print("# gavel: gpu, kappa (p90 of per-partner median slowdown-1), pair-noise sigma,"
          " pairs, partners, median c_j")
    for gpu, (k, s, n, m, med) in g.items():
        print(f"gavel {gpu} kappa={k:.3f} pair_sigma={s:.3f} pairs={n} partners={m} "
              f"median_c={med:.3f}")
    ks = [v[0] for v in g.values()]
    ss = [v[1] for v in g.values()]
    print(f"gavel mean kappa={statistics.mean(ks):.3f} mean pair_sigma={statistics.mean(ss):.3f}")
    print("# bencyq_hase cross-check: file, GPU, median (s-1)/delta_sm_active, rows, lowest"
          " sm_active")
    for name, (gpu, k, n, lo) in bencyq(root).items():
        print(f"bencyq {name} {gpu!r} kappa_bg={k:.3f} rows={n} lowest_sm_active={lo:.3f}")


if __name__ == "__main__":
    main()
