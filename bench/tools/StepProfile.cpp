//===- bench/tools/StepProfile.cpp - where a step's GPU time goes ----------===//
#include "bench/tools/StepProfile.h"
#include "bench/tools/CudaSupport.h"

#include <c10/util/Exception.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

namespace tessel::bench {

double StepProfile::kernelMs() const {
  double total = 0;
  for (const KernelTime &k : kernels)
    total += k.ms;
  return total;
}

std::string kernelSource(const std::string &name, bool isCopy) {
  if (isCopy)
    return "copy/memset";
  auto has = [&](const char *text) { return name.find(text) != std::string::npos; };
  if (has("nccl") || has("NCCL"))
    return "NCCL";
  // LibTorch's SDPA kernels (flash, memory-efficient fmha_cutlass*) before cuBLAS's names.
  if (has("flash") || has("fmha"))
    return "LibTorch";
  if (has("gemm") || has("nvjet") || has("cutlass") || has("xmma") || has("cublas"))
    return "cuBLAS";
  bool identifier = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  return identifier ? "Tessel" : "LibTorch";
}

StepProfile profileSteps(const std::function<void()> &step, int64_t steps) {
  namespace prof = torch::autograd::profiler;
  using torch::profiler::impl::ActivityType;
  torch::profiler::impl::ProfilerConfig config(torch::profiler::impl::ProfilerState::KINETO);
  std::set<ActivityType> activities = {ActivityType::CUDA};
  cudaSynchronize();
  prof::prepareProfiler(config, activities);
  prof::enableProfiler(config, activities);
  // A step that throws (out of memory) must not leave the profiler on for the next one.
  struct Disable {
    std::unique_ptr<prof::ProfilerResult> result;
    ~Disable() {
      if (!result)
        prof::disableProfiler();
    }
  } guard;
  auto start = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < steps; ++i)
    step();
  cudaSynchronize();
  auto stop = std::chrono::steady_clock::now();
  guard.result = prof::disableProfiler();
  const std::unique_ptr<prof::ProfilerResult> &result = guard.result;
  StepProfile profile;
  profile.steps = steps;
  profile.wallMs = std::chrono::duration<double, std::milli>(stop - start).count();
  std::map<std::string, KernelTime> byName;
  for (const prof::KinetoEvent &event : result->events()) {
    if (event.deviceType() != c10::DeviceType::CUDA)
      continue;
    std::string name = event.name();
    // Kineto's GPU activities: kernels, and memcpy/memset records named after the copy.
    bool isCopy = name.rfind("Memcpy", 0) == 0 || name.rfind("Memset", 0) == 0;
    KernelTime &k = byName[name];
    k.name = name;
    k.source = kernelSource(name, isCopy);
    ++k.calls;
    k.ms += double(event.durationNs()) * 1e-6;
  }
  if (byName.empty())
    throw std::runtime_error("the profiler recorded no GPU activity (is CUPTI available to "
                             "this LibTorch?)");
  for (auto &[name, k] : byName)
    profile.kernels.push_back(k);
  std::sort(profile.kernels.begin(), profile.kernels.end(),
            [](const KernelTime &a, const KernelTime &b) { return a.ms > b.ms; });
  return profile;
}

std::optional<StepProfile> profileStepsOrReport(const std::function<void()> &step,
                                                int64_t steps, const std::string &tool) {
  try {
    return profileSteps(step, steps);
  } catch (const c10::OutOfMemoryError &) {
    throw;
  } catch (const std::exception &e) {
    std::string message = e.what();
    std::fprintf(stderr, "%s: --profile: %s\n", tool.c_str(),
                 message.substr(0, message.find('\n')).c_str());
    return std::nullopt;
  }
}

void appendProfileMarkdown(const StepProfile &profile, const std::string &title,
                           const std::string &path, size_t top) {
  std::ofstream out(path, std::ios::app);
  double steps = double(std::max<int64_t>(profile.steps, 1));
  auto ms = [&](double total) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", total / steps);
    return std::string(text);
  };
  auto share = [&](double part) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", 100.0 * part / profile.wallMs);
    return std::string(text);
  };
  // Kernels on several streams (NCCL) can overlap: then the sum passes the wall time.
  double busy = profile.kernelMs(), idle = std::max(0.0, profile.wallMs - busy);
  out << "## " << title << "\n\n"
      << profile.steps << " uncaptured steps under the profiler (CUDA activity only), per step: "
      << "wall " << ms(profile.wallMs) << " ms, GPU kernels " << ms(busy) << " ms, GPU idle "
      << ms(idle) << " ms (" << share(idle)
      << " of the wall time).\n\n| source | kernels per step | ms per step | of wall |\n|---|---|---|---|\n";
  std::map<std::string, std::pair<int64_t, double>> bySource;
  for (const KernelTime &k : profile.kernels) {
    bySource[k.source].first += k.calls;
    bySource[k.source].second += k.ms;
  }
  for (const auto &[source, total] : bySource)
    out << "| " << source << " | " << int64_t(double(total.first) / steps) << " | "
        << ms(total.second) << " | " << share(total.second) << " |\n";
  out << "\n| kernel | source | calls per step | ms per step | of wall |\n|---|---|---|---|---|\n";
  for (size_t i = 0; i < profile.kernels.size() && i < top; ++i) {
    const KernelTime &k = profile.kernels[i];
    std::string name = k.name.size() > 90 ? k.name.substr(0, 87) + "..." : k.name;
    for (char &c : name)
      if (c == '|')
        c = '/';
    out << "| `" << name << "` | " << k.source << " | " << int64_t(double(k.calls) / steps)
        << " | " << ms(k.ms) << " | " << share(k.ms) << " |\n";
  }
  out << "\n";
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

} // namespace tessel::bench
