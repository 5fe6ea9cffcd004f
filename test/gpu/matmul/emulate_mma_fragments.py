#!/usr/bin/env python3
# Host-side model of lowering/DotToLLVM.cpp's mma.sync path: per lane, the ldmatrix row
# addresses and fragment pairing the lowering emits, the PTX ISA fragment layouts of
# ldmatrix(.trans) and mma.sync m16n8k16 / m16n8k8 (tf32), and the accumulator layout of
# lowering/MmaLayout.h, checked against A @ B for several tile shapes and warp splits.
# Needs PyTorch (CPU). Run: python3 test/gpu/matmul/emulate_mma_fragments.py
import torch, itertools
def layout_regs(M, N, wm, wn):
    regsM, regsN = M // (8 * wm), (N // (8 * wn)) * 2
    return regsM, regsN
def coord(mi, ni, lane, warp, M, N, wm, wn):
    warpN, warpM = warp % wn, (warp // wn) % wm
    m = mi * 8 * wm + warpM * 8 + lane // 4
    n = (ni // 2) * 8 * wn + warpN * 8 + (lane % 4) * 2 + ni % 2
    return m, n
def ldmatrix(mem_rows, trans):
    # mem_rows[j][r] = 8 elements (row r of matrix j). Returns regs[lane][j] = 2 elements.
    out = [[None] * len(mem_rows) for _ in range(32)]
    for j, mat in enumerate(mem_rows):
        for lane in range(32):
            if not trans:
                r, c = lane // 4, 2 * (lane % 4)
                out[lane][j] = torch.tensor([mat[r][c], mat[r][c + 1]], dtype=torch.float64)
            else:
                r, c = 2 * (lane % 4), lane // 4
                out[lane][j] = torch.tensor([mat[r][c], mat[r + 1][c]], dtype=torch.float64)
    return out
def run(M, N, K, wm, wn, tf32=False):
    A = torch.randn(M, K, dtype=torch.float64); B = torch.randn(K, N, dtype=torch.float64)
    regsM, regsN = layout_regs(M, N, wm, wn)
    pairsM, blocksN = regsM // 2, regsN // 2
    C = torch.full((M, N), float("nan"), dtype=torch.float64)
    kstep = 8 if tf32 else 16
    for warp in range(wm * wn):
        warpN, warpM = warp % wn, (warp // wn) % wm
        acc = torch.zeros((32, regsM * regsN), dtype=torch.float64)
        reg = lambda mi, ni: mi * regsN + ni
        for kk in range(0, K, kstep):
            afr = []
            for p in range(pairsM):
                # lane l gives row address of matrix l//8, row l%8
                mats = [[None] * 8 for _ in range(4)]
                for l in range(32):
                    r8, mat01, mat1 = l & 7, (l >> 3) & 1, (l >> 4) & 1
                    row = warpM * 8 + r8 + mat01 * 8 * wm + p * 16 * wm
                    col = mat1 * (kstep // 2) + kk
                    if tf32:  # 8 b16 = 4 f32: represent as pairs (x, x) per b32
                        mats[l // 8][l % 8] = [v for x in A[row, col:col + 4] for v in (x, x)]
                    else:
                        mats[l // 8][l % 8] = A[row, col:col + 8].tolist()
                afr.append(ldmatrix(mats, False))
            bfr = [None] * blocksN
            for q in range(blocksN):
                if tf32:
                    bfr[q] = [[None, None] for _ in range(32)]
                    for l in range(32):
                        row, col = l & 3, warpN * 8 + ((l >> 2) & 7)
                        for half in range(2):
                            bfr[q][l][half] = B[kk + 4 * half + row, q * 8 * wn + col]
            if not tf32:
                pairs = blocksN >= 2
                for q in range(0, blocksN, 2 if pairs else 1):
                    mats = [[None] * 8 for _ in range(4 if pairs else 2)]
                    for l in range(32):
                        r8, mat01, mat1 = l & 7, (l >> 3) & 1, (l >> 4) & 1
                        if not pairs and l >= 16: continue
                        row = mat01 * 8 + r8 + kk
                        col = warpN * 8 + (mat1 * 8 * wn if pairs else 0) + q * 8 * wn
                        mats[l // 8][l % 8] = B[row, col:col + 8].tolist()
                    regs = ldmatrix(mats, True)
                    for l in range(32):
                        if bfr[q] is None: bfr[q] = [None] * 32
                        bfr[q][l] = regs[l][0:2]
                        if pairs:
                            if bfr[q + 1] is None: bfr[q + 1] = [None] * 32
                            bfr[q + 1][l] = regs[l][2:4]
            for p in range(pairsM):
                for q in range(blocksN):
                    # PTX fragments -> logical 16xk A, kx8 B per lane
                    Am = torch.zeros((16, kstep), dtype=torch.float64); Bm = torch.zeros((kstep, 8), dtype=torch.float64)
                    for l in range(32):
                        g, t = l // 4, l % 4
                        a = afr[p][l]
                        if tf32:
                            Am[g, t] = a[0][0]; Am[g + 8, t] = a[1][0]; Am[g, t + 4] = a[2][0]; Am[g + 8, t + 4] = a[3][0]
                            Bm[t, g] = bfr[q][l][0]; Bm[t + 4, g] = bfr[q][l][1]
                        else:
                            Am[g, 2*t:2*t+2] = a[0]; Am[g + 8, 2*t:2*t+2] = a[1]
                            Am[g, 2*t+8:2*t+10] = a[2]; Am[g + 8, 2*t+8:2*t+10] = a[3]
                            Bm[2*t:2*t+2, g] = bfr[q][l][0]; Bm[2*t+8:2*t+10, g] = bfr[q][l][1]
                    D = Am @ Bm
                    for l in range(32):
                        g, t = l // 4, l % 4
                        acc[l, reg(2*p, 2*q)] += D[g, 2*t]; acc[l, reg(2*p, 2*q+1)] += D[g, 2*t+1]
                        acc[l, reg(2*p+1, 2*q)] += D[g+8, 2*t]; acc[l, reg(2*p+1, 2*q+1)] += D[g+8, 2*t+1]
        for l in range(32):
            for mi in range(regsM):
                for ni in range(regsN):
                    m, n = coord(mi, ni, l, warp, M, N, wm, wn)
                    assert bool(torch.isnan(C[m, n])), ("written twice", m, n)
                    C[m, n] = acc[l, reg(mi, ni)]
    err = float((C - A @ B).abs().max())
    print(M, N, K, wm, wn, "tf32" if tf32 else "b16", "max err", err)
    assert err < 1e-9
for args in [(32,32,32,2,2),(128,128,32,2,2),(128,128,64,4,2),(64,128,32,2,2),(16,8,16,1,1),(32,16,16,1,2),(256,128,32,4,2)]:
    run(*args); run(*args, tf32=True)
