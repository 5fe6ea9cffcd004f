// mma_sync_peak.cu - the most bf16 and tf32 tensor-core throughput mma.sync can give on
// this GPU.
//
// Every warp issues independent mma.sync.m16n8k16 (bf16 in, f32 accumulate), or
// m16n8k8 or m16n8k4 (tf32), on operands
// already in registers: no memory traffic, no address arithmetic, only the tensor-core
// pipe. This is the ceiling for any kernel on the sm_80 path (Tessel's mma.sync
// lowering, Ampere-style CUTLASS, FlashAttention-2); Hopper's wgmma (cuBLAS) goes higher.
//   nvcc -O3 -arch=sm_90 bench/ceilings/mma_sync_peak.cu -o mma_sync_peak && ./mma_sync_peak
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#include "BestTime.h"

constexpr int kChains = 8;         // independent accumulators per warp (hides latency)
constexpr int kIterations = 4096;  // mma.sync per chain

enum Kind { kBf16, kTf32, kTf32K4 };

template <Kind kind> __global__ void mmaLoop(float *out, unsigned seed) {
  unsigned a0 = seed ^ threadIdx.x, a1 = a0 * 3, a2 = a0 * 5, a3 = a0 * 7;
  unsigned b0 = a0 * 11, b1 = a0 * 13;
  float acc[kChains][4] = {};
  for (int i = 0; i < kIterations; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) {
      if constexpr (kind == kTf32K4)
        asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 "
                     "{%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a0), "r"(a1), "r"(b0));
      else if constexpr (kind == kTf32)
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
      else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                     "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    }
  }
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum; // keeps the work alive
}

int main() {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "mma_sync_peak: no CUDA device\n");
    return 1;
  }
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  std::printf("%6s %8s %8s %12s %10s\n", "type", "blocks", "warps", "time_ms", "TFLOP/s");
  for (Kind kind : {kBf16, kTf32, kTf32K4})
  for (int warps : {4, 8, 16}) {
    auto kernel = kind == kBf16 ? mmaLoop<kBf16> : kind == kTf32 ? mmaLoop<kTf32> : mmaLoop<kTf32K4>;
    int blocks = prop.multiProcessorCount * 4;
    int threads = warps * 32;
    float *out = nullptr;
    cudaMalloc(&out, sizeof(float) * blocks * threads);
    // The seed varies per launch (the warm-up's is 1) so no launch can be folded.
    float best = bestTimeMs([&](int rep) { kernel<<<blocks, threads>>>(out, rep < 0 ? 1 : rep); });
    if (cudaGetLastError() != cudaSuccess) {
      std::fprintf(stderr, "mma_sync_peak: launch failed\n");
      return 1;
    }
    double flop = 2.0 * 16 * 8 * (kind == kBf16 ? 16 : kind == kTf32 ? 8 : 4) *
                  double(kChains) * kIterations * (threads / 32) * blocks;
    const char *name = kind == kBf16 ? "bf16" : kind == kTf32 ? "tf32" : "tf32k4";
    std::printf("%6s %8d %8d %12.3f %10.1f\n", name, blocks, warps, best,
                flop / (best * 1e-3) / 1e12);
    cudaFree(out);
  }
  return 0;
}
