#!/usr/bin/env python3
"""Merges the JSON of `tessel-bench allreduce | ddp | shard` and ddp_reference.py
(as bench/distributed/run-distributed-gpu.sh writes them into one folder) into one
markdown report, and checks the issue's targets:

  - bucketed DDP within 5% of PyTorch DDP's step time, at most 5% of the step
    waiting for communication;
  - sharding cuts per-rank optimizer state to 1/N (within 5%) with a step time at
    most 10% above unsharded DDP.

    python3 bench/reference/distributed/summarize_distributed.py RESULTS_DIR --output summary.md
"""

import argparse
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_report(text, output):
    """The markdown to `output`, or to stdout without one."""
    if output:
        with open(output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


def md_table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def pm(rec, key, digits=2):
    mean, std = rec.get(key + "_mean"), rec.get(key + "_std")
    if mean is None:
        return "-"
    return f"{mean:.{digits}f} ± {std:.{digits}f}"


def num(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}"


def allreduce_section(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "allreduce-*.json"))):
        doc = load(path)
        for r in (doc or {}).get("results", []):
            rows.append(("tessel (c10d) " + r.get("collective", "all-reduce"), r["backend"],
                         r["world_size"], r["size"], num(r["mean_ms"], 3),
                         num(r["median_ms"], 3), num(r["std_ms"], 3), num(r["algbw_GBs"], 1),
                         num(r["busbw_GBs"], 1)))
    refs = [os.path.join(folder, "pytorch.json")] + sorted(glob.glob(os.path.join(folder, "matrix-pytorch-*.json")))
    for r in [r for path in refs for r in (load(path) or {}).get("allreduce", [])]:
        rows.append(("torch.distributed all-reduce", r["backend"], r["world_size"], r["size"],
                     num(r["mean_ms"], 3),
                     num(r["median_ms"], 3), num(r["std_ms"], 3), num(r["algbw_GBs"], 1),
                     num(r["busbw_GBs"], 1)))
    if not rows:
        return "## Collectives\n\n(no results)\n"
    return ("## Collectives (float32; size: the all-reduced tensor, the all-gather's output, the"
            " reduce-scatter's input; busbw as nccl-tests)\n\n") + md_table(
        ["source", "backend", "ranks", "size", "mean ms", "median ms", "std ms", "algbw GB/s", "busbw GB/s"],
        rows)


def ddp_section(folder, pytorch):
    doc = load(os.path.join(folder, "ddp.json"))
    if not doc:
        return "## DDP variants\n\n(no results)\n", []
    rows = []
    records = doc.get("results", [])
    tuned = load(os.path.join(folder, "ddp-tuned.json"))
    if tuned:
        records = records + tuned.get("results", [])
    hook = load(os.path.join(folder, "ddp-hook.json"))
    if hook:
        records = records + [r for r in hook.get("results", []) if "bf16 hook" in r["variant"]]
    for r in records + [p for p in pytorch if p["variant"] == "pytorch-ddp"]:
        rows.append((r["variant"], r["precision"], pm(r, "step_ms"), num(r.get("step_ms_median")),
                     pm(r, "comm_wait_ms"), num(r.get("comm_wait_pct"), 1),
                     num(r.get("comm_wait_pct_median"), 1), pm(r, "sync_call_host_ms"),
                     num(r.get("bucket_mb"), 1), r.get("buckets", "-"),
                     r.get("buckets_launched_in_backward", "-"), num(r.get("peak_GiB"))))
    timing = sorted({r.get("comm_wait_timing", "host, stream synchronised around the call")
                     for r in records + pytorch if r.get("comm_wait_ms_mean") is not None})
    text = ("## DDP variants ({} ranks, {} ctx {}, global batch {})\n\n".format(
        doc.get("world_size"), records[0]["model"] if records else "?",
        records[0]["context"] if records else "?", records[0]["global_batch"] if records else "?") +
        "comm wait: GPU time on the compute stream from the end of the last backward kernel until the"
        " averaged gradients are usable (waiting for the gradient collectives that did not overlap the"
        " backward, plus any copy-out), measured with CUDA events; wait % = mean comm wait / mean step"
        " (median: the same with medians). sync call host ms: host time inside"
        " finishGradientSynchronization() (launch cost only; the host does not block). Timing used: " +
        "; ".join(timing) + ". `+hi-prio`: NCCL on high-priority streams; `taper N MB`: the last"
        " bucket's worth of gradients in buckets of at most N MB.\n\n" +
        md_table(["variant", "precision", "step ms", "step median", "comm wait ms", "wait %",
                  "wait % median", "sync call host ms", "bucket MB", "buckets", "from hooks", "peak GiB"],
                 rows))
    return text, records


