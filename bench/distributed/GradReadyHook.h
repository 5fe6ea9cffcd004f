//===- bench/distributed/GradReadyHook.h - Told when a gradient is complete -*- C++ -*-===//
//
// DataParallel, ShardedOptimizer (Zero1) and FullySharded each learn that a parameter's
// gradient is complete for the current backward from its post-accumulate-grad hook
// (LibTorch keeps one per tensor). `onReady` runs on autograd's thread; whoever sets it
// clears it before the state it reaches goes away.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_GRADREADYHOOK_H
#define TESSEL_BENCH_DISTRIBUTED_GRADREADYHOOK_H

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <functional>
#include <memory>

namespace tessel::dist {

inline void setGradReadyHook(const torch::Tensor &param, std::function<void()> onReady) {
  class Hook : public torch::autograd::PostAccumulateGradHook {
  public:
    explicit Hook(std::function<void()> f) : onReady_(std::move(f)) {}
    void operator()(const torch::autograd::Variable &) override { onReady_(); }

  private:
    std::function<void()> onReady_;
  };
  torch::autograd::impl::set_post_acc_grad_hooks(param, std::make_unique<Hook>(std::move(onReady)));
}

inline void clearGradReadyHook(const torch::Tensor &param) {
  torch::autograd::impl::set_post_acc_grad_hooks(param, nullptr);
}

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_GRADREADYHOOK_H
