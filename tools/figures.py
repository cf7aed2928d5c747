#!/usr/bin/env python3
"""Draw the figures of megaview's experiments from their CSV files, as PNG and PDF, with matplotlib.

    tools/figures.py [--out STEM] [--no-overwrite] [--quiet] PATH...

PATH is a CSV written by a megaview subcommand, or a folder: every CSV in it with a figure is drawn
(the others, such as order logs and the path tracer's `bench --csv`, are skipped with a note). What a
CSV holds (its kind) comes from the metadata JSON beside it (<stem>.json, "kind"), else from its
columns. The figures go beside the CSV under its stem, its path without ".csv" (other names keep their
whole name: r.txt draws r.txt.png, as megaview checks and writes r.txt.json), or under --out STEM:

  mse-curve     STEM-time.{png,pdf}, STEM-samples.{png,pdf}  Kerbl 2012 Fig 9: MSE over busy time / spp
  sort-bench    STEM.{png,pdf}  Kerbl 2012 Fig 3: µs per one-block sort over n, best block size per method
  sched-bench   STEM.{png,pdf}  Kerbl 2012 Figs 4-5: S(n) measured on the GPU, one panel per task duration
  sched-model   STEM.{png,pdf}  Kerbl 2012 Figs 4-5: S(n) predicted by sched/megakernel/queue_model.h
  strand-sweep  STEM.{png,pdf}  Lehmann 2023 Appendix A: best time per block count n, per strategy
  strand-bench  STEM.{png,pdf}  Lehmann 2023 Appendix A: time per strategy (median, min-max bars)
  stencil-bench STEM.{png,pdf}  Valen 2023 Figs 5.1-5.16: time per iteration by halo depth, and the
                per-phase times stacked, per grid size and partition count
  gibbs-blocks  STEM-padding, STEM-warps, STEM-widths .{png,pdf}  poisson-ising-gibbs-cupy Figs 16-18: the
                padding effect (Bland-Altman), the fastest shapes by warps per block, by block width

Existing figures are replaced unless --no-overwrite (then the script refuses, exit status 1, and writes
nothing). Exit status 1 also for an unreadable or unknown CSV named on the command line.
"""

import argparse
import csv
import json
import math
import os
import sys
import tempfile
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import LogFormatter, PercentFormatter, ScalarFormatter  # noqa: E402

STYLE = {
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 7.5,
    "legend.frameon": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.5,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.4,
    "lines.markersize": 4,
    "savefig.dpi": 150,
    "savefig.bbox": "tight",
    "pdf.fonttype": 42,  # TrueType in the PDF: text stays text
    "ps.fonttype": 42,
}

# One colour per strategy (and sort method), the same in every figure.
COLOURS = {
    # the path tracer's strategies (also run on strands)
    "sequential": "#4d4d4d",
    "cpu-parallel": "#8c564b",
    "sequential-priority": "#c49c94",
    "uniform": "#1f77b4",
    "sorted-waves": "#2ca02c",
    "megakernel": "#d62728",
    "megakernel[queue=buckets]": "#d62728",
    "megakernel[queue=quanta]": "#ff7f0e",
    "megakernel[queue=kerbl]": "#9467bd",
    # Lehmann 2023's CUDA strategies
    "cuda": "#17becf",
    "cuda-permute": "#9edae5",
    "cuda-batch": "#bcbd22",
    "cuda-batch-permute": "#dbdb8d",
    "cuda-global-queue": "#e377c2",
    "cuda-global-queue-unified-memory": "#f7b6d2",
    "cuda-unified-memory": "#393b79",
    "cuda-batch-unified-memory": "#637939",
    # sort-bench's methods
    "bitonic-full": "#1f77b4",
    "bitonic-one-sorted": "#2ca02c",
    "bitonic-merge": "#9467bd",
    "cub-block-radix": "#ff7f0e",
    "cub-device-radix": "#d62728",
}
FALLBACK = ["#17becf", "#bcbd22", "#e377c2", "#7f7f7f", "#8c564b", "#393b79", "#637939", "#843c39"]
# Line style per priority function (mse-curve), marker per priority too.
PRIORITY_STYLE = {
    "none": ("-", None),
    "variance": ("--", "o"),
    "convergence": ("-.", "s"),
    "intensity": (":", "^"),
    "relative-error": ((0, (5, 1, 1, 1)), "D"),
    "adaptive": ((0, (1, 1)), "v"),
}
# Controller blocks P in sched-bench / sched-model.
P_COLOURS = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]
BLOCK_MARKERS = {32: "v", 64: "^", 128: "o", 256: "s", 512: "D", 1024: "P"}

