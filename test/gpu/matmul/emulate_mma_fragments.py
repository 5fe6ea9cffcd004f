#!/usr/bin/env python3
# Host-side model of lowering/DotToLLVM.cpp's mma.sync path: per lane, the ldmatrix row
# addresses and fragment pairing the lowering emits, the PTX ISA fragment layouts of
# ldmatrix(.trans) and mma.sync m16n8k16 / m16n8k8 (tf32), and the accumulator layout of
# lowering/MmaLayout.h, checked against A @ B for several tile shapes and warp splits.
# `wide`: MmaLayout.h's wide tf32 layout (8 adjacent columns per lane; instruction j of a
# 32-column piece computes columns 4c + j), its B fragments by 16-byte loads from the
# interleaved, 128-byte-swizzled buffer the bulk copies write (address decoded back to the
# element, and every quarter warp's 16-byte loads checked to hit 32 distinct banks).
# Needs PyTorch (CPU). Run: python3 test/gpu/matmul/emulate_mma_fragments.py
import torch, itertools
def layout_regs(M, N, wm, wn):
    regsM, regsN = M // (8 * wm), (N // (8 * wn)) * 2
    return regsM, regsN
def coord(mi, ni, lane, warp, M, N, wm, wn, wide=False):
    warpN, warpM = warp % wn, (warp // wn) % wm
    m = mi * 8 * wm + warpM * 8 + lane // 4
    if wide:  # sizePerThread [1, 8]
        return m, (ni // 8) * 32 * wn + warpN * 32 + (lane % 4) * 8 + ni % 8
    n = (ni // 2) * 8 * wn + warpN * 8 + (lane % 4) * 2 + ni % 2
    return m, n
def interleaved_swizzled_offset(k, n, K):
    # Byte offset of B[k][n] (f32) in the buffer: 128-byte column blocks of K rows, each
    # group of 8 rows stored 0 4 1 5 2 6 3 7, 16-byte chunk c of row r at c ^ (r % 8).
    pos = (k // 8) * 8 + 2 * (k % 4) + (k % 8) // 4
    return (n // 32) * K * 128 + pos * 128 + (((n % 32) // 4) ^ (pos % 8)) * 16 + (n % 4) * 4
def wide_b_address(lane, warpN, wn, piece, half, kk, K):
    # DotToLLVM.cpp's bAddressWide, interleaved: the lane's 16 bytes.
    p = piece * wn + warpN
    k8 = 2 * (lane & 3) + half
    return p * K * 128 + k8 * 128 + (((lane >> 2) & 7) ^ k8) * 16 + kk * 128
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
def run(M, N, K, wm, wn, tf32=False, wide=False):
    A = torch.randn(M, K, dtype=torch.float64); B = torch.randn(K, N, dtype=torch.float64)
    regsM, regsN = layout_regs(M, N, wm, wn)
    if wide:
        where = {interleaved_swizzled_offset(k, n, K): (k, n) for k in range(K) for n in range(N)}
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
            if wide:
                for piece in range(blocksN // 4):
                    for half in range(2):
                        addrs = [wide_b_address(l, warpN, wn, piece, half, kk, K) for l in range(32)]
                        for quarter in range(4):
                            banks = {(addrs[l] // 4 + w) % 32 for l in range(8 * quarter, 8 * quarter + 8) for w in range(4)}
                            assert len(banks) == 32, ("bank conflict", piece, half, quarter)
                        for l in range(32):
                            assert addrs[l] % 16 == 0
                            for j in range(4):
                                k, n = where[addrs[l] + 4 * j]
                                assert (k, n) == (kk + 4 * half + (l & 3), 32 * (piece * wn + warpN) + 4 * ((l >> 2) & 7) + j)
                                if bfr[4 * piece + j] is None: bfr[4 * piece + j] = [[None, None] for _ in range(32)]
                                bfr[4 * piece + j][l][half] = B[k, n]
            for q in range(blocksN):
                if tf32 and not wide:
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
                    c0 = 8 * (q // 4) + q % 4 if wide else 2 * q
                    c1 = c0 + 4 if wide else c0 + 1
                    for l in range(32):
                        g, t = l // 4, l % 4
                        acc[l, reg(2*p, c0)] += D[g, 2*t]; acc[l, reg(2*p, c1)] += D[g, 2*t+1]
                        acc[l, reg(2*p+1, c0)] += D[g+8, 2*t]; acc[l, reg(2*p+1, c1)] += D[g+8, 2*t+1]
        for l in range(32):
            for mi in range(regsM):
                for ni in range(regsN):
                    m, n = coord(mi, ni, l, warp, M, N, wm, wn, wide)
                    assert bool(torch.isnan(C[m, n])), ("written twice", m, n)
                    C[m, n] = acc[l, reg(mi, ni)]
    err = float((C - A @ B).abs().max())
    print(M, N, K, wm, wn, ("wide " if wide else "") + ("tf32" if tf32 else "b16"), "max err", err)
    assert err < 1e-9
for args in [(32,32,32,2,2),(128,128,32,2,2),(128,128,64,4,2),(64,128,32,2,2),(16,8,16,1,1),(32,16,16,1,2),(256,128,32,4,2)]:
    run(*args); run(*args, tf32=True)
    M, N, K, wm, wn = args
    if N >= 32 * wn and K % 8 == 0:
        run(*args, tf32=True, wide=True)
run(64, 64, 16, 2, 1, tf32=True, wide=True)
