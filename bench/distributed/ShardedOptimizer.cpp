//===- bench/distributed/ShardedOptimizer.cpp - Optimizer-state sharding and ZeRO-1 ---===//

#include "bench/distributed/ShardedOptimizer.h"
#include "bench/distributed/Buckets.h"

#include "bench/model/AdamW.h"

#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessel::dist {

ShardMode parseShardMode(const std::string &name) {
  if (name == "broadcast")
    return ShardMode::Broadcast;
  if (name == "zero1")
    return ShardMode::Zero1;
  throw std::invalid_argument("unknown sharding mode '" + name + "' (expected broadcast or zero1)");
}

const char *toString(ShardMode mode) { return mode == ShardMode::Zero1 ? "zero1" : "broadcast"; }

namespace {

torch::Tensor onDevice(const torch::Tensor &t, const torch::Tensor &like) {
  return t.to(like.device(), /*non_blocking=*/false, /*copy=*/true);
}

const torch::Tensor *find(const ParamState &state, const std::string &name) {
  for (const auto &[key, value] : state)
    if (key == name)
      return &value;
  return nullptr;
}

/// Reads/writes the per-parameter state of LibTorch's Adam, AdamW and SGD.
template <class StateT> struct TorchStateTraits;

template <class StateT> struct AdamStateTraits {
  static ParamState get(const StateT &s) {
    ParamState out{{"step", torch::tensor(s.step(), torch::kInt64)},
                   {"exp_avg", s.exp_avg()},
                   {"exp_avg_sq", s.exp_avg_sq()}};
    if (s.max_exp_avg_sq().defined())
      out.emplace_back("max_exp_avg_sq", s.max_exp_avg_sq());
    return out;
  }
  static std::unique_ptr<StateT> make(const ParamState &in, const torch::Tensor &param) {
    auto s = std::make_unique<StateT>();
    if (const torch::Tensor *t = find(in, "step"))
      s->step(t->item<int64_t>());
    if (const torch::Tensor *t = find(in, "exp_avg"))
      s->exp_avg(onDevice(*t, param));
    if (const torch::Tensor *t = find(in, "exp_avg_sq"))
      s->exp_avg_sq(onDevice(*t, param));
    if (const torch::Tensor *t = find(in, "max_exp_avg_sq"))
      s->max_exp_avg_sq(onDevice(*t, param));
    return s;
  }
};
template <> struct TorchStateTraits<torch::optim::AdamWParamState>
    : AdamStateTraits<torch::optim::AdamWParamState> {};
template <> struct TorchStateTraits<torch::optim::AdamParamState>
    : AdamStateTraits<torch::optim::AdamParamState> {};
template <> struct TorchStateTraits<torch::optim::SGDParamState> {
  static ParamState get(const torch::optim::SGDParamState &s) {
    if (!s.momentum_buffer().defined())
      return {};
    return {{"momentum_buffer", s.momentum_buffer()}};
  }
  static std::unique_ptr<torch::optim::SGDParamState> make(const ParamState &in,
                                                           const torch::Tensor &param) {
    auto s = std::make_unique<torch::optim::SGDParamState>();
    if (const torch::Tensor *t = find(in, "momentum_buffer"))
      s->momentum_buffer(onDevice(*t, param));
    return s;
  }
};

template <class Opt, class StateT> class TorchLocalOptimizer : public LocalOptimizer {
public:
  template <class Options>
  TorchLocalOptimizer(std::vector<torch::Tensor> params, Options options)
      : params_(params), optimizer_(std::move(params), std::move(options)) {}
  void step() override { optimizer_.step(); }
  ParamState state(size_t i) const override {
    const auto &states = optimizer_.state();
    auto it = states.find(params_.at(i).unsafeGetTensorImpl());
    if (it == states.end())
      return {};
    return TorchStateTraits<StateT>::get(static_cast<const StateT &>(*it->second));
  }
  void loadState(size_t i, const ParamState &state) override {
    const torch::Tensor &param = params_.at(i);
    if (state.empty()) {
      optimizer_.state().erase(param.unsafeGetTensorImpl());
      return;
    }
    optimizer_.state()[param.unsafeGetTensorImpl()] = TorchStateTraits<StateT>::make(state, param);
  }

private:
  std::vector<torch::Tensor> params_;
  Opt optimizer_;
};

class TesselAdamWOptimizer : public LocalOptimizer {
public:
  TesselAdamWOptimizer(std::vector<torch::Tensor> params, const model::AdamWOptions &options)
      : optimizer_(std::move(params), options) {}
  void step() override { optimizer_.step(); }
  ParamState state(size_t i) const override {
    if (optimizer_.expAvg().empty())
      return {};
    return {{"exp_avg", optimizer_.expAvg().at(i)}, {"exp_avg_sq", optimizer_.expAvgSq().at(i)}};
  }
  void loadState(size_t, const ParamState &) override {
    throw std::runtime_error("the harness's AdamW cannot load optimizer state; use torchAdamW "
                             "for consolidated checkpoints");
  }

private:
  model::AdamW optimizer_;
};

/// Zero1's post-accumulate-grad hook: moves a fresh gradient into its slot of
/// the flat gradient buffer (a no-op once .grad() is the slot view).
class MoveGradIntoSlot : public torch::autograd::PostAccumulateGradHook {
public:
  explicit MoveGradIntoSlot(torch::Tensor slot) : slot_(std::move(slot)) {}
  void operator()(const torch::autograd::Variable &param) override {
    torch::Tensor &grad = const_cast<torch::autograd::Variable &>(param).mutable_grad();
    if (!grad.defined() || grad.data_ptr() == slot_.data_ptr())
      return;
    torch::NoGradGuard noGrad;
    slot_.copy_(grad);
    grad = slot_;
  }

private:
  torch::Tensor slot_;
};

std::string paramKey(size_t i) { return "param_" + std::to_string(i); }
std::string statePrefix(size_t i) { return "state_" + std::to_string(i) + "_"; }

int64_t bytesOf(const torch::Tensor &t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.element_size()) : 0;
}

} // namespace

