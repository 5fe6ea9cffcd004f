//===- bench/model/ActivationCheckpoint.cpp - Recompute a part in its backward -===//
#include "bench/model/ActivationCheckpoint.h"
#include "bench/model/Autocast.h"

#include <torch/torch.h>

namespace tessel::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

/// Carries f to the backward (saved_data holds IValues; a capsule needs no registration).
struct FnHolder : torch::CustomClassHolder {
  explicit FnHolder(CheckpointedFn f) : fn(std::move(f)) {}
  CheckpointedFn fn;
};

struct Checkpoint : torch::autograd::Function<Checkpoint> {
  // The inputs come as a TensorList: autograd sees each tensor of it as an input (a
  // std::vector would be taken for a non-tensor argument, and nothing would connect).
  static variable_list forward(AutogradContext *ctx, at::TensorList inputList, CheckpointedFn f) {
    variable_list inputs = inputList.vec();
    c10::List<bool> needsGrad;
    for (const torch::Tensor &t : inputs)
      needsGrad.push_back(t.requires_grad());
    ctx->save_for_backward(inputs);
    ctx->saved_data["needs_grad"] = needsGrad;
    at::DeviceType device = inputs.at(0).device().type();
    ctx->saved_data["device"] = static_cast<int64_t>(device);
    ctx->saved_data["autocast"] = at::autocast::is_autocast_enabled(device);
    ctx->saved_data["autocast_dtype"] = static_cast<int64_t>(at::autocast::get_autocast_dtype(device));
    ctx->saved_data["fn"] = c10::IValue::make_capsule(c10::make_intrusive<FnHolder>(f));
    torch::NoGradGuard noGrad;
    return f(inputs);
  }

  static variable_list backward(AutogradContext *ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    c10::List<bool> needsGrad = ctx->saved_data["needs_grad"].toBoolList();
    auto holder = c10::static_intrusive_pointer_cast<FnHolder>(ctx->saved_data["fn"].toCapsule());
    std::vector<torch::Tensor> inputs;
    for (size_t i = 0; i < saved.size(); ++i)
      inputs.push_back(saved[i].detach().requires_grad_(needsGrad[i]));
    std::vector<torch::Tensor> outputs;
    {
      torch::AutoGradMode enable(true);
      auto device = static_cast<at::DeviceType>(ctx->saved_data["device"].toInt());
      AutocastGuard autocast(device, static_cast<at::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()),
                             ctx->saved_data["autocast"].toBool());
      outputs = holder->fn(inputs);
    }
    variable_list roots, rootGrads;
    for (size_t i = 0; i < outputs.size(); ++i)
      if (outputs[i].defined() && outputs[i].requires_grad() && grads[i].defined()) {
        roots.push_back(outputs[i]);
        rootGrads.push_back(grads[i]);
      }
    if (!roots.empty())
      torch::autograd::backward(roots, rootGrads);
    variable_list result;
    for (size_t i = 0; i < inputs.size(); ++i)
      result.push_back(needsGrad[i] ? inputs[i].grad() : torch::Tensor());
    result.push_back(torch::Tensor()); // f
    return result;
  }
};

} // namespace

std::vector<torch::Tensor> checkpointed(CheckpointedFn f, const std::vector<torch::Tensor> &inputs) {
  // autograd's Function takes no undefined inputs: pass the defined ones, and put the
  // undefined ones back for f.
  std::vector<bool> present;
  std::vector<torch::Tensor> defined;
  for (const torch::Tensor &t : inputs) {
    present.push_back(t.defined());
    if (t.defined())
      defined.push_back(t);
  }
  CheckpointedFn inner = [f = std::move(f), present](const std::vector<torch::Tensor> &in) {
    std::vector<torch::Tensor> all;
    size_t next = 0;
    for (bool p : present)
      all.push_back(p ? in.at(next++) : torch::Tensor());
    return f(all);
  };
  return Checkpoint::apply(at::TensorList(defined), std::move(inner));
}

} // namespace tessel::model