def shard_section(folder, pytorch):
    doc = load(os.path.join(folder, "shard.json"))
    if not doc:
        return "## Optimizer-state sharding\n\n(no results)\n", []
    records = doc.get("results", [])
    rows = []
    for r in records + pytorch:
        rows.append((r["variant"], r["precision"], pm(r, "step_ms"), num(r.get("mem_init_GiB")),
                     num(r.get("peak_before_step_GiB")), num(r.get("peak_optimizer_step_GiB")),
                     num(r.get("params_GiB")), num(r.get("grads_GiB")), num(r.get("optimizer_state_GiB"))))
    return ("## Optimizer-state sharding (per rank; rank 0's memory)\n\n" + md_table(
        ["variant", "precision", "step ms", "after init GiB", "peak fwd+bwd GiB", "peak optimizer GiB",
         "params GiB", "grads GiB", "optimizer state GiB"], rows)), records


def targets(ddp, shard, pytorch, world):
    lines = []
    for precision in sorted({r["precision"] for r in ddp + shard + pytorch}):
        ref = next((p for p in pytorch if p["variant"] == "pytorch-ddp" and p["precision"] == precision), None)
        bucketed = [r for r in ddp if r["variant"].startswith("bucketed") and "hook" not in r["variant"]
                    and r["precision"] == precision]
        if bucketed:
            best = min(bucketed, key=lambda r: r["step_ms_mean"])
            if ref:
                ratio = best["step_ms_mean"] / ref["step_ms_mean"]
                ok = "met" if ratio <= 1.05 else "missed"
                lines.append(f"- {precision}: best bucketed DDP ({best['variant']}) {best['step_ms_mean']:.1f} ms"
                             f" vs PyTorch DDP {ref['step_ms_mean']:.1f} ms: x{ratio:.3f} (target <= 1.05: {ok})")
            ok = "met" if best.get("comm_wait_pct", 100) <= 5 else "missed"
            median = best.get("comm_wait_pct_median")
            lines.append(f"- {precision}: {best['variant']} waits {best.get('comm_wait_pct', 0):.1f}% of the step"
                         f" for communication" + (f" (median {median:.1f}%)" if median is not None else "") +
                         f" (target <= 5%: {ok})")
            least = min(bucketed, key=lambda r: r.get("comm_wait_pct", 100))
            if least is not best:
                lines.append(f"- {precision}: least waiting bucketed variant: {least['variant']},"
                             f" {least.get('comm_wait_pct', 0):.1f}% at {least['step_ms_mean']:.1f} ms per step")
            if ref and ref.get("comm_wait_pct") is not None:
                lines.append(f"- {precision}: PyTorch DDP waits {ref['comm_wait_pct']:.1f}% of its step"
                             f" ({ref['comm_wait_ms_mean']:.2f} ms, same definition)")
        none = next((r for r in shard if r["variant"] == "none" and r["precision"] == precision), None)
        for mode in ("broadcast", "zero1"):
            sharded = next((r for r in shard if r["variant"] == mode and r["precision"] == precision), None)
            if not (none and sharded and none.get("optimizer_state_GiB")):
                continue
            state = sharded["optimizer_state_GiB"] / none["optimizer_state_GiB"]
            step = sharded["step_ms_mean"] / none["step_ms_mean"]
            ok_state = "met" if abs(state * world - 1) <= 0.05 else "missed"
            ok_step = "met" if step <= 1.10 else "missed"
            lines.append(f"- {precision}: {mode} keeps {state:.3f} of the optimizer state per rank"
                         f" (target 1/{world} within 5%: {ok_state}); step time x{step:.3f} of unsharded DDP"
                         f" (target <= 1.10: {ok_step})")
    return "## Targets\n\n" + ("\n".join(lines) if lines else "(not enough results)") + "\n"


