#!/usr/bin/env python3
"""PyTorch's FlexAttention (torch.compile'd, with a block mask) at the shapes of
`tessel-bench attention --shapes`: the reference for Tessel's attention variants.

    python3 bench/reference/flex_attention.py --shapes 1x16x16384x128:w1024,4x32x4096x128:kv8 \
        --json flex.json

Shapes as tessel-bench's: BxHxLxD (bf16, causal), then :full or :causal, :kvN (N key/value
heads: grouped-query attention, enable_gqa), :wN (a sliding window of N keys left of the
diagonal, as Tessel's AttentionOptions::window), :softcap (score_mod 50 tanh(s / 50)),
:alibi (score_mod with geometric per-head slopes), :docN (N equal documents a sequence, a
mask_mod on their ids, as tessel-bench's) and :sparseN (128 x 128 blocks kept in a band of N
blocks and every N-th block column, as tessel-bench's block mask). The mask is a mask_mod; create_block_mask
builds its BlockMask once per shape (outside the timing), so tiles it removes are skipped,
as in Tessel's kernels. Timing as tessel-bench: the forward with autograd; the backward is
out.backward(dO) on one forward (retain_graph), the inputs' .grad reset before each run;
medians of triton.testing.do_bench. FLOPs: the pairs the mask keeps (4 d per pair forward,
2.5x that backward; causal without a window counted as L^2 / 2, as tessel-bench does).
"""

import argparse
import json
import platform
import sys
from datetime import datetime, timezone

import torch
import torch._functorch.config
import triton
from torch.nn.attention.flex_attention import create_block_mask, flex_attention


def parse_shape(text):
    dims, *parts = text.split(":")
    b, h, l, d = (int(x) for x in dims.split("x"))
    shape = dict(batch=b, heads=h, kv_heads=h, seq=l, d=d, causal=True, window=-1, variant="-")
    for part in parts:
        if part in ("full", "causal"):
            shape["causal"] = part == "causal"
        elif part in ("softcap", "alibi") or part.startswith(("doc", "sparse")):
            shape["variant"] = part
        elif part.startswith("kv"):
            shape["kv_heads"] = int(part[2:])
        elif part.startswith("w"):
            shape["window"] = int(part[1:])
        else:
            raise SystemExit(f"--shapes: '{text}': after ':' comes full, causal, kvN, wN, "
                             "softcap, alibi, docN or sparseN")
    return shape


def sparse_kept(n, i, j):
    # Block (i, j) of the :sparseN mask (tessel-bench's Shape::sparseKept).
    return (abs(i - j) < n) | (j % n == n - 1)


def pairs(s):
    l, w = s["seq"], s["window"]
    if s["variant"].startswith("sparse"):  # the kept blocks' pairs (below the diagonal if causal)
        n, blocks = int(s["variant"][6:]), (l + 127) // 128
        total = 0
        for i in range(blocks):
            for j in range(blocks):
                if sparse_kept(n, i, j):
                    for r in range(i * 128, min(l, (i + 1) * 128)):
                        total += max(0, min(r + 1 if s["causal"] else l, (j + 1) * 128, l) - j * 128)
        return total
    if s["variant"].startswith("doc"):  # causal within each equal document
        n = int(s["variant"][3:])
        return n * (l / n) ** 2 / (2 if s["causal"] else 1)
    if w < 0:
        return l * l / 2 if s["causal"] else l * l
    return sum(min(i, w) + 1 + (0 if s["causal"] else l - 1 - i) for i in range(l))


def run(s, compiled):
    causal, window = s["causal"], s["window"]

    l, variant = s["seq"], s["variant"]
    docs = None
    if variant.startswith("doc"):
        n = int(variant[3:])
        docs = torch.arange(l, device="cuda") * n // l

    def mask_mod(b, h, q_idx, kv_idx):
        ok = kv_idx >= 0
        if causal:
            ok = ok & (kv_idx <= q_idx)
        if window >= 0:
            ok = ok & (kv_idx >= q_idx - window)
        if docs is not None:
            ok = ok & (docs[q_idx] == docs[kv_idx])
        if variant.startswith("sparse"):
            ok = ok & sparse_kept(int(variant[6:]), q_idx // 128, kv_idx // 128)
        return ok

    score_mod = None
    if variant == "softcap":
        def score_mod(score, b, h, q_idx, kv_idx):
            return 50.0 * torch.tanh(score / 50.0)
    elif variant == "alibi":
        slopes = torch.pow(2.0, -8.0 * (torch.arange(s["heads"], device="cuda") + 1) / s["heads"])

        def score_mod(score, b, h, q_idx, kv_idx):
            return score + slopes[h] * (kv_idx - q_idx)

    block_mask = create_block_mask(mask_mod, None, None, l, l, device="cuda")
    opts = dict(dtype=torch.bfloat16, device="cuda")
    q = torch.randn(s["batch"], s["heads"], l, s["d"], **opts, requires_grad=True)
    k = torch.randn(s["batch"], s["kv_heads"], l, s["d"], **opts, requires_grad=True)
    v = torch.randn(s["batch"], s["kv_heads"], l, s["d"], **opts, requires_grad=True)
    do = torch.randn_like(q)
    gqa = s["kv_heads"] != s["heads"]
    forward = lambda: compiled(q, k, v, score_mod=score_mod, block_mask=block_mask,
                               enable_gqa=gqa)
    fwd_ms = triton.testing.do_bench(forward, return_mode="median")
    out = forward()
    bwd_ms = triton.testing.do_bench(lambda: out.backward(do, retain_graph=True),
                                     grad_to_none=[q, k, v], return_mode="median")
    flop = 4.0 * s["batch"] * s["heads"] * pairs(s) * s["d"]
    return dict(study="realistic", impl="flex", dtype="bf16", batch=s["batch"],
                heads=s["heads"], kv_heads=s["kv_heads"], seq=l, d=s["d"],
                window=s["window"], variant=variant, causal=int(causal), fwd_ms=fwd_ms, bwd_ms=bwd_ms,
                fwd_tflops=flop / fwd_ms / 1e9, bwd_tflops=2.5 * flop / bwd_ms / 1e9,
                status="ok")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", required=True, help="comma-separated, as tessel-bench's")
    parser.add_argument("--json", help="write the records here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("flex_attention.py: no CUDA device")
    # The backward runs many times on one forward (retain_graph), which donated buffers forbid.
    torch._functorch.config.donated_buffer = False
    compiled = torch.compile(flex_attention)
    records = []
    for text in args.shapes.split(","):
        s = parse_shape(text)
        try:
            r = run(s, compiled)
        except Exception as e:  # a row, not the end of the sweep (OOM, a compile failure)
            r = dict(study="realistic", impl="flex", **s, status=f"error: {str(e)[:100]}")
        records.append(r)
        print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                       for k, v in r.items()), flush=True)
    if args.json:
        meta = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                    date=datetime.now(timezone.utc).isoformat(), host=platform.node())
        with open(args.json, "w") as f:
            json.dump(dict(meta=meta, records=records), f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