OptimizerFactory torchAdamW(torch::optim::AdamWOptions options) {
  return [options](std::vector<torch::Tensor> params) -> std::unique_ptr<LocalOptimizer> {
    return std::make_unique<TorchLocalOptimizer<torch::optim::AdamW, torch::optim::AdamWParamState>>(
        std::move(params), options);
  };
}

OptimizerFactory torchAdam(torch::optim::AdamOptions options) {
  return [options](std::vector<torch::Tensor> params) -> std::unique_ptr<LocalOptimizer> {
    return std::make_unique<TorchLocalOptimizer<torch::optim::Adam, torch::optim::AdamParamState>>(
        std::move(params), options);
  };
}

OptimizerFactory torchSGD(torch::optim::SGDOptions options) {
  return [options](std::vector<torch::Tensor> params) -> std::unique_ptr<LocalOptimizer> {
    return std::make_unique<TorchLocalOptimizer<torch::optim::SGD, torch::optim::SGDParamState>>(
        std::move(params), options);
  };
}

OptimizerFactory tesselAdamW(const model::AdamWOptions &options) {
  model::AdamWOptions copy = options;
  return [copy](std::vector<torch::Tensor> params) -> std::unique_ptr<LocalOptimizer> {
    return std::make_unique<TesselAdamWOptimizer>(std::move(params), copy);
  };
}

