#!/usr/bin/env python3
"""Plots the JSON of `tessel-bench attention` as one PNG, a section per study present.

    python3 bench/reference/plot_attention.py --json attention.json --out attention.png
    python3 bench/reference/plot_attention.py --json attention.json --json triton.json --out a.png

flash: latency (ms, log-log) against sequence length, a panel per dtype and head dim, one
line per implementation (forward+backward solid, forward alone dashed). realistic: TFLOP/s
of the forward and the backward, a bar per implementation ("n/a" or "OOM" where it did not
run); more JSON files in the same record shape (bench/reference/triton_attention.py) add
their bars. naive: memory in use before the backward, forward and backward time against
sequence length, a colour per head dim, naive solid and Tessel dashed.
"""

import argparse
import json
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("plot_attention.py: needs matplotlib (pip install matplotlib)")

IMPL_COLORS = {"naive": "tab:red", "tessel": "tab:blue", "sdpa": "tab:green",
               "sdpa-cudnn": "tab:olive", "sdpa-flash": "tab:cyan",
               "sdpa-efficient": "tab:purple", "triton": "tab:orange"}


def load(paths):
    """(meta of the first file, the results of all files)."""
    meta, results = {}, []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        if not meta:
            meta = {k: v for k, v in data.items() if k != "results"}
        results.extend(data.get("results", []))
    return meta, results


def ok(row, key):
    """Whether the row has this measurement (a forward that ran stays when the backward failed)."""
    return row.get(key) is not None


def color(impl):
    return IMPL_COLORS.get(impl, None)


def ordered(values):
    seen = []
    for v in values:
        if v not in seen:
            seen.append(v)
    return seen


def first_failure(rows):
    """' (OOM from L=...)' for the shortest sequence an implementation did not run."""
    failed = sorted(r["seq"] for r in rows if r.get("status") != "ok")
    if not failed:
        return ""
    status = next(r["status"] for r in rows if r["seq"] == failed[0])
    return f" ({'OOM' if status == 'OOM' else 'fails'} from L={failed[0]})"


def plot_flash(fig, rows):
    dtypes, dims = ordered(r["dtype"] for r in rows), sorted({r["d"] for r in rows})
    axes = fig.subplots(len(dtypes), len(dims), squeeze=False, sharex=True)
    for i, dtype in enumerate(dtypes):
        for j, d in enumerate(dims):
            ax = axes[i][j]
            panel = [r for r in rows if r["dtype"] == dtype and r["d"] == d]
            for impl in ordered(r["impl"] for r in panel):
                mine = sorted((r for r in panel if r["impl"] == impl), key=lambda r: r["seq"])
                label = impl + first_failure(mine)  # on the first line drawn
                for key, style in (("fwd_bwd_ms", "-"), ("fwd_ms", "--")):
                    pts = [(r["seq"], r[key]) for r in mine if ok(r, key)]
                    if pts:
                        ax.plot(*zip(*pts), style, marker="o", ms=3, color=color(impl),
                                label=label, alpha=1.0 if style == "-" else 0.6)
                        label = None
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{dtype}, d={d}", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
            if i == len(dtypes) - 1:
                ax.set_xlabel("sequence length")
            if j == 0:
                ax.set_ylabel("ms (solid fwd+bwd, dashed fwd)")
            ax.legend(fontsize=7)
    fig.suptitle("flash study: batch 1, one head, causal")


def shape_label(r):
    causal = "causal" if r.get("causal") else "full"
    return f"B{r['batch']} H{r['heads']} L{r['seq']} d{r['d']}\n{causal}"


def plot_realistic(fig, rows):
    groups = ordered(shape_label(r) for r in rows)
    impls = ordered(r["impl"] for r in rows)
    axes = fig.subplots(1, 2, squeeze=False)[0]
    width = 0.8 / max(1, len(impls))
    for ax, key, title in ((axes[0], "fwd_tflops", "forward"), (axes[1], "bwd_tflops", "backward")):
        for k, impl in enumerate(impls):
            for g, group in enumerate(groups):
                row = next((r for r in rows if r["impl"] == impl and shape_label(r) == group), None)
                x = g + (k - (len(impls) - 1) / 2) * width
                if row is not None and ok(row, key):
                    ax.bar(x, row[key], width, color=color(impl), label=impl if g == 0 else None)
                elif row is not None:
                    ax.bar(x, 0, width, color=color(impl), label=impl if g == 0 else None)
                    status = row.get("status", "")
                    text = "OOM" if status == "OOM" else "error" if status.startswith("error") else "n/a"
                    ax.text(x, 0, text, rotation=90, ha="center", va="bottom", fontsize=7)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels(groups, fontsize=8)
        ax.set_ylabel("TFLOP/s")
        ax.set_title(title, fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.suptitle("realistic study, bf16 (FLOPs: fwd 4BHL²d, halved when causal; bwd 2.5x)")


def plot_naive(fig, rows):
    dims = sorted({r["d"] for r in rows})
    cmap = plt.get_cmap("viridis")
    axes = fig.subplots(1, 3, squeeze=False)[0]
    panels = (("mem_before_bwd_mib", "MiB in use before the backward"),
              ("fwd_ms", "forward ms"), ("bwd_ms", "backward ms"))
    for ax, (key, title) in zip(axes, panels):
        for n, d in enumerate(dims):
            for impl, style in (("naive", "-"), ("tessel", "--")):
                mine = sorted((r for r in rows if r["d"] == d and r["impl"] == impl),
                              key=lambda r: r["seq"])
                pts = [(r["seq"], r[key]) for r in mine if ok(r, key)]
                if pts:
                    ax.plot(*zip(*pts), style, marker="o", ms=3,
                            color=cmap(n / max(1, len(dims) - 1)),
                            label=f"{impl} d={d}{first_failure(mine)}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=6)
    dtype = ordered(r["dtype"] for r in rows)
    fig.suptitle(f"naive study: batch 8, one head, causal, {'/'.join(dtype)}")


SECTIONS = (("flash", plot_flash), ("realistic", plot_realistic), ("naive", plot_naive))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="append", required=True,
                        help="tessel-bench attention JSON (repeat to add e.g. triton's)")
    parser.add_argument("--out", required=True, help="the PNG to write")
    args = parser.parse_args()
    meta, results = load(args.json)
    present = [(name, fn, [r for r in results if r.get("study") == name])
               for name, fn in SECTIONS]
    present = [p for p in present if p[2]]
    if not present:
        sys.exit("plot_attention.py: no results of a known study in " + ", ".join(args.json))
    heights = [2.6 * len({r["dtype"] for r in rows}) if name == "flash" else 4.2
               for name, _, rows in present]
    fig = plt.figure(figsize=(17, sum(heights) + 0.6), layout="constrained")
    subfigs = fig.subfigures(len(present), 1, height_ratios=heights, squeeze=False)[:, 0]
    for subfig, (name, fn, rows) in zip(subfigs, present):
        fn(subfig, rows)
    fig.suptitle(f"tessel-bench attention: {meta.get('device', '?')}, {meta.get('date', '')}, "
                 f"torch {meta.get('torch_version', '?')}", fontsize=12)
    fig.savefig(args.out, dpi=110)
    print(f"plot_attention.py: wrote {args.out}")


if __name__ == "__main__":
    main()
