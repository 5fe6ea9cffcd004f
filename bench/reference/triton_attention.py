#!/usr/bin/env python3
"""Triton's FlashAttention-2 (forward and backward) at the realistic shapes of
`tessel-bench attention --study realistic`: the Triton reference for Tessel's kernels.

    python3 bench/reference/triton_attention.py --json triton-attention.json
    python3 bench/reference/plot_attention.py --json attention.json --json triton-attention.json --out a.png

The kernels follow the structure of Triton's fused-attention tutorial (06): the forward
keeps a running max and sum per query row in the exp2 domain and stores the row's
log-sum-exp; the backward recomputes the probabilities from it, one kernel for dK and dV
(a program per key block, looping over query blocks) and one for dQ (a program per query
block, looping over key blocks), after a pass computing D = rowsum(dO * O). Causal blocks
split into the blocks below the diagonal (no mask) and the diagonal ones (masked).
Sequence lengths must be multiples of 128; q, k, v are (batch, heads, seq, d), d in
16..128, bf16 or f16.

Timing as tessel-bench: the forward with autograd (inputs require grad); the backward is
out.backward(dO) on one forward (retain_graph), the inputs' .grad reset before each run
(grad_to_none); the median of triton.testing.do_bench. SDPA (PyTorch's own choice) is
timed beside it, and the errors are against SDPA. FLOPs: forward 4 B H L^2 d, halved
when causal; backward 2.5x the forward. The JSON has tessel-bench's record shape
(study, impl, dtype, batch, heads, seq, d, causal, fwd_ms, bwd_ms, fwd_tflops, bwd_tflops,
max_err, grad_max_err, status).
"""

import argparse
import json
import math
import platform
import sys
from datetime import datetime, timezone

import torch
import triton
import triton.language as tl

def fwd_configs():
    # (BLOCK_M, BLOCK_N, stages, warps); BLOCK_M % BLOCK_N == 0 for the causal split.
    shapes = [(64, 64, 3, 4), (64, 64, 4, 4), (128, 32, 4, 4), (128, 64, 3, 4),
              (128, 64, 3, 8), (128, 64, 4, 8), (128, 128, 2, 8), (128, 128, 3, 8)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_stages=s, num_warps=w)
            for m, n, s, w in shapes]


def bwd_configs(big, small):
    """`big`: the rows a program owns, `small`: the loop's step (big % small == 0)."""
    shapes = [(64, 32, 3, 4), (64, 64, 3, 4), (128, 32, 3, 4), (128, 32, 5, 4),
              (128, 64, 2, 8), (128, 64, 3, 8)]
    return [triton.Config({big: b, small: s}, num_stages=st, num_warps=w)
            for b, s, st, w in shapes]


@triton.jit
def _fwd_inner(acc, l_i, m_i, q, K, V, offs_m, lo, hi, qk_scale,
               HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    """Folds key blocks [lo, hi) into the running (acc, l_i, m_i) of one query block."""
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + offs_n[:, None] * HEAD_DIM + offs_d[None, :])
        qk = tl.dot(q, tl.trans(k)) * qk_scale  # log2 domain
        if MASK:
            qk = tl.where(offs_m[:, None] >= offs_n[None, :], qk, -1.0e6)
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + offs_n[:, None] * HEAD_DIM + offs_d[None, :])
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m_i = m_new
    return acc, l_i, m_i