UNIT_TEXT = {"us": "µs", "ms": "ms"}


class FigureError(Exception):
    pass


def colour(name, _assigned={}):
    if name in COLOURS:
        return COLOURS[name]
    if name not in _assigned:
        _assigned[name] = FALLBACK[len(_assigned) % len(FALLBACK)]
    return _assigned[name]


def num(text):
    """The cell as a float; empty or unparsable cells are NaN."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return math.nan


def read_csv(path):
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames:
            raise FigureError(f"{path}: empty, no CSV header")
        return list(reader.fieldnames), list(reader)


def csv_stem(csv_path):
    """The CSV's path without ".csv", the rule of megaview's figure_stem (app/cli/figures.h)."""
    return csv_path[:-4] if csv_path.endswith(".csv") and len(csv_path) > 4 else csv_path


def read_meta(csv_path):
    meta_path = csv_stem(csv_path) + ".json"
    if not os.path.isfile(meta_path):
        return {}
    try:
        with open(meta_path) as f:
            meta = json.load(f)
        return meta if isinstance(meta, dict) else {}
    except (OSError, ValueError):
        return {}


# The kind of a CSV without metadata: the first entry whose columns the CSV all has, in this order.
KIND_BY_COLUMNS = [
    ({"series", "busy_ms", "spp_mean", "mse"}, "mse-curve"),
    ({"method", "n", "threads", "median_us"}, "sort-bench"),
    ({"score_controller", "score_fifo", "gpu"}, "sched-bench"),
    ({"score_controller", "score_fifo", "workers", "order"}, "sched-model"),
    ({"strategy", "config", "s_full_mean", "doc_h100_s"}, "gibbs-blocks"),
    ({"workload", "strategy", "n", "median_ms", "speedup_vs_sequential"}, "strand-sweep"),
    ({"depth", "exchange", "overlap", "ms_per_iteration", "pack_ms"}, "stencil-bench"),
    ({"workload", "strategy", "median_ms", "steps_cv"}, "strand-bench"),
    ({"strategy", "priority", "repeat", "busy_ms"}, "bench"),
    ({"ticket", "task", "score"}, "order-log"),
]


def kind_of(columns, meta):
    if meta.get("kind"):
        return meta["kind"]
    c = set(columns)
    return next((kind for need, kind in KIND_BY_COLUMNS if need <= c), None)


def subtitle(meta, csv_path, extra=""):
    """Second title line: the experiment's context and GPU from the metadata, else the CSV's name."""
    parts = [p for p in (meta.get("context"), meta.get("gpu"), extra) if p]
    if not parts:
        parts = [os.path.basename(csv_path)]
    return "; ".join(parts)


def title(ax_or_fig, paper, what, sub):
    text = f"{paper}: {what}" if paper else what
    if isinstance(ax_or_fig, plt.Figure):
        ax_or_fig.suptitle(f"{text}\n{sub}", fontsize=10)
    else:
        ax_or_fig.set_title(f"{text}\n{sub}")


def log_labels(axis):
    """Plain numbers on a log axis, on the minor ticks too when the data spans less than two decades."""
    axis.set_major_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def log2_axis(ax, values):
    ax.set_xscale("log", base=2)
    ticks = sorted(set(v for v in values if v > 0))
    if ticks and len(ticks) <= 12:
        ax.set_xticks(ticks)
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(plt.NullLocator())


# ------------------------------------------------------------------------------------------ kinds


def mse_curve(columns, rows, meta, csv_path, stem):
    series = OrderedDict()
    for r in rows:
        series.setdefault(r["series"], []).append(r)
    figures = []
    for part, xcol, xlabel, xlog in (
        ("time", "busy_ms", "busy time (ms)", False),
        ("samples", "spp_mean", "samples per pixel (mean)", True),
    ):
        fig, ax = plt.subplots(figsize=(6.4 if len(series) <= 4 else 8.4, 4.2))
        for label, rs in series.items():
            strategy = label.rsplit(":", 1)[0] if ":" in label else rs[0]["strategy"]
            priority = rs[0].get("priority", "none")
            ls, marker = PRIORITY_STYLE.get(priority, ("-", None))
            pts = [(num(r[xcol]), num(r["mse"])) for r in rs]
            pts = [(x, y) for x, y in pts if x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y)]
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, linestyle=ls, marker=marker, markevery=max(1, len(xs) // 8), color=colour(strategy),
                    label=label)
        ax.set_yscale("log")
        log_labels(ax.yaxis)
        if xlog:
            ax.set_xscale("log")
            log_labels(ax.xaxis)
        ax.set_xlabel(xlabel)
        ax.set_ylabel("MSE against the reference (log scale)")
        if len(series) <= 4:
            ax.legend(loc="upper right")
        else:  # beside the axes, clear of the curves
            ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))
        what = "MSE over busy time" if part == "time" else "MSE over samples spent"
        title(ax, meta.get("redoes") or "Kerbl 2012, Fig 9", what, subtitle(meta, csv_path))
        figures.append((f"{stem}-{part}", fig))
    return figures


def sort_bench(columns, rows, meta, csv_path, stem):
    # Best block size per method and n (the smallest median), with that configuration's min-max spread.
    best = OrderedDict()
    for r in rows:
        key = (r["method"], int(num(r["n"])))
        if key not in best or num(r["median_us"]) < num(best[key]["median_us"]):
            best[key] = r
    methods = list(OrderedDict.fromkeys(m for m, _ in best))
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ns = []
    for m in methods:
        pts = sorted((n, r) for (mm, n), r in best.items() if mm == m)
        xs = [n for n, _ in pts]
        ys = [num(r["median_us"]) for _, r in pts]
        lo = [y - num(r["min_us"]) for y, (_, r) in zip(ys, pts)]
        hi = [num(r["max_us"]) - y for y, (_, r) in zip(ys, pts)]
        ns += xs
        label = m if m == "cub-device-radix" else f"{m} (best block size)"
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=2, color=colour(m), label=label)
    log2_axis(ax, ns)
    ax.set_yscale("log")
    log_labels(ax.yaxis)
    ax.set_xlabel("keys n (float keys with uint32 values)")
    ax.set_ylabel("time per sort (µs, median; bars: min-max)")
    ax.legend(loc="upper left")
    title(ax, meta.get("redoes") or "Kerbl 2012, Fig 3", "one-block sort, best block size per method",
          subtitle(meta, csv_path))
    return [(stem, fig)]


def _task_panels(rows):
    durations = sorted(set(num(r["task_us"]) for r in rows))
    fig, axes = plt.subplots(1, len(durations), figsize=(4.6 * len(durations) + 0.6, 4.0), sharey=True, squeeze=False)
    return durations, fig, axes[0]


def _paper_fig(task_us):
    return {100.0: "Fig 4", 1000.0: "Fig 5"}.get(task_us)


def _s_axis(ax, ns, first):
    ax.set_xscale("log")
    ticks = sorted(set(ns))
    if len(ticks) <= 10:
        ax.set_xticks(ticks)
        ax.set_xticklabels([f"{int(t / 1000)}k" if t >= 1000 else f"{int(t)}" for t in ticks])
        ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_ylim(-0.03, 1.03)
    ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_xlabel("tasks n (log scale)")
    if first:
        ax.set_ylabel("sorting accuracy S(n)")


def _duration_text(task_us):
    return f"{task_us / 1000:g} ms tasks" if task_us >= 1000 else f"{task_us:g} µs tasks"


def sched_bench(columns, rows, meta, csv_path, stem):
    durations, fig, axes = _task_panels(rows)
    blocks = sorted(set(int(num(r["block"])) for r in rows))
    ps = sorted(set(int(num(r["controllers"])) for r in rows))
    queue = rows[0].get("queue") or "kerbl"
    handles = OrderedDict()
    for ax, d in zip(axes, durations):
        rd = [r for r in rows if num(r["task_us"]) == d]
        ns = [num(r["n"]) for r in rd]
        for b in blocks:
            marker = BLOCK_MARKERS.get(b, "o")
            for i, p in enumerate(ps):
                pts = sorted((num(r["n"]), num(r["score_controller"])) for r in rd
                             if int(num(r["block"])) == b and int(num(r["controllers"])) == p)
                if pts:
                    label = f"controller, P = {p}" + (f", block {b}" if len(blocks) > 1 else "")
                    (h,) = ax.plot(*zip(*pts), marker=marker, color=P_COLOURS[i % len(P_COLOURS)], label=label)
                    handles[label] = h
            fifo = OrderedDict()
            model = OrderedDict()
            for r in rd:
                if int(num(r["block"])) != b:
                    continue
                fifo[num(r["n"])] = num(r["score_fifo"])
                if math.isfinite(num(r.get("score_model"))):
                    model[num(r["n"])] = num(r["score_model"])
            if fifo:
                label = "FIFO" + (f", block {b}" if len(blocks) > 1 else "")
                (h,) = ax.plot(sorted(fifo), [fifo[n] for n in sorted(fifo)], marker=marker, color="#7f7f7f",
                               linestyle="--", label=label)
                handles[label] = h
            if model:
                label = "CPU model (P = 1)" + (f", block {b}" if len(blocks) > 1 else "")
                (h,) = ax.plot(sorted(model), [model[n] for n in sorted(model)], marker=marker, color="#000000",
                               linestyle=":", markerfacecolor="none", label=label)
                handles[label] = h
        if "held_bound" in columns:
            bound = {}
            for r in rd:
                if math.isfinite(num(r["held_bound"])):
                    bound[num(r["n"])] = num(r["held_bound"])
            if bound:
                (h,) = ax.plot(sorted(bound), [bound[n] for n in sorted(bound)], color="#000000", linewidth=0.8,
                               linestyle=(0, (1, 2)), label="bound: held segments unsorted")
                handles["bound: held segments unsorted"] = h
        _s_axis(ax, ns, ax is axes[0])
        fig_no = _paper_fig(d)
        ax.set_title(f"{fig_no + ': ' if fig_no else ''}{_duration_text(d)}")
    gpu = meta.get("gpu") or (rows[0].get("gpu") if rows else "")
    seg = rows[0].get("segment", "?")
    workers = sorted(set(r.get("workers", "") for r in rows))
    sub = meta.get("context") or f"queue {queue}, segments of {seg}, {'/'.join(workers)} worker warps"
    fig.suptitle(f"Kerbl 2012, Figs 4-5: S(n) measured on the GPU megakernel\n{sub}; {gpu}", fontsize=10)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=min(4, len(handles)),
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.08 + 0.035 * ((len(handles) - 1) // 4), 1, 1))
    return [(stem, fig)]


def sched_model(columns, rows, meta, csv_path, stem):
    durations, fig, axes = _task_panels(rows)
    handles = OrderedDict()
    for ax, d in zip(axes, durations):
        rd = sorted((r for r in rows if num(r["task_us"]) == d), key=lambda r: num(r["n"]))
        ns = [num(r["n"]) for r in rd]
        (h,) = ax.plot(ns, [num(r["score_controller"]) for r in rd], marker="o", color=P_COLOURS[0],
                       label="controller (model)")
        handles["controller (model)"] = h
        (h,) = ax.plot(ns, [num(r["score_fifo"]) for r in rd], marker="o", color="#7f7f7f", linestyle="--",
                       label="FIFO (model)")
        handles["FIFO (model)"] = h
        bound = [(n, num(r.get("held_bound"))) for n, r in zip(ns, rd) if math.isfinite(num(r.get("held_bound")))]
        if bound:
            (h,) = ax.plot(*zip(*bound), color="#000000", linewidth=0.8, linestyle=(0, (1, 2)),
                           label="bound: held segments unsorted")
            handles["bound: held segments unsorted"] = h
        _s_axis(ax, ns, ax is axes[0])
        fig_no = _paper_fig(d)
        ax.set_title(f"{fig_no + ': ' if fig_no else ''}{_duration_text(d)}")
    r0 = rows[0]
    sub = meta.get("context") or (
        f"{r0['workers']} workers, segments of {r0['segment']}, sort passes "
        f"{num(r0['sort_uu_us']):g}/{num(r0['sort_us_us']):g}/{num(r0['sort_ss_us']):g} µs, "
        f"time management {'on' if r0.get('time_management') == '1' else 'off'}, {r0.get('order', '')} order")
    fig.suptitle(f"Kerbl 2012, Figs 4-5: S(n) predicted by the CPU model of the queue\n{sub}", fontsize=10)
    fig.legend(list(handles.values()), list(handles.keys()), loc="lower center", ncol=len(handles),
               bbox_to_anchor=(0.5, -0.02))
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return [(stem, fig)]


def _workloads(rows):
    out = OrderedDict()
    for r in rows:
        out.setdefault(r["workload"], []).append(r)
    return out


def strand_sweep(columns, rows, meta, csv_path, stem):
    wl = _workloads(rows)
    fig, axes = plt.subplots(1, len(wl), figsize=(5.4 * len(wl) + 1.0, 4.4), squeeze=False)
    handles = OrderedDict()
    all_n = sorted(set(int(num(r["n"])) for r in rows if num(r["n"]) > 0)) or [64, 1024]
    for ax, (name, rs) in zip(axes[0], wl.items()):
        strategies = list(OrderedDict.fromkeys(r["strategy"] for r in rs))
        for s in strategies:
            srs = [r for r in rs if r["strategy"] == s]
            grid = [r for r in srs if num(r["n"]) > 0]
            if grid:  # best over b and c per block count n
                best = {}
                for r in grid:
                    n = int(num(r["n"]))
                    if n not in best or num(r["median_ms"]) < num(best[n]["median_ms"]):
                        best[n] = r
                xs = sorted(best)
                ys = [num(best[n]["median_ms"]) for n in xs]
                lo = [y - num(best[n]["min_ms"]) for y, n in zip(ys, xs)]
                hi = [num(best[n]["max_ms"]) - y for y, n in zip(ys, xs)]
                h = ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=2, color=colour(s), label=s)
            else:  # no grid (CPU and task strategies): its best run as a flat line over the n axis
                r = min(srs, key=lambda r: num(r["median_ms"]))
                h = ax.hlines(num(r["median_ms"]), all_n[0], all_n[-1], colors=colour(s),
                              linestyles="--" if s != "sequential" else "-", label=s)
            handles.setdefault(s, h)
        log2_axis(ax, all_n)
        ax.set_yscale("log")
        log_labels(ax.yaxis)
        ax.set_xlabel("blocks n (best over threads b and work unit c)")
        ax.set_ylabel("time (ms, median; bars: min-max)")
        w, h_ = rs[0]["width"], rs[0]["height"]
        ax.set_title(f"{name} {w}x{h_}")
    sub = subtitle(meta, csv_path, "CPU and task strategies: flat lines at their best run")
    fig.suptitle(f"{meta.get('redoes') or 'Lehmann 2023, Appendix A'}: best time per block count n\n{sub}",
                 fontsize=10)
    fig.legend(list(handles.values()), list(handles.keys()), loc="center left", bbox_to_anchor=(1.0, 0.5))
    fig.tight_layout()
    return [(stem, fig)]


def strand_bench(columns, rows, meta, csv_path, stem):
    wl = _workloads(rows)
    height = max(len(rs) for rs in wl.values())
    fig, axes = plt.subplots(1, len(wl), figsize=(3.9 * len(wl) + 2.0, 0.3 * height + 1.6), squeeze=False)
    for ax, (name, rs) in zip(axes[0], wl.items()):
        labels = []
        for i, r in enumerate(rs):
            med, lo, hi = num(r["median_ms"]), num(r["min_ms"]), num(r["max_ms"])
            ax.errorbar(med, i, xerr=[[med - lo], [hi - med]], fmt="o", color=colour(r["strategy"]), capsize=2.5,
                        markersize=5)
            extra = []
            if num(r["n"]) > 0:
                extra.append(f"{int(num(r['n']))},{int(num(r['b']))}" +
                             (f",{int(num(r['c']))}" if num(r["c"]) > 0 else ""))
            if num(r.get("task_quantum")) > 0:
                extra.append(f"q {int(num(r['task_quantum']))} {r.get('task_priority', '')}")
            labels.append(r["strategy"] + (f" ({'; '.join(extra)})" if extra else ""))
        ax.set_yticks(range(len(rs)))
        ax.set_yticklabels(labels)
        ax.set_xscale("log")
        log_labels(ax.xaxis)
        ax.set_xlabel("time (ms, median; bars: min-max)")
        ax.set_title(f"{name} {rs[0]['width']}x{rs[0]['height']}")
        ax.set_ylim(len(rs) - 0.5, -0.5)
    clocks = "/".join(OrderedDict.fromkeys(r.get("clock", "") for r in rows if r.get("clock")))
    sub = subtitle(meta, csv_path, f"timed by {clocks}" if clocks else "")
    fig.suptitle(f"{meta.get('redoes') or 'Lehmann 2023, Appendix A'}: time per strategy\n{sub}", fontsize=10)
    fig.tight_layout()
    return [(stem, fig)]


STENCIL_SERIES = [("sync", "off"), ("async", "off"), ("sync", "on"), ("async", "on")]
STENCIL_SERIES_STYLE = {("sync", "off"): ("#1f77b4", "o", "-"), ("async", "off"): ("#ff7f0e", "s", "-"),
                        ("sync", "on"): ("#1f77b4", "o", "--"), ("async", "on"): ("#ff7f0e", "s", "--")}
STENCIL_PHASES = [("compute_ms", "compute", "#7f7f7f"), ("inner_ms", "inner", "#2ca02c"),
                  ("outer_ms", "outer", "#98df8a"), ("pack_ms", "pack", "#9467bd"),
                  ("exchange_ms", "exchange", "#d62728"), ("unpack_ms", "unpack", "#ff9896"),
                  ("wait_ms", "wait", "#c7c7c7")]


def stencil_bench(columns, rows, meta, csv_path, stem):
    groups = OrderedDict()
    for r in rows:
        groups.setdefault((int(num(r["size"])), int(num(r["partitions"])), int(num(r.get("gpus", 1))),
                           r.get("kernel", "")), []).append(r)
    fig, axes = plt.subplots(2, len(groups), figsize=(5.6 * len(groups) + 0.6, 8.2), squeeze=False)
    many_kernels = len(set(k[3] for k in groups)) > 1
    for col, ((size, parts, gpus, kernel), rs) in enumerate(groups.items()):
        ax = axes[0][col]
        depths = sorted(set(int(num(r["depth"])) for r in rs))
        present = [s for s in STENCIL_SERIES if any((r["exchange"], r["overlap"]) == s for r in rs)]
        for s in present:
            pts = sorted((int(num(r["depth"])), num(r["ms_per_iteration"])) for r in rs if (r["exchange"], r["overlap"]) == s)
            c, m, ls = STENCIL_SERIES_STYLE[s]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=m, linestyle=ls, color=c,
                    label=f"{s[0]}, overlap {s[1]}")
        log2_axis(ax, depths)
        ax.set_xlabel("halo depth")
        ax.set_ylabel("time per iteration (ms, median)")
        ax.set_title(f"{size}x{size}, P = {parts} on {gpus} GPU{'s' if gpus > 1 else ''}" +
                     (f", kernel {kernel}" if many_kernels else "") + ": time by depth")
        ax.legend(fontsize=8)
        ax = axes[1][col]
        width = 0.8 / max(1, len(present))
        for k, s in enumerate(present):
            base = [0.0] * len(depths)
            for key, name, colr in STENCIL_PHASES:
                vals = []
                for d in depths:
                    v = [num(r[key]) for r in rs if (r["exchange"], r["overlap"]) == s and int(num(r["depth"])) == d]
                    vals.append(v[0] if v and not math.isnan(v[0]) else 0.0)
                xs = [i - 0.4 + width * (k + 0.5) for i in range(len(depths))]
                ax.bar(xs, vals, width * 0.92, bottom=base, color=colr, label=name if k == 0 else None,
                       hatch="//" if s[1] == "on" else None, edgecolor="white", linewidth=0.3)
                base = [b + v for b, v in zip(base, vals)]
        ax.set_xticks(range(len(depths)))
        ax.set_xticklabels([str(d) for d in depths])
        ax.set_xlabel("halo depth; bars: " + ", ".join(f"{a}/{b}" for a, b in present) + " (hatched: overlap)")
        ax.set_ylabel("ms per iteration, per phase (summed)")
        ax.set_title("per-phase times (overlapped phases run concurrently)")
        ax.legend(fontsize=7, ncol=4)
    clocks = "/".join(OrderedDict.fromkeys(r.get("clock", "") for r in rows if r.get("clock")))
    sub = subtitle(meta, csv_path, f"timed by {clocks}" if clocks else "")
    fig.suptitle(f"{meta.get('redoes') or 'Valen 2023, Figs 5.1-5.16'}\n{sub}", fontsize=10)
    fig.tight_layout()
    return [(stem, fig)]


GIBBS_PARTS = ["-padding", "-warps", "-widths"]


def _gibbs_series(rows):
    """Per strategy: config -> (mean s, sd s, row); with the document's three GPUs as extra series."""
    ours = OrderedDict()
    for r in rows:
        ours.setdefault(r["strategy"], OrderedDict())[r["config"]] = (num(r["s_full_mean"]), num(r["s_full_sd"]), r)
    docs = OrderedDict()
    for gpu in ("v100", "a100", "h100"):
        d = OrderedDict()
        for r in rows:
            if not math.isnan(num(r.get(f"doc_{gpu}_s"))):
                d[r["config"]] = (num(r[f"doc_{gpu}_s"]), num(r[f"doc_{gpu}_sd"]), r)
        if d:
            docs[f"document {gpu.upper()}"] = d
    return ours, docs


