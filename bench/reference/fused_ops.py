#!/usr/bin/env python3
"""torch.compile and plain Triton kernels on the cases of `tessel-bench fused`.

Same sizes and dtypes as bench/kernels/FusedBench.cpp and the same timing: the L2 cache
cleared (a 256 MB buffer zeroed) before each run, CUDA events around the run alone, the
median of the samples; GB/s over the bytes a perfect kernel moves. Forward (under
no_grad) and backward (torch.autograd.grad on a kept graph) as the C++ side does. The
Triton kernels are forward-only, written the plain way (one program per row or block).

    python3 bench/reference/fused_ops.py --json fused-ref.json
"""

import argparse
import json
import math
import statistics
import sys

import torch
import torch._functorch.config
import torch.nn.functional as F

# The backward is timed repeatedly on one kept graph (retain_graph), which compiled
# backwards with donated buffers refuse.
torch._functorch.config.donated_buffer = False

try:
    import triton
    import triton.language as tl
except ImportError:  # the table then has no Triton column
    triton = None

FLUSH = None


def time_ms(fn, warmup, samples):
    global FLUSH
    if FLUSH is None:
        FLUSH = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(samples):
        FLUSH.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def rmsnorm(x, w):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * w).to(x.dtype)


def swiglu(h):
    a, b = h.chunk(2, dim=-1)
    return F.silu(a) * b