STRATEGIES = ["naive", "flat", "overlapped", "bucketed", "bucketed-bf16copies", "zero1",
              "zero1-prefetch", "zero1-prefetch-bf16grad"]
# Like for like: bf16 working copies put bf16 gradients on the wire, as bf16_compress_hook does.
PYTORCH_FOR = {"bucketed": "pytorch-ddp", "bucketed-bf16copies": "pytorch-ddp-bf16hook",
               "zero1": "pytorch-zero", "zero1-prefetch": "pytorch-zero",
               "zero1-prefetch-bf16grad": "pytorch-zero"}


def strategy_of(variant):
    """'bucketed auto +bf16 copies +hi-prio' -> 'bucketed-bf16copies'; 'pytorch-ddp +bf16 hook'
    -> 'pytorch-ddp-bf16hook'; 'bucketed auto' -> 'bucketed'."""
    name = variant.split(" ")[0]
    for marker, suffix in (("bf16 hook", "-bf16hook"), ("bf16 copies", "-bf16copies")):
        if marker in variant:
            name += suffix
    return name


def matrix_records(folder):
    """{(context, batch): {"eager"|"tessel"|"pytorch": [records]}} from the matrix stage."""
    shapes = {}
    for path in sorted(glob.glob(os.path.join(folder, "matrix-*.json"))):
        kind = os.path.basename(path).split("-")[1]
        kernels = "pytorch" if kind == "pytorch" else os.path.basename(path).split("-")[2]
        for r in (load(path) or {}).get("results", []):
            if r.get("status", "ok") != "ok" or r.get("step_ms_mean") is None:
                continue
            shape = shapes.setdefault((r["context"], r["global_batch"]), {})
            shape.setdefault(kernels, []).append(dict(r, strategy=strategy_of(r["variant"])))
    return shapes


def find(records, strategy, precision):
    return next((r for r in records if r["strategy"] == strategy and r["precision"] == precision), None)


def step_cell(r):
    if not r:
        return "-"
    mean, std = r["step_ms_mean"], r["step_ms_std"]
    return f"{mean:.1f} ± {std:.1f} ({100 * std / mean:.0f}%)"


