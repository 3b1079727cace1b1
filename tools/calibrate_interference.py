#!/usr/bin/env python3
"""Calibrates kappa of hase's co-location contention model on ../shared/data/interference.

    python3 tools/calibrate_interference.py ../shared/data/interference \
        > data/interference_calibration.txt

Model (src/hase/sched/contention_model.h): a task of demand u (fraction of its time the GPU is
busy with its kernels alone) beside co-runners of summed demand U runs
    s = 1 + kappa * U * min(1, u / (1 - U))      (U < 1),     s = 1 + kappa * U   (U >= 1)
times slower than alone.

Gavel (gavel/simulation_throughputs_tidy.csv; training jobs, pairs sharing one K80/P100/V100,
scale factor 1, consolidated): for every measured pair (zeros = not measured, skipped),
s_ij = isolated_i / colocated_i. Per GPU, kappa and every job's demand u_j in [0.02, 1] are
fitted jointly to this formula (coordinate search on the mean squared log error of s). Printed
beside it, on the same pairs: the old additive model s = 1 + kappa * c_j (c_j = median slowdown
beside partner j, fitted per partner), and the baselines s = 1 and s = 2 (each pair shares
evenly). 5-fold cross-validation over pairs gives the held-out error of the demand model. The
spread of log(s_meas / s_fit) is the pair-noise sigma the analytic truth model uses.

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


def slowdown(kappa, u, others):
    if others <= 0:
        return 1.0
    share = 1.0 if others >= 1.0 else min(1.0, u / (1.0 - others))
    return 1.0 + kappa * others * share


def load_pairs(root):
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
    out = defaultdict(list)  # gpu -> [(victim, partner, measured slowdown)]
    for g, job, other, tp in pairs:
        if tp > 0 and iso.get((g, job), 0) > 0:
            out[g].append((job, other, iso[(g, job)] / tp))
    return out


def msle(kappa, u, pairs):
    return statistics.fmean(
        (math.log(slowdown(kappa, u[v], u[p])) - math.log(s)) ** 2 for v, p, s in pairs)


def fit(pairs):
    jobs = sorted({v for v, _, _ in pairs} | {p for _, p, _ in pairs})
    u = {j: 0.5 for j in jobs}
    kappa = 1.0
    grid = [0.02 * 1.15 ** i for i in range(29)] + [1.0]  # 0.02 .. 1
    kgrid = [0.5 + 0.05 * i for i in range(51)]             # 0.5 .. 3
    for _ in range(6):
        for j in jobs:
            u[j] = min(grid, key=lambda x: msle(kappa, {**u, j: x}, pairs))
        kappa = min(kgrid, key=lambda k: msle(k, u, pairs))
    return kappa, u


def additive(pairs):
    by_partner = defaultdict(list)
    for v, p, s in pairs:
        by_partner[p].append(s - 1.0)
    c = {j: statistics.median(x) for j, x in by_partner.items()}
    return statistics.fmean((math.log(max(1e-3, 1.0 + c[p])) - math.log(s)) ** 2
                            for v, p, s in pairs)


def gavel(root):
    out = {}
    for gpu, pairs in sorted(load_pairs(root).items()):
        kappa, u = fit(pairs)
        fit_msle = msle(kappa, u, pairs)
        resid = [math.log(s / slowdown(kappa, u[v], u[p])) for v, p, s in pairs]
        # 5-fold cross-validation over pairs (deterministic folds by index).
        cv = []
        for k in range(5):
            train = [x for i, x in enumerate(pairs) if i % 5 != k]
            test = [x for i, x in enumerate(pairs) if i % 5 == k]
            kk, uu = fit(train)
            for v, p, s in test:
                if v in uu and p in uu:
                    cv.append((math.log(slowdown(kk, uu[v], uu[p])) - math.log(s)) ** 2)
        out[gpu] = dict(kappa=kappa, sigma=statistics.pstdev(resid), pairs=len(pairs),
                        jobs=len(u), rmsle=math.sqrt(fit_msle),
                        cv_rmsle=math.sqrt(statistics.fmean(cv)),
                        additive_rmsle=math.sqrt(additive(pairs)),
                        one_rmsle=math.sqrt(statistics.fmean(math.log(s) ** 2 for _, _, s in pairs)),
                        two_rmsle=math.sqrt(statistics.fmean((math.log(2) - math.log(s)) ** 2
                                                             for _, _, s in pairs)),
                        median_u=statistics.median(u.values()))
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
    print("# gavel: gpu, kappa and per-job demands fitted jointly; RMS log error of the slowdown:"
          " fit (in-sample), cv (5-fold over pairs), additive (old 1 + c_j per partner,"
          " in-sample), s=1, s=2; pair-noise sigma; median fitted demand")
    for gpu, v in g.items():
        print(f"gavel {gpu} kappa={v['kappa']:.3f} rmsle_fit={v['rmsle']:.3f} "
              f"rmsle_cv={v['cv_rmsle']:.3f} rmsle_additive={v['additive_rmsle']:.3f} "
              f"rmsle_s1={v['one_rmsle']:.3f} rmsle_s2={v['two_rmsle']:.3f} "
              f"pair_sigma={v['sigma']:.3f} pairs={v['pairs']} jobs={v['jobs']} "
              f"median_u={v['median_u']:.3f}")
    ks = [v["kappa"] for v in g.values()]
    ss = [v["sigma"] for v in g.values()]
    print(f"gavel mean kappa={statistics.mean(ks):.3f} mean pair_sigma={statistics.mean(ss):.3f}")
    print(f"gavel median kappa={statistics.median(ks):.3f} "
          f"median pair_sigma={statistics.median(ss):.3f} (hase's defaults: robust to the V100 outlier)")
    print("# what the fitted model predicts for light inference tasks (kappa = the median above):")
    k = statistics.median(ks)
    for u in (0.1, 0.2, 0.3, 0.5, 1.0):
        print(f"two tasks of demand {u:.1f}: s={slowdown(k, u, u):.3f}; "
              f"three: s={slowdown(k, u, 2 * u):.3f}")
    print("# bencyq_hase cross-check: file, GPU, median (s-1)/delta_sm_active, rows, lowest"
          " sm_active")
    for name, (gpu, kb, n, lo) in bencyq(root).items():
        print(f"bencyq {name} {gpu!r} kappa_bg={kb:.3f} rows={n} lowest_sm_active={lo:.3f}")


if __name__ == "__main__":
    main()
