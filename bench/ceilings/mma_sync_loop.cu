// mma_sync_loop.cu - what the mma.sync matmul inner loop itself can reach on this GPU,
// fed from shared memory but with no global traffic, copies or barriers.
//
// Each block (4 warps as 2x2, a 128x128 output tile, 64x64 per warp) runs the K loop of
// Tessel's mma.sync matmul over operands that stay in shared memory: per K step, A
// fragments by ldmatrix.x4 and, for tf32, B fragments by 32-bit ld.shared, each rounded
// to tf32 (cvt.rn, optional), then one mma.sync per 16x8 instruction tile; bf16 takes B
// by ldmatrix.x4.trans. Rows are padded so that every load is free of bank conflicts.
// Loads alternate between two K halves of the tile so none can be hoisted out of the
// loop. The gap between this and mma_sync_peak.cu is what the instruction mix costs;
// the gap between this and the matmul is what the copies, barriers and edges cost
// ("-sync": with a block-wide barrier per K tile, as the matmul has).
//   nvcc -O3 -arch=sm_90 bench/ceilings/mma_sync_loop.cu -o mma_sync_loop && ./mma_sync_loop
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#include "BestTime.h"

constexpr int kIterations = 2048; // K tiles per block
constexpr int kTileK = 32;        // tf32 K per iteration (bf16: 64, the same bytes)
constexpr int kDepth = 2 * kTileK;
// Row strides in 32-bit words: rows of A (ldmatrix) shifted by 16 bytes per row, rows of
// B shifted by 8 banks, so lane (g, t) of a fragment load hits bank 8t + g.
constexpr int kStrideA = kDepth + 4;
constexpr int kStrideB = 128 + 8;

__device__ __forceinline__ uint32_t smemAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrixX4(uint32_t (&r)[4], uint32_t address, bool trans) {
  if (trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(address));
}

__device__ __forceinline__ uint32_t toTf32(uint32_t bits, bool round) {
  if (!round)
    return bits;
  uint32_t out;
  asm("cvt.rn.tf32.f32 %0, %1;" : "=r"(out) : "r"(bits));
  return out;
}

// MinBlocks: ptxas keeps registers low enough for that many blocks per SM (3: <= 168,
// Tessel's 2-stage tf32 tile; 1: as many as it likes).
// Sync: a block-wide barrier after every K tile, as a matmul has before it refills the
// slot its warps just read.
template <bool Tf32, bool Round, int MinBlocks, bool Sync = false>
__global__ void __launch_bounds__(128, MinBlocks) loop(float *out) {
  // One buffer of 32-bit words: A (128 x kDepth words) then B (kDepth x 128 words); for
  // bf16 a word holds two elements: a 128 x 2 kDepth A and a 2 kDepth x 128 B.
  extern __shared__ uint32_t smem[];
  uint32_t *a = smem, *b = smem + 128 * kStrideA;
  for (int i = threadIdx.x; i < 128 * kStrideA + kDepth * kStrideB; i += blockDim.x)
    smem[i] = 0x3f803f80u | (i * 2654435761u & 0x007f007fu); // normal as f32 and as 2 bf16
  __syncthreads();
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  int warpM = warp / 2, warpN = warp % 2;
  int g = lane / 4, t = lane % 4;
  float acc[4][8][4] = {};
  // A: matrix lane / 8 of x4 = (rows + 8 if bit 0) x (k + 4 words if bit 1).
  uint32_t aLane = smemAddress(a + (warpM * 64 + (lane / 8 % 2) * 8 + lane % 8) * kStrideA +
                               (lane / 16) * 4);
  for (int it = 0; it < kIterations; ++it) {
    int k0 = (it & 1) * kTileK; // words
#pragma unroll
    for (int ks = 0; ks < kTileK; ks += 8) {
      uint32_t af[4][4], bf[8][2];
#pragma unroll
      for (int p = 0; p < 4; ++p) {
        ldmatrixX4(af[p], aLane + 4 * (p * 16 * kStrideA + k0 + ks), false);
#pragma unroll
        for (int r = 0; r < 4; ++r)
          af[p][r] = Tf32 ? toTf32(af[p][r], Round) : af[p][r];
      }
      if constexpr (Tf32) {
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            uint32_t v;
            asm volatile("ld.shared.b32 %0, [%1];"
                         : "=r"(v)
                         : "r"(smemAddress(b + (k0 + ks + t + 4 * h) * kStrideB + warpN * 64 +
                                           8 * j + g)));
            bf[j][h] = toTf32(v, Round);
          }
      } else {
        // bf16: B is 2 kDepth rows of kStrideB * 2 bytes (128 bf16 and 8 of padding); a K
        // step of 16 rows is 8 words of A's rows.
#pragma unroll
        for (int j = 0; j < 8; j += 2) {
          uint32_t r[4];
          int row = 2 * (k0 + ks) + (lane / 8 % 2) * 8 + lane % 8;
          int col = warpN * 64 + (j + lane / 16) * 8; // bf16 elements
          ldmatrixX4(r, smemAddress(b) + row * kStrideB * 2 + col * 2, true);
          bf[j][0] = r[0], bf[j][1] = r[1], bf[j + 1][0] = r[2], bf[j + 1][1] = r[3];
        }
      }
#pragma unroll
      for (int p = 0; p < 4; ++p)
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          float *c = acc[p][j];
          if constexpr (Tf32)
            asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(af[p][0]), "r"(af[p][1]), "r"(af[p][2]), "r"(af[p][3]),
                           "r"(bf[j][0]), "r"(bf[j][1]));
          else
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                         : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                         : "r"(af[p][0]), "r"(af[p][1]), "r"(af[p][2]), "r"(af[p][3]),
                           "r"(bf[j][0]), "r"(bf[j][1]));
        }
    }
    if constexpr (Sync)
      __syncthreads();
  }
  float sum = 0;
  for (int p = 0; p < 4; ++p)
    for (int j = 0; j < 8; ++j)
      sum += acc[p][j][0] + acc[p][j][1] + acc[p][j][2] + acc[p][j][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum; // keeps the work alive
}

