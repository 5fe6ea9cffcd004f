#!/usr/bin/env python3
"""Puts Tessel's DDP, ZeRO-1 and FSDP beside PyTorch's DDP, ZeroRedundancyOptimizer and FSDP2,
shape by shape, from the matrix stage of bench/distributed/run-distributed-gpu.sh (run with
MATRIX_SHARDING=none,zero1-prefetch,fsdp PY_VARIANTS=ddp,zero,fsdp), and checks issue 39's
targets: FSDP's step at most FSDP2's, its peak per rank at most FSDP2's + 5%, its exposed
communication at most 10% of the step. tessel-plan's predicted peak (--plan) is shown beside.

    python3 bench/reference/distributed/summarize_strategies.py FOLDER... --output summary.md

Each FOLDER holds one model's matrix-*.json; step times are medians over the measured steps.
"""

import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from summarize_distributed import load, md_table, num, write_report  # noqa: E402

# Tessel's strategy -> PyTorch's counterpart in ddp_reference.py.
COUNTERPART = {"none": ("DDP", "pytorch-ddp"), "zero1-prefetch": ("ZeRO-1", "pytorch-zero"),
               "fsdp": ("FSDP", "pytorch-fsdp"), "fsdp-bf16grad": ("FSDP bf16 grads", "pytorch-fsdp")}


def records(folder):
    """{(model, context, batch, precision): {"eager"|"tessel"|"pytorch": {variant: record}}};
    variants by their first word ('none', 'fsdp', 'pytorch-fsdp'; '+hi-prio' runs would collide)."""
    shapes = {}
    for path in sorted(glob.glob(os.path.join(folder, "matrix-*.json"))):
        parts = os.path.basename(path).split("-")
        kernels = "pytorch" if parts[1] == "pytorch" else parts[2]
        for r in (load(path) or {}).get("results", []):
            key = (r["model"], r["context"], r["global_batch"], r.get("precision", "?"))
            shapes.setdefault(key, {}).setdefault(kernels, {})[r["variant"].split(" ")[0]] = r
    return shapes


def ok(r):
    return (r is not None and r.get("status", "ok") == "ok" and r.get("step_ms_median") is not None
            and r.get("peak_GiB") is not None)


def step(r):
    if r is None:
        return "-"
    return f"{r['step_ms_median']:.1f}" if ok(r) else r.get("status", "?")


def section(shapes):
    rows, checks = [], []
    for (model, context, batch, precision), kinds in sorted(shapes.items()):
        pytorch = kinds.get("pytorch", {})
        for kernels in ("eager", "tessel"):
            for variant, (name, theirs) in COUNTERPART.items():
                t, p = kinds.get(kernels, {}).get(variant), pytorch.get(theirs)
                if t is None:
                    continue
                speed = f"{p['step_ms_median'] / t['step_ms_median']:.2f}x" if ok(t) and ok(p) else "-"
                rows.append((model, context, batch, precision, kernels, name, step(t), step(p), speed,
                             num(t.get("comm_wait_pct_median"), 1) if ok(t) else "-",
                             num(t.get("peak_GiB")) if ok(t) else "-", num(p.get("peak_GiB")) if ok(p) else "-",
                             num(t.get("plan_peak_GiB")), num(t.get("plan_error_pct"), 1) if ok(t) else "-"))
                if not variant.startswith("fsdp") or not ok(t):
                    continue
                wait = t.get("comm_wait_pct_median", 0.0)
                if ok(p):
                    met = (t["step_ms_median"] <= p["step_ms_median"] and
                           t["peak_GiB"] <= 1.05 * p["peak_GiB"] and wait <= 10)
                    checks.append(f"- {model} ctx {context} batch {batch} {precision}, {kernels} kernels: "
                                  f"{name} {t['step_ms_median']:.1f} ms vs FSDP2 {p['step_ms_median']:.1f} ms "
                                  f"({p['step_ms_median'] / t['step_ms_median']:.3f}x), peak "
                                  f"{t['peak_GiB']:.2f} vs {p['peak_GiB']:.2f} GiB, exposed "
                                  f"communication {wait:.1f}%: {'met' if met else 'missed'}")
                else:
                    checks.append(f"- {model} ctx {context} batch {batch} {precision}, {kernels} kernels: "
                                  f"{name} {t['step_ms_median']:.1f} ms, exposed communication {wait:.1f}%; "
                                  f"FSDP2: {step(p)}")
    table = md_table(["model", "ctx", "batch", "precision", "kernels", "strategy", "Tessel ms", "PyTorch ms",
                      "Tessel speed", "Tessel wait %", "Tessel peak GiB", "PyTorch peak GiB",
                      "plan peak GiB", "plan err %"], rows)
    return table, checks


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folders", nargs="+")
    p.add_argument("--output", help="markdown file (default: stdout)")
    p.add_argument("--version", action="version", version="summarize_strategies.py 0.1.0")
    args = p.parse_args(argv)
    shapes = {}
    for folder in args.folders:
        shapes.update(records(folder))
    if not shapes:
        print("summarize_strategies.py: no matrix-*.json in " + ", ".join(args.folders), file=sys.stderr)
        return 1
    table, checks = section(shapes)
    text = "\n".join([
        "# DDP, ZeRO-1 and FSDP: Tessel against PyTorch, shape by shape", "",
        "Step: median over the measured steps, slowest rank; PyTorch's runs use the eager model "
        "(its ops and SDPA) in both rows of a shape, so `eager` compares the sharding machinery "
        "and `tessel` the whole stack. Wait: exposed communication, % of the step. Peak: rank 0's "
        "peak allocated GiB; plan: tessel-plan's prediction of it.", "",
        table, "## Issue 39's targets for FSDP", "", "\n".join(checks), ""])
    write_report(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