@triton.autotune(configs=fwd_configs(), key=["N_CTX", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_fwd(Q, K, V, Out, M, sm_scale, N_CTX,
              HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N_CTX * HEAD_DIM
    Q, K, V, Out = Q + base, K + base, V + base, Out + base
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q = tl.load(Q + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
    m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    if CAUSAL:
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K, V, offs_m, 0, start_m, qk_scale,
                                   HEAD_DIM, BLOCK_N, False)
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K, V, offs_m, start_m, start_m + BLOCK_M,
                                   qk_scale, HEAD_DIM, BLOCK_N, True)
    else:
        acc, l_i, m_i = _fwd_inner(acc, l_i, m_i, q, K, V, offs_m, 0, N_CTX, qk_scale,
                                   HEAD_DIM, BLOCK_N, False)
    tl.store(M + bh * N_CTX + offs_m, m_i + tl.math.log2(l_i))  # log-sum-exp, log2 domain
    out = acc / l_i[:, None]
    tl.store(Out + offs_m[:, None] * HEAD_DIM + offs_d[None, :], out.to(Out.dtype.element_ty))


@triton.jit
def _bwd_preprocess(Out, DO, Delta, N_CTX, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    bh = tl.program_id(1).to(tl.int64)
    offs = bh * N_CTX * HEAD_DIM + offs_m[:, None] * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    o = tl.load(Out + offs).to(tl.float32)
    do = tl.load(DO + offs).to(tl.float32)
    tl.store(Delta + bh * N_CTX + offs_m, tl.sum(o * do, axis=1))


@triton.jit
def _dkdv_inner(dk, dv, k, v, Q, DO, M, Delta, offs_n, lo, hi, qk_scale,
                HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, MASK: tl.constexpr):
    """Adds query blocks [lo, hi) to one key block's dK and dV (transposed: keys in rows)."""
    offs_d = tl.arange(0, HEAD_DIM)
    for start_m in range(lo, hi, BLOCK_M):
        start_m = tl.multiple_of(start_m, BLOCK_M)
        offs_m = start_m + tl.arange(0, BLOCK_M)
        q = tl.load(Q + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
        m = tl.load(M + offs_m)
        p_t = tl.math.exp2(tl.dot(k, tl.trans(q)) * qk_scale - m[None, :])
        if MASK:
            p_t = tl.where(offs_m[None, :] >= offs_n[:, None], p_t, 0.0)
        do = tl.load(DO + offs_m[:, None] * HEAD_DIM + offs_d[None, :])
        dv = tl.dot(p_t.to(do.dtype), do, dv)
        dp_t = tl.dot(v, tl.trans(do))
        ds_t = p_t * (dp_t - tl.load(Delta + offs_m)[None, :])
        dk = tl.dot(ds_t.to(q.dtype), q, dk)
    return dk, dv


@triton.autotune(configs=bwd_configs("BLOCK_N", "BLOCK_M"), key=["N_CTX", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_bwd_dkdv(Q, K, V, DO, DK, DV, M, Delta, sm_scale, N_CTX,
                   HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N_CTX * HEAD_DIM
    Q, K, V, DO, DK, DV = Q + base, K + base, V + base, DO + base, DK + base, DV + base
    M, Delta = M + bh * N_CTX, Delta + bh * N_CTX
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    kv_offs = offs_n[:, None] * HEAD_DIM + offs_d[None, :]
    k, v = tl.load(K + kv_offs), tl.load(V + kv_offs)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    if CAUSAL:  # queries before start_n see none of these keys
        dk, dv = _dkdv_inner(dk, dv, k, v, Q, DO, M, Delta, offs_n, start_n, start_n + BLOCK_N,
                             qk_scale, HEAD_DIM, BLOCK_M, True)
        dk, dv = _dkdv_inner(dk, dv, k, v, Q, DO, M, Delta, offs_n, start_n + BLOCK_N, N_CTX,
                             qk_scale, HEAD_DIM, BLOCK_M, False)
    else:
        dk, dv = _dkdv_inner(dk, dv, k, v, Q, DO, M, Delta, offs_n, 0, N_CTX, qk_scale,
                             HEAD_DIM, BLOCK_M, False)
    tl.store(DK + kv_offs, (dk * sm_scale).to(DK.dtype.element_ty))
    tl.store(DV + kv_offs, dv.to(DV.dtype.element_ty))


@triton.jit
def _dq_inner(dq, q, do, m, delta, K, V, offs_m, lo, hi, qk_scale,
              HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, MASK: tl.constexpr):
    """Adds key blocks [lo, hi) to one query block's dQ."""
    offs_d = tl.arange(0, HEAD_DIM)
    for start_n in range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        offs_n = start_n + tl.arange(0, BLOCK_N)
        k = tl.load(K + offs_n[:, None] * HEAD_DIM + offs_d[None, :])
        v = tl.load(V + offs_n[:, None] * HEAD_DIM + offs_d[None, :])
        p = tl.math.exp2(tl.dot(q, tl.trans(k)) * qk_scale - m[:, None])
        if MASK:
            p = tl.where(offs_m[:, None] >= offs_n[None, :], p, 0.0)
        dp = tl.dot(do, tl.trans(v))
        ds = p * (dp - delta[:, None])
        dq = tl.dot(ds.to(k.dtype), k, dq)
    return dq


@triton.autotune(configs=bwd_configs("BLOCK_M", "BLOCK_N"), key=["N_CTX", "HEAD_DIM", "CAUSAL"])
@triton.jit
def _attn_bwd_dq(Q, K, V, DO, DQ, M, Delta, sm_scale, N_CTX,
                 HEAD_DIM: tl.constexpr, CAUSAL: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1).to(tl.int64)
    base = bh * N_CTX * HEAD_DIM
    Q, K, V, DO, DQ = Q + base, K + base, V + base, DO + base, DQ + base
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    q_offs = offs_m[:, None] * HEAD_DIM + offs_d[None, :]
    q, do = tl.load(Q + q_offs), tl.load(DO + q_offs)
    m = tl.load(M + bh * N_CTX + offs_m)
    delta = tl.load(Delta + bh * N_CTX + offs_m)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    qk_scale = sm_scale * 1.4426950408889634
    if CAUSAL:
        dq = _dq_inner(dq, q, do, m, delta, K, V, offs_m, 0, start_m, qk_scale,
                       HEAD_DIM, BLOCK_N, False)
        dq = _dq_inner(dq, q, do, m, delta, K, V, offs_m, start_m, start_m + BLOCK_M, qk_scale,
                       HEAD_DIM, BLOCK_N, True)
    else:
        dq = _dq_inner(dq, q, do, m, delta, K, V, offs_m, 0, N_CTX, qk_scale,
                       HEAD_DIM, BLOCK_N, False)
    tl.store(DQ + q_offs, (dq * sm_scale).to(DQ.dtype.element_ty))


class TritonAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, sm_scale):
        q, k, v = (t.contiguous() for t in (q, k, v))
        batch, heads, n_ctx, d = q.shape
        assert n_ctx % 128 == 0 and d in (16, 32, 64, 128), "seq % 128 == 0, d in 16..128"
        out = torch.empty_like(q)
        m = torch.empty((batch * heads, n_ctx), device=q.device, dtype=torch.float32)
        grid = lambda meta: (triton.cdiv(n_ctx, meta["BLOCK_M"]), batch * heads)
        _attn_fwd[grid](q, k, v, out, m, sm_scale, n_ctx, HEAD_DIM=d, CAUSAL=causal)
        ctx.save_for_backward(q, k, v, out, m)
        ctx.causal, ctx.sm_scale = causal, sm_scale
        return out

    @staticmethod
    def backward(ctx, do):
        q, k, v, out, m = ctx.saved_tensors
        do = do.contiguous()
        batch, heads, n_ctx, d = q.shape
        delta = torch.empty_like(m)
        _bwd_preprocess[(n_ctx // 128, batch * heads)](out, do, delta, n_ctx, HEAD_DIM=d,
                                                       BLOCK_M=128)
        dq, dk, dv = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
        args = dict(HEAD_DIM=d, CAUSAL=ctx.causal)
        _attn_bwd_dkdv[lambda meta: (triton.cdiv(n_ctx, meta["BLOCK_N"]), batch * heads)](
            q, k, v, do, dk, dv, m, delta, ctx.sm_scale, n_ctx, **args)
        _attn_bwd_dq[lambda meta: (triton.cdiv(n_ctx, meta["BLOCK_M"]), batch * heads)](
            q, k, v, do, dq, m, delta, ctx.sm_scale, n_ctx, **args)
        return dq, dk, dv, None, None


def triton_attention(q, k, v, causal):
    return TritonAttention.apply(q, k, v, causal, 1.0 / math.sqrt(q.shape[-1]))


def sdpa(q, k, v, causal):
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)


def measure(fn, q, k, v, do, causal, samples):
    """(fwd ms, bwd ms, output, grads) as tessel-bench measures them."""
    inputs = [q, k, v]
    bench = lambda f: triton.testing.do_bench(f, rep=samples * 10, grad_to_none=inputs,
                                              return_mode="median")
    fwd_ms = bench(lambda: fn(q, k, v, causal))
    out = fn(q, k, v, causal)
    bwd_ms = bench(lambda: out.backward(do, retain_graph=True))
    for t in inputs:
        t.grad = None
    out.backward(do, retain_graph=True)
    grads = [t.grad.clone() for t in inputs]
    for t in inputs:
        t.grad = None
    return fwd_ms, bwd_ms, out.detach(), grads


def max_err(a, b):
    return (a.float() - b.float()).abs().max().item()


def run_shape(batch, heads, seq, d, causal, dtype, samples):
    shape = (batch, heads, seq, d)
    q, k, v = (torch.randn(shape, device="cuda", dtype=dtype, requires_grad=True)
               for _ in range(3))
    do = torch.randn(shape, device="cuda", dtype=dtype)
    flop = 4.0 * batch * heads * seq * seq * d / (2 if causal else 1)
    measured = {name: measure(fn, q, k, v, do, causal, samples)
                for name, fn in (("sdpa", sdpa), ("triton", triton_attention))}
    _, _, ref_out, ref_grads = measured["sdpa"]
    rows = []
    for name, (fwd_ms, bwd_ms, out, grads) in measured.items():
        rows.append({"study": "realistic", "impl": name,
                     "dtype": {torch.bfloat16: "bf16", torch.float16: "f16"}[dtype],
                     "batch": batch, "heads": heads, "seq": seq, "d": d, "causal": int(causal),
                     "fwd_ms": fwd_ms, "bwd_ms": bwd_ms,
                     "fwd_tflops": flop / (fwd_ms * 1e-3) / 1e12,
                     "bwd_tflops": 2.5 * flop / (bwd_ms * 1e-3) / 1e12,
                     "error_vs": "sdpa", "max_err": max_err(out, ref_out),
                     "grad_max_err": max(max_err(g, r) for g, r in zip(grads, ref_grads)),
                     "status": "ok"})
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", default="4x16x4096x64,2x16x8192x128",
                        help="BxHxLxd, comma list")
    parser.add_argument("--causal", default="1,0", help="1 (causal), 0 (full); comma list")
    parser.add_argument("--dtype", default="bf16", choices=("bf16", "f16"))
    parser.add_argument("--samples", type=int, default=20,
                        help="do_bench runs for rep = 10 ms per sample; the median is reported")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("triton_attention.py: no CUDA GPU visible (torch.cuda.is_available() is False)")
    torch.manual_seed(0)
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    results = []
    print(f"{'impl':7} {'B':>2} {'H':>3} {'L':>6} {'d':>4} {'causal':>6} {'fwd ms':>8} "
          f"{'bwd ms':>8} {'fwd TFLOP/s':>12} {'bwd TFLOP/s':>12} {'max err':>9} {'grad err':>9}")
    for shape in args.shapes.split(","):
        batch, heads, seq, d = (int(x) for x in shape.split("x"))
        for causal in (c == "1" for c in args.causal.split(",")):
            for r in run_shape(batch, heads, seq, d, causal, dtype, args.samples):
                results.append(r)
                print(f"{r['impl']:7} {batch:2} {heads:3} {seq:6} {d:4} {causal!s:>6} "
                      f"{r['fwd_ms']:8.3f} {r['bwd_ms']:8.3f} {r['fwd_tflops']:12.1f} "
                      f"{r['bwd_tflops']:12.1f} {r['max_err']:9.2e} {r['grad_max_err']:9.2e}",
                      flush=True)
    if args.json:
        meta = {"tool": "triton_attention.py", "device": torch.cuda.get_device_name(),
                "date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "triton": triton.__version__, "torch_version": torch.__version__,
                "host": platform.node()}
        with open(args.json, "w") as f:
            json.dump({**meta, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