template <bool Tf32, bool Round, int MinBlocks, bool Sync = false>
int run(const cudaDeviceProp &prop, const char *name) {
  auto kernel = loop<Tf32, Round, MinBlocks, Sync>;
  int smemBytes = (128 * kStrideA + kDepth * kStrideB) * 4;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smemBytes);
  cudaFuncAttributes attr;
  cudaFuncGetAttributes(&attr, kernel);
  int perSm = 0;
  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, 128, smemBytes);
  for (int blocksPerSm = 1; blocksPerSm <= perSm; ++blocksPerSm) {
    int blocks = prop.multiProcessorCount * blocksPerSm;
    float *out = nullptr;
    cudaMalloc(&out, sizeof(float) * blocks * 128);
    float best = bestTimeMs([&](int) { kernel<<<blocks, 128, smemBytes>>>(out); });
    if (cudaError_t err = cudaGetLastError(); err != cudaSuccess) {
      std::fprintf(stderr, "mma_sync_loop: %s\n", cudaGetErrorString(err));
      return 1;
    }
    // Per block and iteration: 128 x 128 x kTileK (tf32) or 2 kTileK (bf16) MACs.
    double flop = 2.0 * 128 * 128 * (Tf32 ? kTileK : 2 * kTileK) * double(kIterations) * blocks;
    std::printf("%-12s %5d %9d %10d %11.3f %9.1f\n", name, attr.numRegs, blocksPerSm, blocks,
                best, flop / (best * 1e-3) / 1e12);
    cudaFree(out);
  }
  return 0;
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "mma_sync_loop: no CUDA device\n");
    return 1;
  }
  std::printf("device: %s, %d SMs; 128x128 block tile, 4 warps of 64x64, %d K tiles\n",
              prop.name, prop.multiProcessorCount, kIterations);
  std::printf("%-12s %5s %9s %10s %11s %9s\n", "loop", "regs", "blocks/SM", "blocks",
              "time_ms", "TFLOP/s");
  return run<true, true, 1>(prop, "tf32") || run<true, true, 3>(prop, "tf32") ||
         run<true, true, 1, true>(prop, "tf32-sync") || run<true, true, 3, true>(prop, "tf32-sync") ||
         run<true, false, 1>(prop, "tf32-trunc") || run<true, false, 3>(prop, "tf32-trunc") ||
         run<false, false, 1>(prop, "bf16") || run<false, false, 3>(prop, "bf16");
}
