//===- bench/distributed/StepTimer.h - Timestamps on the compute stream -*- C++ -*-===//
//
// Marks points of a training step where the device sees them: on CUDA, timing
// events recorded on the current stream (so the time between two marks is GPU
// time on that stream, whatever the host was doing); on the CPU, the host
// clock (CPU ops and Gloo collectives run synchronously there).
//
//   StepTimer timer(device, 3);
//   timer.mark(0); loss.backward(); timer.mark(1); ddp.finishGradientSynchronization();
//   timer.mark(2); pg->synchronizeDevice();
//   double waitMs = timer.elapsedMs(1, 2);   // read only after the stream is synchronised
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_STEPTIMER_H
#define TESSEL_BENCH_DISTRIBUTED_STEPTIMER_H

#include <torch/types.h>

#include <chrono>
#include <memory>
#include <vector>

namespace tessel::dist {

class StepTimer {
public:
  StepTimer(torch::Device device, int marks);
  ~StepTimer();
  StepTimer(const StepTimer &) = delete;
  StepTimer &operator=(const StepTimer &) = delete;

  /// Records mark i on the device's current stream (CUDA) or takes the host time.
  void mark(int i);
  /// Milliseconds from mark `from` to mark `to`. On CUDA, call after the stream
  /// has passed both marks (e.g. after a synchronisation).
  double elapsedMs(int from, int to) const;
  /// Whether the marks are device (CUDA event) timestamps.
  bool onDevice() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_STEPTIMER_H
