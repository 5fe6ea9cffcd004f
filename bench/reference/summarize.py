#!/usr/bin/env python3
"""Merges result JSON files of `tessel-bench model`, `tessel-bench precision` and
bench/reference/transformer_lm.py into one markdown report (and one CSV).

    python3 bench/reference/summarize.py results/*.json --markdown summary.md --csv all.csv

Rows with the same (model, context, mode, precision, attention, kernels) are
put side by side: one line per implementation, with the step time relative to
eager PyTorch.
"""

import argparse
import json
import sys

MODEL_ORDER = {"small": 0, "medium": 1, "large": 2, "xl": 3, "2.7B": 4, "10B": 5}
IMPL_ORDER = {"pytorch-eager": 0, "pytorch-compile": 1, "libtorch": 2, "libtorch-graph": 3}


def ms(rec, key):
    mean, std = rec.get(key + "_ms_mean"), rec.get(key + "_ms_std")
    return "-" if mean is None else f"{mean:.2f} ± {std:.2f}"


def md_table(headers, rows, left=()):
    out = ["| " + " | ".join(headers) + " |",
           "| " + " | ".join(":--" if i in left else "--:" for i in range(len(headers))) + " |"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def key_of(r):
    return (MODEL_ORDER.get(r["model"], 99), r["model"], r["context"], r["mode"], r["precision"],
            r.get("attention", ""), r.get("kernels", "eager"))


def timing_section(records):
    # Memory runs (few steps) and graph verification runs have their own sections.
    timed = [r for r in records if "impl" in r and "mem_forward_peak_mib" not in r
             and "graph_matches_eager" not in r]
    if not timed:
        return ""
    groups = {}
    for r in timed:
        groups.setdefault(key_of(r), []).append(r)
    rows = []
    for key in sorted(groups):
        group = sorted(groups[key], key=lambda r: IMPL_ORDER.get(r["impl"], 9))
        base = next((r.get("step_ms_mean") for r in group if r["impl"] == "pytorch-eager"), None)
        for r in group:
            step = r.get("step_ms_mean")
            rel = f"{base / step:.2f}x" if base and step else ""
            rows.append([r["model"], r["context"], r["mode"], r["precision"], r.get("attention", ""),
                         r["impl"] + ("" if r.get("kernels", "eager") == "eager" else "+tessel"),
                         ms(r, "forward"), ms(r, "backward"), ms(r, "optimizer"), ms(r, "step"), rel,
                         r["status"]])
    return ("## Step times (ms, mean ± std)\n\n"
            "Speed-up is eager PyTorch's step time over this line's.\n\n" +
            md_table(["model", "ctx", "mode", "prec", "attention", "impl", "forward", "backward", "optimizer",
                      "step", "speed-up", "status"], rows, left={0, 2, 3, 4, 5, 11}))


def memory_section(records):
    mem = [r for r in records if any(k in r for k in ("mem_forward_peak_mib",))]
    if not mem:
        return ""
    rows = []
    for r in sorted(mem, key=lambda r: (key_of(r), r.get("impl", ""))):
        def gib(k):
            return f"{r[k] / 1024:.2f}" if r.get(k) is not None else "-"
        rows.append([r["model"], r["context"], r["mode"], r["precision"], r.get("impl", ""),
                     gib("mem_init_peak_mib"), gib("mem_forward_peak_mib"), gib("mem_before_optimizer_peak_mib"),
                     gib("mem_after_optimizer_peak_mib"), r.get("snapshot", ""), r["status"]])
    return ("## Peak allocated memory (GiB)\n\n"
            "Peaks of the caching allocator's allocated bytes: after building the model, and during the last "
            "measured step after the forward, before and after the optimizer step.\n\n" +
            md_table(["model", "ctx", "mode", "prec", "impl", "after init", "forward", "before optimizer",
                      "after optimizer", "snapshot", "status"], rows, left={0, 2, 3, 4, 9, 10}))


def graph_section(records):
    checked = [r for r in records if "graph_matches_eager" in r]
    if not checked:
        return ""
    rows = [[r["model"], r["context"], r["mode"], r["precision"], r["graph_matches_eager"],
             f"{r['graph_max_loss_diff']:.3g}", f"{r['graph_max_param_diff']:.3g}"] for r in checked]
    return ("## CUDA graph vs uncaptured step\n\n" +
            md_table(["model", "ctx", "mode", "prec", "match", "max |Δ loss|", "max |Δ param|"], rows,
                     left={0, 2, 3}))


def precision_section(records):
    rows = [[r["accumulator"], r["addend"], f"{r['addend_as_stored']:.10f}", f"{r['result']:.7f}",
             f"{r['error']:+.7f}"] for r in records if "accumulator" in r]
    if not rows:
        return ""
    return ("## Mixed-precision accumulation (0.01 added 1000 times)\n\n" +
            md_table(["accumulator", "addend", "addend as stored", "sum", "error"], rows, left={0, 1}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+")
    p.add_argument("--markdown", help="write the report here (default: stdout)")
    p.add_argument("--csv", help="also write every record as CSV")
    p.add_argument("--title", default="Tessel harness benchmarks")
    args = p.parse_args(argv)
    records, devices, tools = [], set(), []
    for path in args.files:
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            print(f"summarize.py: skipping {path}: {e}", file=sys.stderr)
            continue
        if data.get("device"):
            devices.add(data["device"])
        tools.append(f"{data.get('tool', '?')} ({data.get('torch', '')})")
        for r in data.get("results", []):
            r.setdefault("source", path)
            records.append(r)
    text = f"# {args.title}\n\nDevice: {', '.join(sorted(devices))}. Sources: {', '.join(dict.fromkeys(tools))}.\n\n"
    for section in (timing_section(records), memory_section(records), graph_section(records),
                    precision_section(records)):
        if section:
            text += section + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    else:
        print(text, end="")
    if args.csv:
        keys = list(dict.fromkeys(k for r in records for k in r))
        with open(args.csv, "w") as f:
            f.write(",".join(keys) + "\n")
            for r in records:
                cells = []
                for k in keys:
                    v = r.get(k)
                    v = "" if v is None else str(v)
                    cells.append('"' + v.replace('"', '""') + '"' if any(c in v for c in ',"\n') else v)
                f.write(",".join(cells) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