ShardedOptimizer::ShardedOptimizer(std::vector<torch::Tensor> params,
                                   std::shared_ptr<ProcessGroup> pg, OptimizerFactory factory,
                                   ShardMode mode)
    : pg_(std::move(pg)), mode_(mode) {
  if (!pg_ || !factory)
    throw std::invalid_argument("ShardedOptimizer needs a process group and an optimizer factory");
  for (torch::Tensor &p : params)
    if (p.requires_grad())
      params_.push_back(p);
  if (params_.empty())
    throw std::invalid_argument("ShardedOptimizer: no parameter requires a gradient");
  for (const torch::Tensor &p : params_)
    if (p.scalar_type() != params_[0].scalar_type() || p.device() != pg_->device())
      throw std::invalid_argument("ShardedOptimizer: every parameter must have one dtype and live "
                                  "on the process group's device (" + pg_->device().str() + ")");

  std::vector<int64_t> bytes;
  for (const torch::Tensor &p : params_)
    bytes.push_back(bytesOf(p));
  owners_ = assignOwners(bytes, pg_->size());

  // Flat layout: rank regions of equal (padded) size, parameters in registration order,
  // then (Zero1) one gradient flag per owned parameter.
  int world = pg_->size();
  std::vector<int64_t> regionUsed(world, 0);
  offsets_.assign(params_.size(), 0);
  for (size_t i = 0; i < params_.size(); ++i)
    regionUsed[owners_[i]] += params_[i].numel();
  std::vector<int64_t> cursor(world, 0), flagCursor = regionUsed;
  if (mode_ == ShardMode::Zero1)
    for (size_t i = 0; i < params_.size(); ++i)
      ++regionUsed[owners_[i]];
  regionElements_ = *std::max_element(regionUsed.begin(), regionUsed.end());
  for (size_t i = 0; i < params_.size(); ++i) {
    int r = owners_[i];
    offsets_[i] = r * regionElements_ + cursor[r];
    cursor[r] += params_[i].numel();
    if (mode_ == ShardMode::Zero1)
      flagOffsets_.push_back(r * regionElements_ + flagCursor[r]++);
  }
  if (mode_ == ShardMode::Zero1)
    flagIndex_ = torch::tensor(flagOffsets_, torch::kInt64).to(pg_->device());

  torch::NoGradGuard noGrad;
  flatParams_ = torch::zeros({regionElements_ * world}, params_[0].options());
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor view = flatParams_.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes());
    view.copy_(params_[i]);
    params_[i].set_data(view);
  }
  pg_->wait(pg_->broadcast(flatParams_, 0), "broadcast of rank 0's parameters");
  if (mode_ == ShardMode::Zero1) {
    flatGrads_ = torch::zeros_like(flatParams_);
    for (size_t i = 0; i < params_.size(); ++i)
      torch::autograd::impl::set_post_acc_grad_hooks(params_[i],
                                                     std::make_unique<MoveGradIntoSlot>(gradSlot(i)));
  }

  std::vector<torch::Tensor> own;
  for (size_t i = 0; i < params_.size(); ++i)
    if (owners_[i] == pg_->rank()) {
      ownIndices_.push_back(static_cast<int>(i));
      own.push_back(params_[i]);
    }
  local_ = factory(std::move(own));
}

ShardedOptimizer::~ShardedOptimizer() {
  if (mode_ == ShardMode::Zero1)
    for (const torch::Tensor &p : params_)
      torch::autograd::impl::set_post_acc_grad_hooks(p, nullptr);
}

torch::Tensor ShardedOptimizer::gradSlot(size_t i) const {
  return flatGrads_.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes());
}

void ShardedOptimizer::zeroGrad() {
  torch::NoGradGuard noGrad;
  if (mode_ == ShardMode::Broadcast) {
    for (torch::Tensor &p : params_)
      p.mutable_grad() = torch::Tensor();
    return;
  }
  // As DataParallel::zeroGrad: fresh gradients are copied into their slots by
  // step(), which is cheaper than zeroing the buffer and accumulating into it.
  for (torch::Tensor &p : params_)
    p.mutable_grad() = torch::Tensor();
}

