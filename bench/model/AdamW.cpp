//===- bench/model/AdamW.cpp - AdamW over a list of tensors ---------------===//

#include "bench/model/AdamW.h"
#include "bench/model/TesselOps.h"

#include <ATen/ATen.h>
#include <torch/utils.h>

#include <cmath>
#include <map>
#include <stdexcept>

namespace tessel::model {

AdamWImpl parseAdamWImpl(const std::string &name) {
  if (name == "fused")
    return AdamWImpl::Fused;
  if (name == "foreach")
    return AdamWImpl::Foreach;
  if (name == "tessel")
    return AdamWImpl::Tessel;
  throw std::invalid_argument("unknown AdamW implementation '" + name +
                              "' (expected fused, foreach or tessel)");
}

const char *toString(AdamWImpl impl) {
  return impl == AdamWImpl::Fused ? "fused" : impl == AdamWImpl::Foreach ? "foreach" : "tessel";
}

AdamW::AdamW(std::vector<torch::Tensor> params, AdamWOptions options)
    : params_(std::move(params)), options_(options) {
  for (const torch::Tensor &p : params_) {
    if (!p.is_floating_point())
      throw std::invalid_argument("AdamW: parameters must be floating point");
    if (p.device() != params_.front().device())
      throw std::invalid_argument("AdamW: all parameters must live on one device");
  }
}

void AdamW::initState() {
  torch::NoGradGuard noGrad;
  // Tessel's kernel keeps the moments in f32 whatever the parameters' dtype.
  for (const torch::Tensor &p : params_) {
    auto options = options_.impl == AdamWImpl::Tessel ? p.options().dtype(torch::kFloat32)
                                                      : p.options();
    expAvg_.push_back(torch::zeros_like(p, options, at::MemoryFormat::Contiguous));
    expAvgSq_.push_back(torch::zeros_like(p, options, at::MemoryFormat::Contiguous));
    steps_.push_back(torch::zeros({}, p.options().dtype(torch::kFloat32)));
  }
  hostSteps_.assign(params_.size(), 0);
}

void AdamW::step() {
  torch::NoGradGuard noGrad;
  if (expAvg_.empty())
    initState();
  // Parameters without a gradient are skipped, their step counts too (as torch.optim's).
  std::vector<size_t> stepped;
  for (size_t i = 0; i < params_.size(); ++i)
    if (gradOf(i).defined())
      stepped.push_back(i);
  if (stepped.empty())
    return;
  const AdamWOptions &o = options_;
  if (o.impl == AdamWImpl::Tessel) {
    requireTesselOp(bool(tesselOps().adamw), "AdamW", "Tessel AdamW");
    Tensors t = gather(stepped);
    at::_foreach_add_(t.steps, 1);
    tesselOps().adamw(t.params, t.grads, t.expAvg, t.expAvgSq, t.steps, t.copies, o.lr,
                      o.beta1, o.beta2, o.eps, o.weightDecay);
    return;
  }
  if (o.impl == AdamWImpl::Fused) {
    Tensors t = gather(stepped, /*gradsInParamDtype=*/true);
    at::_foreach_add_(t.steps, 1);
    at::_fused_adamw_(t.params, t.grads, t.expAvg, t.expAvgSq, /*max_exp_avg_sqs=*/{}, t.steps,
                      o.lr, o.beta1, o.beta2, o.weightDecay, o.eps, /*amsgrad=*/false,
                      /*maximize=*/false);
  } else {
    // torch.optim.AdamW's multi-tensor path (not capturable: the steps are host numbers),
    // one group per step count (one group unless some parameter skipped steps).
    std::map<int64_t, std::vector<size_t>> byStep;
    for (size_t i : stepped)
      byStep[++hostSteps_[i]].push_back(i);
    for (const auto &[step, group] : byStep)
      foreachStep(group, double(step));
  }
  std::vector<torch::Tensor> copies, masters;
  for (size_t i : stepped)
    if (!copies_.empty() && copies_[i].defined())
      copies.push_back(copies_[i]), masters.push_back(params_[i]);
  if (!copies.empty())
    at::_foreach_copy_(copies, masters);
}

void AdamW::setWorkingCopies(std::vector<torch::Tensor> copies) {
  if (copies.size() != params_.size())
    throw std::invalid_argument("AdamW: one working copy (or an undefined tensor) per parameter");
  for (size_t i = 0; i < copies.size(); ++i) {
    const torch::Tensor &c = copies[i], &p = params_[i];
    if (!c.defined())
      continue;
    if (c.sizes() != p.sizes() || c.device() != p.device() || !c.is_floating_point() ||
        p.scalar_type() != torch::kFloat32 || c.scalar_type() == torch::kFloat32)
      throw std::invalid_argument("AdamW: parameter " + std::to_string(i) +
                                  ": a working copy is a bf16 or f16 tensor of an f32 "
                                  "parameter's shape, on its device");
  }
  copies_ = std::move(copies);
}

torch::Tensor AdamW::gradOf(size_t i) const {
  if (copies_.empty() || !copies_[i].defined())
    return params_[i].grad();
  if (params_[i].grad().defined())
    throw std::runtime_error("AdamW: parameter " + std::to_string(i) +
                             " has a gradient on both the f32 master and its working copy; "
                             "compute with one of them");
  return copies_[i].grad();
}

AdamW::Tensors AdamW::gather(const std::vector<size_t> &indices,
                             bool gradsInParamDtype) const {
  Tensors t;
  for (size_t i : indices) {
    t.params.push_back(params_[i]);
    torch::Tensor grad = gradOf(i);
    t.grads.push_back(gradsInParamDtype ? grad.to(params_[i].scalar_type()) : grad);
    t.copies.push_back(copies_.empty() ? torch::Tensor() : copies_[i]);
    t.expAvg.push_back(expAvg_[i]);
    t.expAvgSq.push_back(expAvgSq_[i]);
    t.steps.push_back(steps_[i]);
  }
  return t;
}

void AdamW::foreachStep(const std::vector<size_t> &group, double step) {
  const AdamWOptions &o = options_;
  Tensors t = gather(group, /*gradsInParamDtype=*/true);
  auto &[params, grads, expAvg, expAvgSq, steps, copies] = t;
  at::_foreach_add_(steps, 1);
  double biasCorrection1 = 1 - std::pow(o.beta1, step);
  double biasCorrection2 = 1 - std::pow(o.beta2, step);
  at::_foreach_mul_(params, 1 - o.lr * o.weightDecay);
  at::_foreach_lerp_(expAvg, grads, 1 - o.beta1);
  at::_foreach_mul_(expAvgSq, o.beta2);
  at::_foreach_addcmul_(expAvgSq, grads, grads, 1 - o.beta2);
  std::vector<torch::Tensor> denom = at::_foreach_sqrt(expAvgSq);
  at::_foreach_div_(denom, std::sqrt(biasCorrection2));
  at::_foreach_add_(denom, o.eps);
  at::_foreach_addcdiv_(params, expAvg, denom, -o.lr / biasCorrection1);
}

void AdamW::zeroGrad(bool setToNone) {
  for (torch::Tensor &p : params_)
    zeroGradOf(p, setToNone);
  for (torch::Tensor &c : copies_)
    if (c.defined())
      zeroGradOf(c, setToNone);
}

void AdamW::zeroGradOf(torch::Tensor &p, bool setToNone) {
  torch::Tensor &grad = p.mutable_grad();
  if (!grad.defined())
    return;
  if (setToNone)
    grad = torch::Tensor();
  else
    grad.zero_();
}

} // namespace tessel::model
