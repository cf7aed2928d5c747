#!/usr/bin/env python3
"""Time to quality over several seeds, from `megaview mse-curve --from-scratch` runs.

One seed's records are one realization: on caustic a patch that has drawn one bright caustic path at a low
spp holds much of the image's squared error, so a single run's MSE jumps up and down by 2x from record to
record, and its first record below a goal may be a lucky one. This script averages the realizations.

Each argument is one seed's CSV files (mse-curve's P.csv; several for one seed joined by commas, e.g. a
`uniform` run and a run of the other series at a finer interval). For each seed s the goal g_s is the
baseline series' MSE at --goal-spp (log-linear between its two records around it, as mse-curve's own
time-to-quality table takes it) and T_s its busy time there. For every other series, record k of every seed
is its k-th record (with --from-scratch: the render of about k intervals from an empty film); the script
prints, per series, the mean and the median over the seeds of MSE / g_s at each record, at the seeds' mean
busy time, and:
  - first: where the mean ratio first falls to 1;
  - stays: where it falls to 1 for the last time (it stays at most 1 to the series' last record);
each linear in busy time between the two records around the crossing (as mse-curve's own table takes it),
as busy ms and as x the baseline's mean T_s. A series whose mean ratio never stays below 1 prints "-".
With --bootstrap N the script also resamples the seeds with replacement N times (a fixed random seed) and prints
the 5th and 95th percentiles of "stays" (x time, each resample against its own baseline mean): how much the
result owes to the particular seeds.

Example (docs/perf.md, the section on caustic measured from scratch):
  for S in 0 1 2 3 4 5 6 7; do
    megaview mse-curve --scene caustic --compare uniform --duration-ms 30 --interval-ms 0.5 --from-scratch \\
        --goal-spp 128 --seed $S --out-prefix u$S
    megaview mse-curve --scene caustic --compare 'megakernel[patch-lanes=8;stay-leading=1;band-repeat=64]:neyman' \\
        --duration-ms 8 --interval-ms 0.25 --from-scratch --seed $S --out-prefix m$S
  done
  python3 tools/ttq_seeds.py u0.csv,m0.csv u1.csv,m1.csv ... u7.csv,m7.csv
"""
import argparse
import csv
import math
import random
import statistics


def read_series(paths):
    """series label -> [(busy_ms, spp_mean, mse)] over the CSV files of one seed, in file order."""
    out = {}
    for path in paths:
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                out.setdefault(r["series"], []).append((float(r["busy_ms"]), float(r["spp_mean"]), float(r["mse"])))
    return out


def goal_of(records, goal_spp):
    """(MSE, busy ms) of a series at goal_spp, log-linear in MSE between the records around it; None if never."""
    for i, (ms, spp, mse) in enumerate(records):
        if spp < goal_spp:
            continue
        if i == 0 or spp <= records[i - 1][1]:
            return mse, ms
        p_ms, p_spp, p_mse = records[i - 1]
        f = (goal_spp - p_spp) / (spp - p_spp)
        return math.exp(math.log(p_mse) + f * (math.log(mse) - math.log(p_mse))), p_ms + f * (ms - p_ms)
    return None


def crossings(runs, goals, name):
    """The mean over `runs` of MSE / goal at each record of series `name`: (times, means, medians, first, stays),
    first and stays the busy ms of the first and the last fall of the mean ratio to 1 (None if none)."""
    k_max = min(len(r[name]) for r in runs)
    t, mean, median = [], [], []
    for k in range(k_max):
        ratios = [r[name][k][2] / g for r, g in zip(runs, goals)]
        t.append(statistics.mean(r[name][k][0] for r in runs))
        mean.append(statistics.mean(ratios))
        median.append(statistics.median(ratios))
    first = next((k for k in range(k_max) if mean[k] <= 1.0), None)
    stays = None
    for k in range(k_max - 1, -1, -1):
        if mean[k] > 1.0:
            break
        stays = k

    def at(k):
        if k is None:
            return None
        if k > 0 and mean[k - 1] > 1.0:  # linear between the record above the goal and this one
            return t[k - 1] + (mean[k - 1] - 1.0) / (mean[k - 1] - mean[k]) * (t[k] - t[k - 1])
        return t[k]

    return t, mean, median, at(first), at(stays)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("seeds", nargs="+", help="one seed's CSV files, comma separated")
    ap.add_argument("--baseline", default="uniform:none", help="the series whose MSE at --goal-spp is the goal")
    ap.add_argument("--goal-spp", type=float, default=128.0)
    ap.add_argument("--show", type=int, default=0, help="also print the first N records of each series")
    ap.add_argument("--bootstrap", type=int, default=0,
                    help="also print the 5th and 95th percentiles of 'stays' (x time) over N resamples of the seeds")
    a = ap.parse_args()
    if a.bootstrap < 0:
        raise SystemExit(f"--bootstrap: must be a count of resamples >= 0, got {a.bootstrap}")

    runs = [read_series(s.split(",")) for s in a.seeds]
    goals, times = [], []
    for seed, run in zip(a.seeds, runs):
        if a.baseline not in run:
            raise SystemExit(f"{seed}: no series {a.baseline!r} (have {', '.join(run)})")
        g = goal_of(run[a.baseline], a.goal_spp)
        if g is None:
            raise SystemExit(f"{seed}: {a.baseline} never reaches {a.goal_spp:g} spp; give it a longer --duration-ms")
        goals.append(g[0])
        times.append(g[1])
    base_ms = statistics.mean(times)
    print(f"{len(runs)} seeds; goal: {a.baseline} at {a.goal_spp:g} spp, MSE {min(goals):.4e} to {max(goals):.4e}, "
          f"busy {base_ms:.2f} ms on average")
    boot = "  stays x 5-95 %" if a.bootstrap else ""
    print(f"{'series':<64} {'first ms':>9} {'x time':>7} {'stays ms':>9} {'x time':>7}{boot}")
    rng = random.Random(0)
    for name in runs[0]:
        if name == a.baseline or any(name not in r for r in runs):
            continue
        t, mean, median, first, stays = crossings(runs, goals, name)

        def cell(ms):
            return f"{'-':>9} {'-':>7}" if ms is None else f"{ms:>9.2f} {ms / base_ms:>7.3f}"

        interval = ""
        if a.bootstrap:
            # Resample the seeds with replacement; a resample whose mean never stays below 1 counts as infinite.
            xs = []
            for _ in range(a.bootstrap):
                pick = [rng.randrange(len(runs)) for _ in runs]
                ms = crossings([runs[i] for i in pick], [goals[i] for i in pick], name)[4]
                xs.append(math.inf if ms is None else ms / statistics.mean(times[i] for i in pick))
            xs.sort()
            lo, hi = xs[int(0.05 * (len(xs) - 1))], xs[int(math.ceil(0.95 * (len(xs) - 1)))]
            interval = f"  {lo:.3f}-{hi:.3f}" if math.isfinite(hi) else f"  {lo:.3f}-never"
        print(f"{name:<64} {cell(first)} {cell(stays)}{interval}")
        if a.show:
            print("   ms:mean/median  " + " ".join(f"{t[k]:.2f}:{mean[k]:.2f}/{median[k]:.2f}"
                                              for k in range(min(a.show, len(t)))))


if __name__ == "__main__":
    main()
