#!/usr/bin/env python3
"""Recomputes Kerbl's order score S(n) (Kerbl 2012, section 6.2) of every run in a sched-bench order log.

`megaview sched-bench --order-log F.csv` writes one row per executed task: the run, its settings and the
score megaview printed for it, then the dequeue index, the ticket, the task and its priority. This script
recomputes each run's score from the priorities alone, independently of megaview's code:

    S(n) = (1 / (n - 1)) * sum_{i=1}^{n-1} (number of j < i with L[j] >= L[i]) / i

(L the priorities in execution order; n < 2 gives 1), and compares it with the logged score. It prints
one line per run and exits with status 1 if any run differs by more than --tolerance (default 1e-9).

Usage: tools/order_score.py F.csv [--tolerance 1e-9]
"""
import argparse
import bisect
import csv
import sys


def order_score(priorities):
    """S(n) of `priorities` in execution order, O(n log n) with a Fenwick tree over the ranks."""
    n = len(priorities)
    if n < 2:
        return 1.0
    values = sorted(set(priorities))
    tree = [0] * (len(values) + 1)

    def add(pos):
        while pos <= len(values):
            tree[pos] += 1
            pos += pos & -pos

    def count_up_to(pos):
        total = 0
        while pos > 0:
            total += tree[pos]
            pos -= pos & -pos
        return total

    total = 0.0
    for i, p in enumerate(priorities):
        rank = bisect.bisect_left(values, p) + 1  # 1-based rank of p
        if i > 0:
            at_least = i - count_up_to(rank - 1)  # earlier entries >= p
            total += at_least / i
        add(rank)
    return total / (n - 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("log", help="order log written by megaview sched-bench --order-log")
    parser.add_argument("--tolerance", type=float, default=1e-9, help="largest accepted |difference|")
    args = parser.parse_args()
    runs = {}
    try:
        with open(args.log, newline="") as f:
            reader = csv.DictReader(f)
            need = {"run", "score", "index", "priority"}
            if reader.fieldnames is None or not need.issubset(reader.fieldnames):
                sys.exit(f"{args.log}: not an order log (needs the columns {', '.join(sorted(need))})")
            for line, row in enumerate(reader, start=2):
                try:
                    run = int(row["run"])
                    entry = (int(row["index"]), float(row["priority"]))
                    score = float(row["score"])
                except (TypeError, ValueError):
                    sys.exit(f"{args.log}:{line}: run, index, score and priority must be numbers")
                runs.setdefault(run, (score, []))[1].append(entry)
    except OSError as e:
        sys.exit(f"{args.log}: {e.strerror}")
    if not runs:
        sys.exit(f"{args.log}: no rows")
    worst = 0.0
    for run in sorted(runs):
        logged, entries = runs[run]
        entries.sort()
        recomputed = order_score([p for _, p in entries])
        diff = abs(recomputed - logged)
        worst = max(worst, diff)
        print(f"run {run}: n {len(entries)}, logged {logged:.12f}, recomputed {recomputed:.12f}, |diff| {diff:.3g}")
    ok = worst <= args.tolerance
    print(f"{len(runs)} runs, largest |diff| {worst:.3g}: {'agree' if ok else 'DISAGREE'} within {args.tolerance:g}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
