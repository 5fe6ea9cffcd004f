#!/usr/bin/env python3
"""Plots `tessel-bench model --loss-curve` CSV files: each configuration's loss per step,
and below it each configuration's difference from the first one's (the reference).

    python3 bench/reference/plot_losses.py curve.csv -o curve.png
"""
import argparse
import collections
import csv
import sys


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("csv", nargs="+")
    p.add_argument("-o", "--output", required=True, help="the PNG to write")
    args = p.parse_args(argv)
    curves = collections.OrderedDict()
    for path in args.csv:
        with open(path) as f:
            for label, step, loss in csv.reader(f):
                curves.setdefault(label, []).append((int(step), float(loss)))
    if not curves:
        print("plot_losses.py: no curves in " + ", ".join(args.csv), file=sys.stderr)
        return 1
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    reference = dict(next(iter(curves.values())))
    for label, points in curves.items():
        top.plot([s for s, _ in points], [l for _, l in points], label=label, linewidth=1)
        bottom.plot([s for s, _ in points], [l - reference.get(s, float("nan")) for s, l in points],
                    label=label, linewidth=1)
    top.set_ylabel("loss")
    top.set_yscale("log")
    top.legend(fontsize=8)
    bottom.set_ylabel("loss - " + next(iter(curves)))
    bottom.set_xlabel("step (one fixed batch)")
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
