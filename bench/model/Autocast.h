//===- bench/model/Autocast.h - LibTorch autocast as a scope ----*- C++ -*-===//
//
// The C++ counterpart of `with torch.autocast(device_type, dtype)`: matmuls and
// other autocast-listed ops run in `dtype` inside the scope while parameters
// stay f32. Wrap the forward pass and the loss, not the backward.
//
//   { tessel::model::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16); loss = ...; }
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_AUTOCAST_H
#define TESSEL_BENCH_MODEL_AUTOCAST_H

#include <ATen/autocast_mode.h>

namespace tessel::model {

class AutocastGuard {
public:
  /// enabled == false makes the guard a no-op (handy for an fp32/bf16 flag).
  AutocastGuard(at::DeviceType device, at::ScalarType dtype, bool enabled = true)
      : device_(device), enabled_(enabled) {
    if (!enabled_)
      return;
    wasEnabled_ = at::autocast::is_autocast_enabled(device_);
    oldDtype_ = at::autocast::get_autocast_dtype(device_);
    at::autocast::set_autocast_enabled(device_, true);
    at::autocast::set_autocast_dtype(device_, dtype);
    at::autocast::increment_nesting();
  }
  ~AutocastGuard() {
    if (!enabled_)
      return;
    // Leaving the outermost autocast scope frees the cast-weight cache.
    if (at::autocast::decrement_nesting() == 0)
      at::autocast::clear_cache();
    at::autocast::set_autocast_enabled(device_, wasEnabled_);
    at::autocast::set_autocast_dtype(device_, oldDtype_);
  }
  AutocastGuard(const AutocastGuard &) = delete;
  AutocastGuard &operator=(const AutocastGuard &) = delete;

private:
  at::DeviceType device_;
  bool enabled_, wasEnabled_ = false;
  at::ScalarType oldDtype_ = at::kFloat;
};

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_AUTOCAST_H
