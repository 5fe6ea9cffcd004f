#!/usr/bin/env python3
"""Summarises Nsight Compute's source page: warp-stall samples per reason over the kernel,
then the SASS instructions with the most samples and their top three reasons.

    ncu --section SourceCounters --section WarpStateStats -o REPORT ...   (GPU machine)
    ncu -i REPORT.ncu-rep --page source --csv --print-source sass > source.csv
    tools/ncu-stalls.py source.csv [--top N]
"""
import argparse
import csv


def number(text):
    try:
        return float(str(text).replace(",", ""))
    except ValueError:
        return 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=70)
    args = parser.parse_args()
    with open(args.csv) as f:
        # ncu puts a "Kernel Name" line before the header.
        first = f.readline()
        if not first.startswith('"Kernel Name"'):
            f.seek(0)
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit(f"{args.csv}: no rows")
    columns = list(rows[0].keys())
    reasons = [c for c in columns if c and c.startswith("stall_")]
    total = next(c for c in columns if c and c.startswith("Warp Stall Sampling (All"))
    samples = sum(number(r[total]) for r in rows)
    print(f"{samples:.0f} samples (percentages of all; '(Not Issued)' counts again those "
          "where the warp issued nothing)")
    sums = {c: sum(number(r[c]) for r in rows) for c in reasons}
    for reason, value in sorted(sums.items(), key=lambda kv: -kv[1]):
        if value:
            print(f"{reason:45s} {value:10.0f} {100 * value / samples:5.1f}%")
    print()
    for r in sorted(rows, key=lambda r: -number(r[total]))[: args.top]:
        top = sorted(((c, number(r[c])) for c in reasons), key=lambda kv: -kv[1])[:3]
        print(f"{r['Source'][:60]:60s} {number(r[total]):8.0f} "
              f"{[(c, int(v)) for c, v in top if v]}")


if __name__ == "__main__":
    main()
