// BestTime.h - the shortest of a few timed launches, for the ceiling benchmarks.
#ifndef TESSEL_BENCH_CEILINGS_BESTTIME_H
#define TESSEL_BENCH_CEILINGS_BESTTIME_H

#include <cuda_runtime.h>

/// Runs `launch(rep)` once untimed, then `reps` times between events; the shortest in ms.
template <typename Launch> float bestTimeMs(Launch launch, int reps = 10) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  launch(-1); // warm-up
  float best = 1e30f;
  for (int rep = 0; rep < reps; ++rep) {
    cudaEventRecord(start);
    launch(rep);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    best = ms < best ? ms : best;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

#endif // TESSEL_BENCH_CEILINGS_BESTTIME_H
