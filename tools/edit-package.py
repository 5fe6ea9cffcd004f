#!/usr/bin/env python3
"""Writes a copy of a kernel package cut down or edited for an experiment on the GPU.

    tools/edit-package.py IN.tslpkg OUT.tslpkg [--configs 12,13] [--edit NAME ...]

--configs keeps only those autotuning configurations (both variants of each), so the
autotuner picks among them and a profiler sees few launches. --edit changes every kept
variant's PTX; an edited package times a hypothesis and computes wrong numbers on purpose:

  no-loop-barrier   deletes the `bar.sync 0` of each loop body (what the block barrier
                    per K tile costs; the slots are then overwritten while being read)
  no-tf32-round     deletes the cvt.rn.tf32.f32 roundings (operands truncated instead)
"""
import argparse
import json
import re
import sys


def drop_loop_barriers(ptx):
    """Removes `bar.sync 0` between a loop's label and its back edge (a branch to it)."""
    lines = ptx.split("\n")
    labels = {}
    for i, line in enumerate(lines):
        m = re.match(r"^(\$L__BB\d+_\d+):", line)
        if m:
            labels[m.group(1)] = i
    drop = set()
    for i, line in enumerate(lines):
        m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
        if m and m.group(1) in labels and labels[m.group(1)] < i:
            for j in range(labels[m.group(1)], i):
                if re.match(r"^\s*bar\.sync\s+0;", lines[j]):
                    drop.add(j)
    if not drop:
        sys.exit("no barrier inside a loop")
    return "\n".join(l for i, l in enumerate(lines) if i not in drop)


def drop_tf32_rounding(ptx):
    out, n = re.subn(r"cvt\.rn\.tf32\.f32 (%r\d+), (%r\d+);", r"mov.b32 \1, \2;", ptx)
    if n == 0:
        sys.exit("no tf32 rounding")
    return out


EDITS = {"no-loop-barrier": drop_loop_barriers, "no-tf32-round": drop_tf32_rounding}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--configs", help="comma-separated configuration numbers to keep")
    parser.add_argument("--edit", action="append", default=[], choices=sorted(EDITS))
    args = parser.parse_args()
    package = json.load(open(args.input))
    keep = {int(c) for c in args.configs.split(",")} if args.configs else None
    for kernel in package["kernels"]:
        variants = [v for v in kernel["variants"] if keep is None or v["config"] in keep]
        if not variants:
            sys.exit(f"{kernel['name']}: no variant of configs {sorted(keep)}")
        # The runtime wants configurations numbered 0..n-1.
        renumber = {c: i for i, c in enumerate(sorted({v["config"] for v in variants}))}
        for v in variants:
            v["config"] = renumber[v["config"]]
            for edit in args.edit:
                v["ptx"] = EDITS[edit](v["ptx"])
        kernel["variants"] = variants
    json.dump(package, open(args.output, "w"))


if __name__ == "__main__":
    main()
