#!/usr/bin/env python3
"""Writes a copy of a kernel package cut down or edited for an experiment on the GPU.

    tools/edit-package.py IN.tslpkg OUT.tslpkg [--configs 12,13] [--edit NAME ...]

--configs keeps only those autotuning configurations (both variants of each), so the
autotuner picks among them and a profiler sees few launches. --edit changes every kept
variant's PTX; an edited package times a hypothesis and computes wrong numbers on purpose:

  no-loop-barrier   deletes the `bar.sync 0` of each loop body (what the block barrier
                    per K tile costs; the slots are then overwritten while being read)
  no-tf32-round     deletes the cvt.rn.tf32.f32 roundings (operands truncated instead)
  first-b-box       bulk copies of B (rank-4 boxes) keep their first box only, with the
                    byte count to match (what the L2 -> SM traffic costs: a quarter of B's)
  no-cluster-share  a multicast package's kernels read their cluster size as 1: launched
                    in clusters, but fetching whole tiles (what the cluster launch costs)
"""
import argparse
import json
import re
import sys


def drop_loop_barriers(ptx):
    """Removes `bar.sync 0` between a loop's label and its back edge (a branch to it).

    Each edit returns the new PTX and how many places it changed."""
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
    return "\n".join(l for i, l in enumerate(lines) if i not in drop), len(drop)


def drop_tf32_rounding(ptx):
    return re.subn(r"cvt\.rn\.tf32\.f32 (%r\d+), (%r\d+);", r"mov.b32 \1, \2;", ptx)


def first_b_box(ptx):
    blocks = ptx.split("// begin inline asm")
    edited = 0
    for i, block in enumerate(blocks):
        copies = re.findall(r"cp\.async\.bulk\.tensor\.4d.*\[(%r\d+)\+(\d+)\]", block)
        if not copies:
            continue
        sizes = re.findall(r"expect_tx\.shared::cta\.b64 _, \[%r\d+\], (\d+);", block)
        if len(sizes) != 1 or len(copies) < 2:
            sys.exit(f"unexpected bulk copy block: {len(sizes)} byte counts, {len(copies)} boxes")
        box = int(sizes[0]) // len(copies)
        block = re.sub(r"(expect_tx\.shared::cta\.b64 _, \[%r\d+\], )\d+;", rf"\g<1>{box};", block)
        block = re.sub(r"\n@p cp\.async\.bulk\.tensor\.4d[^\n]*\[%r\d+\+[1-9]\d*\][^\n]*", "", block)
        blocks[i] = block
        edited += 1
    return "// begin inline asm".join(blocks), edited


def no_cluster_share(ptx):
    """The kernel reads its cluster size as 1: launched in clusters all the same (the
    runtime decides that), every program fetches its whole tiles and waits for no one."""
    return re.subn(r"mov\.u32 (%r\d+), %cluster_nctarank;", r"mov.u32 \1, 1;", ptx)


EDITS = {"no-loop-barrier": drop_loop_barriers, "no-tf32-round": drop_tf32_rounding,
         "first-b-box": first_b_box, "no-cluster-share": no_cluster_share}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--configs", help="comma-separated configuration numbers to keep")
    parser.add_argument("--edit", action="append", default=[], choices=sorted(EDITS))
    args = parser.parse_args()
    package = json.load(open(args.input))
    keep = {int(c) for c in args.configs.split(",")} if args.configs else None
    edits = {edit: 0 for edit in args.edit}
    for kernel in package["kernels"]:
        variants = [v for v in kernel["variants"] if keep is None or v["config"] in keep]
        if not variants:
            sys.exit(f"{kernel['name']}: no variant of configs {sorted(keep)}")
        # The runtime wants configurations numbered 0..n-1.
        renumber = {c: i for i, c in enumerate(sorted({v["config"] for v in variants}))}
        for v in variants:
            v["config"] = renumber[v["config"]]
            for edit in args.edit:
                v["ptx"], count = EDITS[edit](v["ptx"])
                edits[edit] += count
        kernel["variants"] = variants
    for edit, count in edits.items():
        if count == 0:
            sys.exit(f"--edit {edit}: nothing to edit in the variants kept")
        print(f"{edit}: {count} places")
    json.dump(package, open(args.output, "w"))


if __name__ == "__main__":
    main()