void ShardedOptimizer::step() {
  torch::NoGradGuard noGrad;
  int rank = pg_->rank(), world = pg_->size();
  if (mode_ == ShardMode::Broadcast) {
    local_->step();
    // Every owner's broadcast in one collective: an all-gather over the flat
    // buffer, whose region r is rank r's parameters, is exactly "rank r
    // broadcasts its region" for every r at once. With NCCL that moves every
    // region in both directions of the links at the same time; separate
    // broadcasts on the one NCCL stream run one after the other, each using one
    // direction (twice the time at 2 ranks).
    allGatherParameters();
    return;
  }
  // Zero1: every gradient into its slot of the flat buffer (the hooks did it for
  // the ones backward produced; zeros for the rest), and its flag.
  std::vector<bool> hadLocally(params_.size());
  std::vector<float> flags(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor &grad = params_[i].mutable_grad();
    torch::Tensor slot = gradSlot(i);
    hadLocally[i] = grad.defined();
    flags[i] = grad.defined() ? 1.0f : 0.0f;
    if (grad.defined() && grad.data_ptr() == slot.data_ptr())
      continue;
    if (grad.defined())
      slot.copy_(grad);
    else
      slot.zero_();
    grad = slot;
  }
  flatGrads_.index_put_({flagIndex_},
                        torch::tensor(flags).to(flatGrads_.device(), flatGrads_.scalar_type()));
  torch::Tensor ownGrads = flatGrads_.narrow(0, rank * regionElements_, regionElements_);
  bool inPlace = pg_->kind() == BackendKind::Nccl; // NCCL reduces into its own chunk in place
  torch::Tensor reduced = inPlace ? ownGrads : torch::empty_like(ownGrads);
  markCommunication(0);
  pg_->wait(pg_->reduceScatter(reduced, flatGrads_), "gradient reduce-scatter");
  markCommunication(1);
  if (!inPlace)
    ownGrads.copy_(reduced);
  ownGrads.div_(world);
  std::vector<int> hidden = hideGradientsNobodyHad(hadLocally);
  local_->step();
  for (int i : hidden)
    params_[i].mutable_grad() = gradSlot(i);
  allGatherParameters();
}

std::vector<int> ShardedOptimizer::hideGradientsNobodyHad(const std::vector<bool> &hadLocally) {
  // An own parameter with a gradient here had one somewhere: only read the flags
  // (a device-to-host copy) when some own parameter had none here.
  bool allHad = std::all_of(ownIndices_.begin(), ownIndices_.end(),
                            [&](int i) { return hadLocally[i]; });
  if (allHad)
    return {};
  torch::Tensor summed = flatGrads_.index_select(0, flagIndex_).cpu();
  std::vector<int> hidden;
  for (int i : ownIndices_)
    if (summed[i].item<float>() == 0.0f) {
      params_[i].mutable_grad() = torch::Tensor();
      hidden.push_back(i);
    }
  return hidden;
}

void ShardedOptimizer::allGatherParameters() {
  torch::NoGradGuard noGrad;
  // NCCL gathers in place (the input is this rank's chunk of the output); Gloo
  // needs a separate input.
  bool inPlace = pg_->kind() == BackendKind::Nccl;
  torch::Tensor ownParams = flatParams_.narrow(0, pg_->rank() * regionElements_, regionElements_);
  torch::Tensor input = inPlace ? ownParams : ownParams.clone();
  markCommunication(2);
  pg_->wait(pg_->allGather(flatParams_, input), "parameter all-gather");
  markCommunication(3);
}

int64_t ShardedOptimizer::localStateBytes() const {
  int64_t total = 0;
  for (size_t k = 0; k < ownIndices_.size(); ++k)
    for (const auto &[name, t] : local_->state(k))
      total += bytesOf(t);
  return total;
}

int64_t ShardedOptimizer::localParameterBytes() const {
  int64_t total = 0;
  for (int i : ownIndices_)
    total += bytesOf(params_[i]);
  return total;
}