def make_rope(d_head, seq, heads):
    inv = torch.pow(10000.0, -torch.arange(0, d_head, 2, dtype=torch.float64, device="cuda") / d_head)
    ang = torch.outer(torch.arange(seq, dtype=torch.float64, device="cuda"), inv)
    cos, sin = ang.cos().float(), ang.sin().float()

    def rope(qkv):
        b, s, width = qkv.shape
        d = width // 3
        qk = qkv[..., : 2 * d].view(b, s, 2, heads, d_head).permute(2, 0, 3, 1, 4)
        pairs = qk.unflatten(-1, (d_head // 2, 2))
        x0, x1 = pairs[..., 0], pairs[..., 1]
        c, sn = cos[:s], sin[:s]
        out = torch.stack((x0 * c - x1 * sn, x0 * sn + x1 * c), -1).flatten(-2).to(qkv.dtype)
        v = qkv[..., 2 * d:].view(b, s, heads, d_head).transpose(1, 2)
        return out[0], out[1], v

    return rope, cos, sin


def cross_entropy(logits, targets):
    return F.cross_entropy(logits.float(), targets)


if triton is not None:
    @triton.jit
    def rmsnorm_kernel(y, x, w, n, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.arange(0, BLOCK)
        mask = cols < n
        xv = tl.load(x + row * n + cols, mask=mask, other=0).to(tl.float32)
        r = tl.rsqrt(tl.sum(xv * xv, 0) / n + eps)
        wv = tl.load(w + cols, mask=mask, other=0)
        tl.store(y + row * n + cols, (xv * r * wv).to(y.dtype.element_ty), mask=mask)

    @triton.jit
    def swiglu_kernel(out, h, dff, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
        mask = cols < dff
        a = tl.load(h + row * 2 * dff + cols, mask=mask, other=0).to(tl.float32)
        b = tl.load(h + row * 2 * dff + dff + cols, mask=mask, other=0).to(tl.float32)
        tl.store(out + row * dff + cols, (a * tl.sigmoid(a) * b).to(out.dtype.element_ty), mask=mask)

    @triton.jit
    def ce_kernel(loss, logits, targets, n, BLOCK: tl.constexpr):
        row = tl.program_id(0).to(tl.int64)
        base = logits + row * n
        cols = tl.arange(0, BLOCK)
        m = tl.full([BLOCK], float("-inf"), tl.float32)
        s = tl.zeros([BLOCK], tl.float32)
        for c0 in range(0, n, BLOCK):
            x = tl.load(base + c0 + cols, mask=c0 + cols < n, other=float("-inf")).to(tl.float32)
            m_new = tl.maximum(m, x)
            s = tl.where(m_new == float("-inf"), 0.0, s * tl.exp(m - m_new) + tl.exp(x - m_new))
            m = m_new
        mx = tl.max(m, 0)
        lse = mx + tl.log(tl.sum(tl.where(m == float("-inf"), 0.0, s * tl.exp(m - mx)), 0))
        t = tl.load(targets + row)
        tl.store(loss + row, lse - tl.load(base + t).to(tl.float32))

    @triton.jit
    def rope_kernel(q, k, v, qkv, cos, sin, seq, heads, half, BLOCK: tl.constexpr):
        token = tl.program_id(0)
        b = token // seq
        s = token - b * seq
        j = tl.arange(0, BLOCK)
        mask = j < heads * half
        h = j // half
        i = j - h * half
        c = tl.load(cos + s * half + i, mask=mask, other=0)
        sn = tl.load(sin + s * half + i, mask=mask, other=0)
        width = heads * 2 * half
        row = qkv + token.to(tl.int64) * 3 * width
        dst = ((b.to(tl.int64) * heads + h) * seq + s) * (2 * half) + 2 * i
        for part in tl.static_range(3):
            x0 = tl.load(row + part * width + 2 * j, mask=mask, other=0).to(tl.float32)
            x1 = tl.load(row + part * width + 2 * j + 1, mask=mask, other=0).to(tl.float32)
            out = q if part == 0 else (k if part == 1 else v)
            if part < 2:
                r0, r1 = x0 * c - x1 * sn, x0 * sn + x1 * c
            else:
                r0, r1 = x0, x1
            tl.store(out + dst, r0.to(out.dtype.element_ty), mask=mask)
            tl.store(out + dst + 1, r1.to(out.dtype.element_ty), mask=mask)


def pow2(n):
    return 1 << (n - 1).bit_length()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--samples", type=int, default=50)
    p.add_argument("--only", default="", help="comma list: rmsnorm, add_rmsnorm, swiglu, rope, cross_entropy")
    p.add_argument("--json", default="")
    args = p.parse_args(argv)
    if not torch.cuda.is_available():
        print("fused_ops.py: needs a CUDA GPU", file=sys.stderr)
        return 1
    only = set(filter(None, args.only.split(",")))
    want = lambda op: not only or op in only
    dev, bf16 = "cuda", torch.bfloat16
    n_tok = args.tokens
    records = []

    def run(op, shape, nbytes, inputs, eager_fn, triton_fn=None, bwd_bytes=None):
        compiled = torch.compile(eager_fn)
        rec = {"op": op + " fwd", "shape": shape, "bytes": nbytes}
        with torch.no_grad():
            ref = eager_fn(*inputs)
            got = compiled(*inputs)
            rec["compile_ms"] = time_ms(lambda: compiled(*inputs), args.warmup, args.samples)
            rec["compile_max_abs_diff"] = max_diff(got, ref)
            if triton_fn is not None:
                try:
                    out = triton_fn(*inputs)
                    rec["triton_max_abs_diff"] = max_diff(out, ref)
                    rec["triton_ms"] = time_ms(lambda: triton_fn(*inputs), args.warmup, args.samples)
                except Exception as e:  # recorded, not hidden: the table shows no number
                    rec["triton_error"] = str(e).splitlines()[0][:200]
        for side in ("compile", "triton"):
            if side + "_ms" in rec:
                rec[side + "_gbps"] = nbytes / (rec[side + "_ms"] * 1e-3) / 1e9
        records.append(rec)
        print(rec, file=sys.stderr)
        if bwd_bytes is None:
            return
        leaves = [t.detach().requires_grad_(t.is_floating_point()) for t in inputs]
        wrt = [t for t in leaves if t.requires_grad]
        y = compiled(*leaves)
        ys = list(y) if isinstance(y, tuple) else [y]
        dys = [torch.randn_like(t) for t in ys]
        ms = time_ms(lambda: torch.autograd.grad(ys, wrt, dys, retain_graph=True), args.warmup,
                     args.samples)
        rec = {"op": op + " bwd", "shape": shape, "bytes": bwd_bytes, "compile_ms": ms,
               "compile_gbps": bwd_bytes / (ms * 1e-3) / 1e9}
        records.append(rec)
        print(rec, file=sys.stderr)

    def max_diff(a, b):
        a = a if isinstance(a, tuple) else (a,)
        b = b if isinstance(b, tuple) else (b,)
        return max((x.float() - y.float()).abs().max().item() for x, y in zip(a, b))

    if want("rmsnorm"):
        for dtype in (bf16, torch.float32):
            n = 4096
            x = torch.randn(n_tok, n, dtype=dtype, device=dev)
            w = torch.randn(n, device=dev)
            e = x.element_size() * n_tok * n

            def tri(x, w):
                y = torch.empty_like(x)
                rmsnorm_kernel[(x.shape[0],)](y, x, w, n, 1e-5, BLOCK=pow2(n), num_warps=8)
                return y
            run("rmsnorm " + ("bf16" if dtype == bf16 else "f32"), f"{n_tok}x{n}", 2 * e, [x, w],
                rmsnorm, tri if triton else None, 3 * e)
    if want("add_rmsnorm"):
        # Autocast's residual stream: x f32 + delta bf16 -> (h f32, rmsnorm(h) in bf16, the
        # next linear's input: the cast autocast does, fused by the compiler).
        n = 4096
        x = torch.randn(n_tok, n, device=dev)
        delta = torch.randn(n_tok, n, dtype=bf16, device=dev)
        w = torch.randn(n, device=dev)

        def add_rmsnorm(x, delta, w):
            h = x + delta
            return h, rmsnorm(h, w).to(bf16)
        run("add_rmsnorm f32+bf16", f"{n_tok}x{n}", 12 * n_tok * n, [x, delta, w], add_rmsnorm,
            None, 16 * n_tok * n)
    if want("swiglu"):
        dff = 8192
        h = torch.randn(n_tok, 2 * dff, dtype=bf16, device=dev)
        e = 2 * n_tok * dff

        def tri(h):
            out = torch.empty(h.shape[0], dff, dtype=h.dtype, device=dev)
            swiglu_kernel[(h.shape[0], triton.cdiv(dff, 1024))](out, h, dff, BLOCK=1024, num_warps=4)
            return out
        run("swiglu", f"{n_tok}x{dff}", 3 * e, [h], swiglu, tri if triton else None, 5 * e)
    if want("rope"):
        heads, d_head, seq = 25, 64, 512
        batch, d = n_tok // seq, heads * d_head
        rope, cos, sin = make_rope(d_head, seq, heads)
        qkv = torch.randn(batch, seq, 3 * d, dtype=bf16, device=dev)
        e = 2 * batch * seq * 3 * d

        def tri(qkv):
            q = torch.empty(batch, heads, seq, d_head, dtype=bf16, device=dev)
            k, v = torch.empty_like(q), torch.empty_like(q)
            rope_kernel[(batch * seq,)](q, k, v, qkv, cos, sin, seq, heads, d_head // 2,
                                        BLOCK=pow2(heads * d_head // 2), num_warps=4)
            return q, k, v
        run("rope", f"{batch}x{seq}x{3 * d}", 2 * e, [qkv], rope, tri if triton else None, 2 * e)
    if want("cross_entropy"):
        for vocab in (10000, 50257):
            logits = torch.randn(n_tok, vocab, dtype=bf16, device=dev) * 3
            targets = torch.randint(vocab, (n_tok,), device=dev)
            e = 2 * n_tok * vocab

            def tri(logits, targets):
                loss = torch.empty(logits.shape[0], device=dev)
                ce_kernel[(logits.shape[0],)](loss, logits, targets, vocab, BLOCK=4096, num_warps=8)
                return loss.mean()
            run("cross_entropy", f"{n_tok}x{vocab}", e, [logits, targets], cross_entropy,
                tri if triton else None, 2 * e)
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "triton": triton.__version__ if triton else None, "samples": args.samples,
            "timing": "CUDA events per run, L2 cleared before each (256 MB zeroed), median"}
    print(f"{'op':24} {'shape':18} {'compile GB/s':>12} {'triton GB/s':>12}")
    for r in records:
        print(f"{r['op']:24} {r['shape']:18} {r.get('compile_gbps', float('nan')):12.0f} "
              f"{r.get('triton_gbps', float('nan')):12.0f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "records": records}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
