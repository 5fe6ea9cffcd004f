#!/usr/bin/env python3
# kernels/matmul.tsl in the CPU interpreter (tools/tessel-interpret) on ragged shapes, every
# configuration, exact f32, bf16 and the ReLU epilogue, against a float64 reference (PyTorch
# on the CPU). Checks the kernel's source logic (grouped order, masks, the K loop,
# the epilogue); not the GPU lowering of dot, which the interpreter does not run.
#   python3 test/gpu/matmul/interpret_matmul.py [BUILD_DIR]      (default: build)
import os, struct, subprocess, sys
import torch
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
TI = os.path.join(BUILD, "bin", "tessel-interpret")
def read_npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    body = data[10 + hlen:]
    descr = header.split("'descr': '")[1].split("'")[0]
    shape = tuple(int(x) for x in header.split("'shape': (")[1].split(")")[0].split(",") if x.strip())
    if descr == "<f4":
        t = torch.frombuffer(bytearray(body), dtype=torch.float32)
    elif descr == "<f2":
        t = torch.frombuffer(bytearray(body), dtype=torch.float16)
    else:
        t = torch.frombuffer(bytearray(body), dtype=torch.int16).view(torch.bfloat16) if descr in ("<u2", "<i2", "<V2") else None
    return t.reshape(shape).to(torch.float64)
# BLOCK_M x BLOCK_N of each configuration, in the order of kernels/matmul.tsl.
BLOCKS = [(128,128),(128,128),(128,128),(128,128),(128,256),(128,256),(256,128),(64,128),(64,64),(32,32)]
def check(M, N, K, dtype, config, extra=(), bound=1e-5):
    pad = 3
    lda, ldb, ldc = K + pad, N + pad, N + 1
    bm, bn = BLOCKS[config]
    grid = -(-M // bm) * -(-N // bn)
    cmd = [TI, os.path.join(ROOT, "kernels", "matmul.tsl"), "-D", f"T={dtype}", "--config", str(config), "-q",
           "--grid", str(grid), f"c=full:{M}x{ldc}:nan" if dtype == "f32" else f"c=zeros:{M}x{ldc}",
           f"a=randn:{M}x{lda}", f"b=randn:{K}x{ldb}",
           f"M={M}", f"N={N}", f"K={K}", f"stride_a={lda}", f"stride_b={ldb}", f"stride_c={ldc}",
           "-o", "c=/tmp/ic.npy", "-o", "a=/tmp/ia.npy", "-o", "b=/tmp/ib.npy", *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        print("FAIL run", r.stderr[-800:]); return False
    c, a, b = read_npy("/tmp/ic.npy"), read_npy("/tmp/ia.npy"), read_npy("/tmp/ib.npy")
    ref = a[:, :K] @ b[:K, :N]
    if "RELU=True" in extra: ref = ref.clamp(min=0)
    out = c[:, :N]
    err = float((out - ref).norm() / ref.norm())
    ok = err <= bound  # NaN fails
    print(f"{'ok ' if ok else 'BAD'} {dtype} config {config} {M}x{N}x{K} {' '.join(extra)}: rel err {err:.2e}")
    return ok
ok = True
for cfg in range(10):
    ok &= check(100, 100, 100, "f32", cfg, ("-D", "IEEE=True"))
ok &= check(1, 17, 1, "f32", 9, ("-D", "IEEE=True"))
ok &= check(257, 129, 96, "f32", 2, ("-D", "IEEE=True"))
ok &= check(70, 300, 33, "bf16", 7, (), 1e-2)
ok &= check(70, 300, 33, "bf16", 8, ("-D", "RELU=True"), 1e-2)
print("ALL OK" if ok else "FAILURES")
sys.exit(0 if ok else 1)