def matrix_section(folder):
    shapes = matrix_records(folder)
    if not shapes:
        return "", []
    out = ["## The study: each strategy with eager and with Tessel's kernels, and PyTorch's (issue 23)\n",
           "eager: LibTorch ops, SDPA attention, PyTorch's fused AdamW. tessel: `--kernels tessel"
           " --attention tessel` (RMSNorm, SwiGLU, RoPE, cross-entropy, FlashAttention and AdamW in"
           " Tessel). pytorch: DistributedDataParallel / ZeroRedundancyOptimizer, fused AdamW, eager"
           " model. Step: mean ± std over the measured steps (std as % of the mean); wait: exposed"
           " communication as % of the step; peak: rank 0's peak GiB.\n"]
    lines = []
    for (context, batch) in sorted(shapes):
        kinds = shapes[(context, batch)]
        eager, tessel, py = kinds.get("eager", []), kinds.get("tessel", []), kinds.get("pytorch", [])
        for precision in sorted({r["precision"] for rs in kinds.values() for r in rs}):
            rows = []
            for strategy in STRATEGIES:
                e, t = find(eager, strategy, precision), find(tessel, strategy, precision)
                if not e and not t:  # not run in this study
                    continue
                p = find(py, PYTORCH_FOR.get(strategy, ""), precision)
                speedup = f"x{e['step_ms_mean'] / t['step_ms_mean']:.2f}" if e and t else "-"
                rows.append((strategy, step_cell(e), step_cell(t), speedup,
                             num(e and e.get("comm_wait_pct"), 1), num(t and t.get("comm_wait_pct"), 1),
                             num(e and e.get("peak_GiB")), num(t and t.get("peak_GiB")),
                             p["variant"] + " " + step_cell(p) if p else "-",
                             num(p and p.get("comm_wait_pct"), 1), num(p and p.get("peak_GiB"))))
                for ours, label in ((e, "eager"), (t, "tessel")):
                    if ours and p:
                        ratio = ours["step_ms_mean"] / p["step_ms_mean"]
                        wait = ours.get("comm_wait_pct")
                        ok = "met" if ratio <= 1.0 and (wait is None or wait <= 5) else "missed"
                        lines.append(f"- ctx {context} batch {batch} {precision}: {strategy} ({label}) "
                                     f"x{ratio:.3f} of {p['variant']}, waits {num(wait, 1)}% "
                                     f"(target <= x1.0 and <= 5%: {ok})")
                if e and t:
                    ok = "met" if t["step_ms_mean"] < e["step_ms_mean"] else "missed"
                    lines.append(f"- ctx {context} batch {batch} {precision}: {strategy} with Tessel's"
                                 f" kernels x{e['step_ms_mean'] / t['step_ms_mean']:.2f} of eager"
                                 f" (target > x1: {ok})")
            out.append(f"### ctx {context}, global batch {batch}, {precision}\n")
            out.append(md_table(["strategy", "eager step ms", "tessel step ms", "tessel speed-up",
                                 "eager wait %", "tessel wait %", "eager peak GiB", "tessel peak GiB",
                                 "pytorch step ms", "pytorch wait %", "pytorch peak GiB"], rows))
    out.append("### Targets of the study\n\n" + "\n".join(lines) + "\n")
    return "\n".join(out), lines


def ddp_records_for_note(folder):
    records = []
    for name in ("ddp.json", "ddp-tuned.json", "shard.json"):
        records += (load(os.path.join(folder, name)) or {}).get("results", [])
    return records


def optimizer_note(tessel, pytorch):
    ours = sorted({r.get("adamw", "fused (auto on CUDA)") for r in tessel}) or ["?"]
    ref = sorted({r.get("adamw", "default (foreach on CUDA)") for r in pytorch}) or ["?"]
    same = "like for like" if set(ours) == set(ref) else "NOT like for like: part of the step-time gap is the optimizer"
    return (f"Optimizer: Tessel's AdamW implementation {', '.join(ours)}; the PyTorch reference's"
            f" torch.optim.AdamW {', '.join(ref)} ({same}).")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("folder")
    p.add_argument("--output", help="markdown file (default: stdout)")
    p.add_argument("--version", action="version", version="summarize_distributed.py 0.1.0")
    args = p.parse_args(argv)
    py = load(os.path.join(args.folder, "pytorch.json")) or {}
    pytorch = py.get("results", [])
    for path in sorted(glob.glob(os.path.join(args.folder, "matrix-pytorch-*.json"))):
        py.setdefault("torch", (load(path) or {}).get("torch"))
    ddp_text, ddp = ddp_section(args.folder, pytorch)
    shard_text, shard = shard_section(args.folder, pytorch)
    world = (ddp or shard or pytorch or [{"world_size": 2}])[0]["world_size"]
    matrix_text, _ = matrix_section(args.folder)
    if matrix_text and not (ddp or shard):  # a matrix-only folder
        text = "\n".join(["# Distributed training: Tessel (LibTorch c10d) vs PyTorch", "",
                          f"torch {py.get('torch', '?')}; step times are the slowest rank's.", "",
                          allreduce_section(args.folder), matrix_text])
    else:
        text = "\n".join([
            "# Distributed training: Tessel (LibTorch c10d) vs PyTorch", "",
            f"torch {py.get('torch', '?')}; step times are the slowest rank's, mean ± std over the"
            " measured steps.",
            "", optimizer_note(ddp_records_for_note(args.folder), pytorch),
            "", allreduce_section(args.folder), ddp_text, shard_text, targets(ddp, shard, pytorch, world),
            matrix_text])
    write_report(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