def gibbs_blocks(columns, rows, meta, csv_path, stem):
    ours, docs = _gibbs_series(rows)
    gpu = meta.get("gpu") or "this machine"
    sub = subtitle(meta, csv_path)
    paper = meta.get("redoes") or "poisson-ising-gibbs-cupy"
    figures = []
    # Fig 16: Bland-Altman of the padding effect (widths 4 and 8): x = mean of the pair, y = padded - plain.
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, (series, scale) in zip(axes, [(ours, 1.0), (docs, 1.0)]):
        for name, d in series.items():
            xs, ys, es = [], [], []
            for cfg, (m, sd, r) in d.items():
                if "+" not in cfg:
                    continue
                plain = d.get(cfg.split("+")[0])
                if not plain:
                    continue
                xs.append(0.5 * (m + plain[0]))
                ys.append(m - plain[0])
                es.append(math.sqrt(sd * sd + plain[1] * plain[1]))
            if xs:
                label = name if series is docs else f"{name} ({gpu})"
                ax.errorbar(xs, ys, yerr=es, fmt="o", capsize=2.5, label=label, color=colour(label))
        ax.axhline(0.0, linestyle="--", color="0.4", linewidth=1)
        ax.set_xlabel("mean of padded and unpadded (s per full run)")
        ax.set_ylabel("padded - unpadded (s)")
        ax.legend(fontsize=8)
    axes[0].set_title("ours")
    axes[1].set_title("the document (Fig 19's table)")
    title(fig, paper, "padding effect, Bland-Altman (Fig 16)", sub)
    fig.tight_layout()
    figures.append((stem + "-padding", fig))

    def bars(group_of, label_of, what, figname):
        panels = list(ours.items()) + [(n, d) for n, d in docs.items() if n.endswith("A100") or n.endswith("H100")]
        fig, axes = plt.subplots(len(panels), 1, figsize=(12, 2.6 * len(panels) + 0.8), squeeze=False)
        for ax, (name, d) in zip(axes[:, 0], panels):
            groups = OrderedDict()
            for cfg, (m, sd, r) in d.items():
                groups.setdefault(group_of(r), []).append((m, sd, cfg))
            x, ticks, labels = 0, [], []
            for g in sorted(groups):
                items = sorted(groups[g])[:5] if figname == "warps" else sorted(groups[g])
                for i, (m, sd, cfg) in enumerate(items):
                    ax.bar(x, m, yerr=sd, color=colour(f"group {g}"), capsize=2, label=label_of(g) if i == 0 else None)
                    ticks.append(x)
                    labels.append(cfg)
                    x += 1
                x += 1
            ax.legend(fontsize=7, ncol=min(8, len(groups)), loc="upper left")
            ax.set_xticks(ticks)
            ax.set_xticklabels(labels, rotation=90, fontsize=7)
            ax.set_ylabel("s per full run")
            ax.set_title(name if name.startswith("document") else f"{name} ({gpu})", fontsize=9)
            vals = [m for m, _, _ in sum(groups.values(), [])]
            if vals:
                lo, hi = min(vals), max(vals)
                ax.set_ylim(max(0.0, lo - 0.15 * (hi - lo) - 1e-9), hi + 0.15 * (hi - lo) + 1e-9)
        title(fig, paper, what, sub)
        fig.tight_layout()
        figures.append((stem + "-" + figname, fig))

    bars(lambda r: int(num(r["warps"])), lambda g: f"{g} warps", "by warps per block, the 5 fastest each (Fig 17)", "warps")
    bars(lambda r: int(num(r["block_width"])), lambda g: f"width {g}", "by block width (Fig 18)", "widths")
    return figures


