//===- bench/tools/StepProfile.h - where a step's GPU time goes -*- C++ -*-===//
//
// tessel-bench model --profile: a few steps under LibTorch's Kineto profiler with CUDA
// activity only (CUPTI's kernel records; no CPU op recording, which would slow the step
// it measures), summed per kernel and per source: Tessel's kernels, cuBLAS, LibTorch's,
// NCCL, copies. Next to the steps' wall time, what is left is time the GPU sat idle
// waiting for the CPU to launch.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_TOOLS_STEPPROFILE_H
#define TESSEL_BENCH_TOOLS_STEPPROFILE_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel::bench {

struct KernelTime {
  std::string name, source;
  int64_t calls = 0;
  double ms = 0; ///< summed over the profiled steps
};

struct StepProfile {
  int64_t steps = 0;
  double wallMs = 0;             ///< the profiled steps, first launch to last completion
  std::vector<KernelTime> kernels; ///< most time first
  double kernelMs() const;
};

/// Where a kernel comes from, by its name. Tessel's kernels keep their source names (plain
/// identifiers: `rmsnorm_fwd`); LibTorch's are demangled C++ (`void at::native::...`);
/// cuBLAS's and NCCL's carry their libraries' prefixes.
std::string kernelSource(const std::string &name, bool isCopy);

/// Runs `step` `steps` times under the profiler and sums the GPU's records. Throws where
/// this LibTorch has no Kineto/CUPTI.
StepProfile profileSteps(const std::function<void()> &step, int64_t steps);

/// profileSteps() for a benchmark that goes on without a profile: a profiler that
/// cannot record is reported on stderr after `tool` (the first line of its message) and
/// gives nothing; running out of device memory is still thrown.
std::optional<StepProfile> profileStepsOrReport(const std::function<void()> &step,
                                                int64_t steps, const std::string &tool);

/// Appends a markdown section: per source, then the `top` longest kernels, per step.
void appendProfileMarkdown(const StepProfile &profile, const std::string &title,
                           const std::string &path, size_t top = 30);

} // namespace tessel::bench

#endif // TESSEL_BENCH_TOOLS_STEPPROFILE_H