void ShardedOptimizer::saveConsolidated(const std::string &path) {
  // Each rank serialises the state of its own parameters ...
  torch::serialize::OutputArchive mine;
  for (size_t k = 0; k < ownIndices_.size(); ++k)
    for (const auto &[name, t] : local_->state(k))
      mine.write(statePrefix(ownIndices_[k]) + name, t.detach().cpu());
  std::ostringstream stream;
  mine.save_to(stream);
  std::string bytes = stream.str();

  // ... and rank 0 gathers them (lengths first, then the padded bytes).
  int world = pg_->size();
  auto longs = torch::TensorOptions().dtype(torch::kInt64).device(pg_->device());
  torch::Tensor length = torch::tensor({static_cast<int64_t>(bytes.size())}, longs);
  torch::Tensor lengths = torch::zeros({world}, longs);
  pg_->wait(pg_->allGather(lengths, length), "checkpoint size all-gather");
  torch::Tensor lengthsCpu = lengths.cpu();
  int64_t maxLength = lengthsCpu.max().item<int64_t>();
  torch::Tensor padded = torch::zeros({maxLength}, torch::kUInt8);
  std::memcpy(padded.data_ptr(), bytes.data(), bytes.size());
  padded = padded.to(pg_->device());
  torch::Tensor all = torch::zeros({maxLength * world}, padded.options());
  pg_->wait(pg_->allGather(all, padded), "checkpoint all-gather");

  if (pg_->rank() == 0) {
    torch::Tensor allCpu = all.cpu();
    torch::serialize::OutputArchive out;
    out.write("meta_num_params", torch::tensor(static_cast<int64_t>(params_.size())));
    out.write("meta_world_size", torch::tensor(static_cast<int64_t>(world)));
    for (size_t i = 0; i < params_.size(); ++i)
      out.write(paramKey(i), params_[i].detach().cpu().clone());
    for (int r = 0; r < world; ++r) {
      torch::serialize::InputArchive in;
      in.load_from(reinterpret_cast<const char *>(allCpu.data_ptr<uint8_t>()) + r * maxLength,
                   static_cast<size_t>(lengthsCpu[r].item<int64_t>()));
      for (const std::string &key : in.keys()) {
        torch::Tensor t;
        in.read(key, t);
        out.write(key, t);
      }
    }
    out.save_to(path);
  }
  pg_->barrier();
}

void ShardedOptimizer::loadConsolidated(const std::string &path) {
  // Rank 0 reads the file; everyone gets its bytes (no shared file system needed).
  std::string bytes;
  int64_t size = 0;
  if (pg_->rank() == 0) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw std::runtime_error("cannot read checkpoint '" + path + "'");
    std::ostringstream content;
    content << in.rdbuf();
    bytes = content.str();
    size = static_cast<int64_t>(bytes.size());
  }
  auto longs = torch::TensorOptions().dtype(torch::kInt64).device(pg_->device());
  torch::Tensor sizeTensor = torch::tensor({size}, longs);
  pg_->wait(pg_->broadcast(sizeTensor, 0), "checkpoint size broadcast");
  size = sizeTensor.cpu().item<int64_t>();
  torch::Tensor data = torch::zeros({size}, torch::kUInt8);
  if (pg_->rank() == 0)
    std::memcpy(data.data_ptr(), bytes.data(), bytes.size());
  data = data.to(pg_->device());
  pg_->wait(pg_->broadcast(data, 0), "checkpoint broadcast");
  data = data.cpu();

  torch::serialize::InputArchive in;
  in.load_from(reinterpret_cast<const char *>(data.data_ptr<uint8_t>()), static_cast<size_t>(size));
  torch::Tensor count;
  in.read("meta_num_params", count);
  if (count.item<int64_t>() != static_cast<int64_t>(params_.size()))
    throw std::runtime_error("checkpoint '" + path + "' holds " +
                             std::to_string(count.item<int64_t>()) + " parameters, the model has " +
                             std::to_string(params_.size()));
  std::vector<std::string> keys = in.keys();
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor value;
    in.read(paramKey(i), value);
    if (value.sizes() != params_[i].sizes())
      throw std::runtime_error("checkpoint parameter " + std::to_string(i) + " has shape " +
                               c10::str(value.sizes()) + ", the model's is " +
                               c10::str(params_[i].sizes()));
    params_[i].copy_(value);
  }
  for (size_t k = 0; k < ownIndices_.size(); ++k) {
    std::string prefix = statePrefix(ownIndices_[k]);
    ParamState state;
    for (const std::string &key : keys)
      if (key.rfind(prefix, 0) == 0) {
        torch::Tensor t;
        in.read(key, t);
        state.emplace_back(key.substr(prefix.size()), t);
      }
    local_->loadState(k, state);
  }
}

} // namespace tessel::dist
