#!/usr/bin/env python3
"""Time-to-quality bounds of a scene under the megakernel, from two measurement files.

Reads
  - PATCHES: one series' final film per patch, as `mse-curve` writes it with MEGAVIEW_MSE_PATCHES=PREFIX
    (PREFIX-<series index>.csv: task, spp, variance V_p, pixels m_p); use uniform's (its V_p estimates have
    the most samples);
  - TASKS and SLICES: a megakernel series' cycles, as the `buckets` megakernel writes them with
    MEGAVIEW_MK_PROFILE=PREFIX (PREFIX-<instance>-tasks.csv: per task, its executions and their summed cycles;
    PREFIX-<instance>-slices.csv: per slice, the worker warps and the SM clock); use `megakernel:none`'s
    (every patch executed alike, the costs of sched/megakernel/megakernel_workers.cuh's WorkerProfile);

and prints, for reaching the error of uniform sampling at GOAL spp (sum_p V_p / GOAL):
  - the cost-blind and the cost-weighted Neyman bounds (render/pathtracer/allocation_bound.h, CostBound):
    samples and time relative to uniform's;
  - the *latency* bound T*(D): the least busy time T in which any allocation reaches that error when the
    worker warps execute at most D executions of one patch at once (the megakernel runs D = 1: a patch is
    never executed twice at once), each execution taking its measured cycles for spp_per_exec samples per
    pixel: n_p <= min(target, D * spp_per_exec * T / t_p), sum_p (n_p / spp_per_exec) t_p <= warps * T,
    n_p >= spp_per_exec (the first pass). For each T the best allocation under these caps is the
    cost-weighted Neyman one, n_p = clamp(lambda * sqrt(V_p / t_p)) (water filling on lambda); T* is found by
    bisection. Relative to uniform's time at the same model (sum_p (GOAL / spp_per_exec) t_p / warps).

Example (docs/perf.md, the section on caustic's rate gap):
  python3 tools/ttq_bounds.py patch-0.csv mk-1-tasks.csv mk-1-slices.csv --goal 128 --concurrency 1 2 4
"""
import argparse
import csv
import math


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("patches")
    ap.add_argument("tasks")
    ap.add_argument("slices")
    ap.add_argument("--goal", type=float, default=128.0, help="uniform's spp whose error is the goal")
    ap.add_argument("--target", type=float, default=512.0, help="the most spp a patch can get")
    ap.add_argument("--spp-per-exec", type=float, default=2.0, help="samples per pixel of one execution")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4])
    a = ap.parse_args()

    patches, tasks, slices = read(a.patches), read(a.tasks), read(a.slices)
    if len(patches) != len(tasks):
        raise SystemExit(f"{a.patches} has {len(patches)} patches, {a.tasks} {len(tasks)} tasks")
    clock = float(slices[0]["clock_khz"]) * 1e3  # cycles per second
    warps = max(int(r["warps"]) for r in slices)
    V, m, t = [], [], []
    execs_all = sum(int(r["execs"]) for r in tasks)
    mean_t = sum(int(r["cycles"]) for r in tasks) / max(1, execs_all)
    for p, r in zip(patches, tasks):
        if int(p["pixels"]) <= 0:
            continue
        V.append(float(p["variance"]))
        m.append(float(p["pixels"]))
        e = int(r["execs"])
        t.append(int(r["cycles"]) / e if e else mean_t)  # cycles per execution
    g, k = a.goal, a.spp_per_exec
    goal_err = sum(V) / g
    sv, sm, st = sum(V), sum(m), sum(t)
    blind_samples = sum(math.sqrt(v * mm) for v, mm in zip(V, m)) ** 2 / (sv * sm)
    blind_time = (sum(math.sqrt(v * mm) for v, mm in zip(V, m)) *
                  sum(math.sqrt(v / mm) * c for v, mm, c in zip(V, m, t)) / (sv * st))
    weighted_time = sum(math.sqrt(v * c) for v, c in zip(V, t)) ** 2 / (sv * st)
    print(f"{len(V)} patches, {warps} worker warps at {clock / 1e9:.3f} GHz; mean {mean_t:.0f} cycles per execution")
    print(f"Neyman bound (no latency limit): cost-blind {blind_samples:.4f}x samples, {blind_time:.4f}x time; "
          f"cost-weighted {weighted_time:.4f}x time")
    uniform_ms = sum(g / k * c for c in t) / warps / clock * 1e3
    w = [math.sqrt(v / c) for v, c in zip(V, t)]

    def alloc(T, D):  # T in seconds; the best allocation under the caps, or None if the first pass alone overflows
        budget = warps * T * clock
        cap = [min(a.target, D * k * T * clock / c) if D else a.target for c in t]
        if any(cp < k for cp in cap):
            return None
        work = lambda lam: sum(max(k, min(cp, lam * wi)) / k * c for cp, wi, c in zip(cap, w, t))
        if work(0.0) > budget:
            return None
        lo, hi = 0.0, 1.0
        while work(hi) < budget and hi < 1e30 and any(hi * wi < cp for wi, cp in zip(w, cap)):
            hi *= 2
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if work(mid) <= budget else (lo, mid)
        return [max(k, min(cp, lo * wi)) for cp, wi in zip(cap, w)]

    for D in [0] + a.concurrency:
        lo, hi = 1e-5, 10.0
        for _ in range(60):
            mid = (lo + hi) / 2
            n = alloc(mid, D)
            if n is None or sum(v / x for v, x in zip(V, n)) > goal_err:
                lo = mid
            else:
                hi = mid
        n = alloc(hi, D)
        spp = sum(x * mm for x, mm in zip(n, m)) / sm
        label = "no latency limit" if D == 0 else f"D = {D} executions of a patch at once"
        capped = 0 if D == 0 else sum(1 for x, c in zip(n, t) if x >= min(a.target, D * k * hi * clock / c) * (1 - 1e-9))
        print(f"T* ({label}): {hi * 1e3:.2f} ms = {hi * 1e3 / uniform_ms:.3f}x uniform's {uniform_ms:.2f} ms "
              f"(same model); {spp:.2f} spp = {spp / g:.4f}x samples; {capped} patches at their latency cap")


if __name__ == "__main__":
    main()
