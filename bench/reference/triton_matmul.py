#!/usr/bin/env python3
"""Triton's matmul next to cuBLAS (torch.matmul), in one process: the reference for
Tessel's matmul benchmark (`tessel-bench matmul`).

    python3 bench/reference/triton_matmul.py --dtype f32,bf16 --json triton.json
    DISABLE_MMA_V3=1 python3 bench/reference/triton_matmul.py ...   # mma.sync on Hopper

The kernel is Triton's matmul tutorial (grouped launch order, autotuned over its CUDA
configurations). f32 operands run through tf32 tensor cores (Triton's default
input_precision), as torch.matmul does with allow_tf32. With DISABLE_MMA_V3=1, Triton
(3.x) lowers dot to mma.sync instead of wgmma on sm_90: the path Tessel's `matmul_f32`
and `matmul_bf16` packages take. The script reads the PTX of the configuration the
autotuner chose and reports which instructions it holds, so a run says which path it
measured. Timings: the median of `--samples` runs of triton.testing.do_bench.
"""

import argparse
import json
import os
import platform
import sys
from datetime import datetime, timezone

import torch
import triton
import triton.language as tl


def configs():
    # The tutorial's CUDA list (python/tutorials/03-matrix-multiplication.py), plus the
    # tf32-sized ones (BLOCK_K 32) Tessel's f32 package tries.
    shapes = [(128, 256, 64, 3, 8), (64, 256, 32, 4, 4), (128, 128, 32, 4, 4),
              (128, 64, 32, 4, 4), (64, 128, 32, 4, 4), (128, 32, 32, 4, 4),
              (64, 32, 32, 5, 2), (32, 64, 32, 5, 2), (128, 128, 64, 3, 4),
              (128, 128, 32, 2, 4), (128, 128, 32, 3, 4), (128, 256, 32, 3, 8),
              (256, 128, 32, 3, 8)]
    return [triton.Config({"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "GROUP_M": 8},
                          num_stages=s, num_warps=w) for m, n, k, s, w in shapes]


@triton.autotune(configs=configs(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn,
                  stride_cm, stride_cn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    offs_bn = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_K, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    c = acc.to(c_ptr.dtype.element_ty)
    offs_cm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_cn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    tl.store(c_ptrs, c, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))


def kernel_args(a, b):
    """The output and the kernel's arguments for C = A B."""
    (M, K), N = a.shape, b.shape[1]
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    return c, (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
               c.stride(0), c.stride(1))


def grid_of(M, N, meta):
    return (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]),)


def matmul(a, b):
    c, args = kernel_args(a, b)
    matmul_kernel[lambda meta: grid_of(a.shape[0], b.shape[1], meta)](*args)
    return c


def chosen_kernel_facts(a, b):
    """The autotuner's choice for this key and what its PTX holds: the jit function run
    once more with that configuration returns the compiled kernel (from its cache)."""
    best = matmul_kernel.best_config
    _, args = kernel_args(a, b)
    grid = grid_of(a.shape[0], b.shape[1], best.kwargs)
    kernel = matmul_kernel.fn[grid](*args, **best.kwargs, num_warps=best.num_warps,
                                    num_stages=best.num_stages)
    ptx = kernel.asm.get("ptx", "")
    return {"config": {**best.kwargs, "num_warps": best.num_warps,
                       "num_stages": best.num_stages},
            "ptx_has_wgmma": "wgmma.mma_async" in ptx, "ptx_has_mma_sync": "mma.sync" in ptx,
            "registers": getattr(kernel, "n_regs", None), "spills": getattr(kernel, "n_spills", None)}


def relative_error(out, ref):
    return ((out.double() - ref).norm() / ref.norm()).item()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", default="f32,bf16", help="f32 (tf32), bf16, f16; comma list")
    parser.add_argument("--sizes", default="4096x4096x4096,8192x8192x8192,16384x1024x4096",
                        help="MxNxK, comma list")
    parser.add_argument("--samples", type=int, default=20,
                        help="do_bench repetitions; the median is reported")
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("triton_matmul.py: no CUDA GPU visible (torch.cuda.is_available() is False)")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    mma_v3_disabled = os.environ.get("DISABLE_MMA_V3", "") not in ("", "0")
    results = []
    for name in args.dtype.split(","):
        dtype = dtypes[name]
        for size in args.sizes.split(","):
            m, n, k = (int(x) for x in size.split("x"))
            a = torch.randn(m, k, device="cuda", dtype=dtype)
            b = torch.randn(k, n, device="cuda", dtype=dtype)
            out = matmul(a, b)  # autotunes for this key
            facts = chosen_kernel_facts(a, b)
            ref = a.double() @ b.double()
            err_triton, err_torch = relative_error(out, ref), relative_error(a @ b, ref)
            del ref
            flops = 2.0 * m * n * k

            def tflops(fn):
                ms = triton.testing.do_bench(fn, rep=args.samples * 10, return_mode="median")
                return flops / (ms * 1e-3) / 1e12

            # Interleaved so clocks and heat treat both alike.
            t_triton, t_torch = [], []
            for _ in range(3):
                t_triton.append(tflops(lambda: matmul(a, b)))
                t_torch.append(tflops(lambda: a @ b))
            row = {"dtype": name, "M": m, "N": n, "K": k,
                   "triton_tflops": sorted(t_triton)[1], "torch_tflops": sorted(t_torch)[1],
                   "triton_rel_error": err_triton, "torch_rel_error": err_torch,
                   "disable_mma_v3": mma_v3_disabled, **facts}
            row["ratio"] = row["triton_tflops"] / row["torch_tflops"]
            results.append(row)
            path = "mma.sync" if facts["ptx_has_mma_sync"] else (
                "wgmma" if facts["ptx_has_wgmma"] else "?")
            print(f"{name:5} {m:6}x{n:5}x{k:5}  triton {row['triton_tflops']:7.1f}  "
                  f"torch {row['torch_tflops']:7.1f}  ratio {row['ratio']:.3f}  "
                  f"path {path:8}  err {err_triton:.2e}/{err_torch:.2e}  {facts['config']}",
                  flush=True)
    if args.json:
        meta = {"device": torch.cuda.get_device_name(), "date": datetime.now(timezone.utc)
                .strftime("%Y-%m-%dT%H:%M:%SZ"), "triton": triton.__version__,
                "torch": torch.__version__, "host": platform.node()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