DRAW = {
    "gibbs-blocks": gibbs_blocks,
    "mse-curve": mse_curve,
    "sort-bench": sort_bench,
    "sched-bench": sched_bench,
    "sched-model": sched_model,
    "strand-sweep": strand_sweep,
    "strand-bench": strand_bench,
    "stencil-bench": stencil_bench,
}


# ------------------------------------------------------------------------------------------ output


def output_files(kind, stem):
    parts = ["-time", "-samples"] if kind == "mse-curve" else GIBBS_PARTS if kind == "gibbs-blocks" else [""]
    return [stem + p + ext for p in parts for ext in (".png", ".pdf")]


def save(fig, path, overwrite):
    """Writes under a temporary name in the folder, then moves it in place (never over a file unless
    `overwrite`)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".figure-", suffix=os.path.splitext(path)[1], dir=folder)
    os.close(fd)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # as any other new file, not mkstemp's 0600
    try:
        # No creation date in the PDF: the same CSV gives the same file.
        fig.savefig(tmp, metadata={"Creator": "megaview tools/figures.py", "CreationDate": None}
                    if path.endswith(".pdf") else None)
        if overwrite:
            os.replace(tmp, path)
        else:
            os.link(tmp, path)  # fails if the file exists
    except FileExistsError:
        raise FigureError(f"{path}: already exists; refusing to overwrite it")
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def draw(csv_path, out_stem, overwrite, quiet, named):
    """Draws one CSV's figures; returns the files written ([] when the CSV has no figure)."""
    try:
        columns, rows = read_csv(csv_path)
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise FigureError(f"{csv_path}: cannot read: {e}")
    meta = read_meta(csv_path)
    kind = kind_of(columns, meta)
    if kind == "gibbs-blocks" and len({r.get("config") for r in rows}) < 2:
        kind = "gibbs-bench"  # the plain bench's table (one block shape): nothing to compare across shapes
    if kind not in DRAW:
        what = f"a {kind} CSV, which has no figure" if kind else "not a CSV of a megaview experiment"
        if named:
            raise FigureError(f"{csv_path}: {what}")
        if not quiet:
            print(f"figures: skipped {csv_path}: {what}")
        return []
    if not rows:
        raise FigureError(f"{csv_path}: no data rows")
    stem = out_stem or csv_stem(csv_path)
    targets = output_files(kind, stem)
    if not overwrite:
        for t in targets:
            if os.path.exists(t):
                raise FigureError(f"{t}: already exists; refusing to overwrite it")
    with plt.rc_context(STYLE):
        try:
            figures = DRAW[kind](columns, rows, meta, csv_path, stem)
        except (KeyError, ValueError, IndexError) as e:
            raise FigureError(f"{csv_path}: not a valid {kind} CSV ({type(e).__name__}: {e})")
        written = []
        try:
            for fstem, fig in figures:
                for ext in (".png", ".pdf"):
                    save(fig, fstem + ext, overwrite)
                    written.append(fstem + ext)
        finally:
            for _, fig in figures:
                plt.close(fig)
    if not quiet:
        print(f"figures: wrote {', '.join(written)}")
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[2:]))
    ap.add_argument("paths", nargs="+", metavar="PATH", help="a CSV, or a folder of CSV files")
    ap.add_argument("--out", metavar="STEM", help="output stem for a single CSV (default: the CSV's path without .csv)")
    ap.add_argument("--no-overwrite", action="store_true", help="refuse (exit 1) instead of replacing a figure")
    ap.add_argument("--quiet", action="store_true", help="print errors only")
    args = ap.parse_args(argv)

    jobs = []  # (csv, named on the command line)
    for p in args.paths:
        if os.path.isdir(p):
            jobs += [(os.path.join(p, f), False) for f in sorted(os.listdir(p)) if f.endswith(".csv")]
        else:
            jobs.append((p, True))
    if args.out and len(jobs) != 1:
        ap.error("--out takes exactly one CSV")
    failed = 0
    for path, named in jobs:
        try:
            draw(path, args.out, not args.no_overwrite, args.quiet, named)
        except FigureError as e:
            print(f"figures: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
