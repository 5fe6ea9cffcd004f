//===- bench/distributed/StepTimer.cpp - Timestamps on the compute stream ---===//

#include "bench/distributed/StepTimer.h"

#include <c10/core/Event.h>
#include <c10/core/impl/VirtualGuardImpl.h>

#include <stdexcept>

namespace tessel::dist {

struct StepTimer::Impl {
  torch::Device device{torch::kCPU};
  std::vector<c10::Event> events;                            // CUDA
  std::vector<std::chrono::steady_clock::time_point> times; // CPU
};

StepTimer::StepTimer(torch::Device device, int marks) : impl_(std::make_unique<Impl>()) {
  if (marks < 1)
    throw std::invalid_argument("StepTimer needs at least one mark");
  impl_->device = device;
  if (device.is_cuda()) {
    // BACKEND_DEFAULT: CUDA events with timing (PyTorch's default disables it).
    for (int i = 0; i < marks; ++i)
      impl_->events.emplace_back(c10::DeviceType::CUDA, c10::EventFlag::BACKEND_DEFAULT);
  } else {
    impl_->times.resize(marks);
  }
}

StepTimer::~StepTimer() = default;

bool StepTimer::onDevice() const { return !impl_->events.empty(); }

void StepTimer::mark(int i) {
  if (onDevice()) {
    c10::impl::VirtualGuardImpl guard(c10::DeviceType::CUDA);
    impl_->events.at(i).record(guard.getStream(impl_->device));
  } else {
    impl_->times.at(i) = std::chrono::steady_clock::now();
  }
}

double StepTimer::elapsedMs(int from, int to) const {
  if (onDevice())
    return impl_->events.at(from).elapsedTime(impl_->events.at(to));
  return std::chrono::duration<double, std::milli>(impl_->times.at(to) - impl_->times.at(from))
      .count();
}

} // namespace tessel::dist
