//===- bench/distributed/ShardedOptimizer.cpp - Optimizer-state sharding and ZeRO-1 ---===//

#include "bench/distributed/ShardedOptimizer.h"
#include "bench/distributed/ConsolidatedCheckpoint.h"
#include "bench/distributed/Strategy.h"
#include "bench/distributed/Buckets.h"
#include "bench/distributed/GradReadyHook.h"

#include "bench/model/AdamW.h"

#include <torch/torch.h>

#include <algorithm>
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
  TesselAdamWOptimizer(std::vector<torch::Tensor> params, const model::AdamWOptions &options,
                       std::vector<torch::Tensor> workingCopies)
      : optimizer_(std::move(params), options) {
    if (!workingCopies.empty())
      optimizer_.setWorkingCopies(std::move(workingCopies));
  }
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


/// Parameter offsets and chunk sizes in Zero1's buckets are multiples of this
/// many elements, so every slice starts aligned for vectorised kernels.
constexpr int64_t kAlignElements = 16;

int64_t alignUp(int64_t n) { return (n + kAlignElements - 1) / kAlignElements * kAlignElements; }

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

OptimizerFactory tesselAdamW(const model::AdamWOptions &options,
                             std::vector<torch::Tensor> workingCopies) {
  model::AdamWOptions copy = options;
  return [copy, workingCopies](std::vector<torch::Tensor> params) -> std::unique_ptr<LocalOptimizer> {
    return std::make_unique<TesselAdamWOptimizer>(std::move(params), copy, workingCopies);
  };
}

ShardedOptimizer::ShardedOptimizer(std::vector<torch::Tensor> params,
                                   std::shared_ptr<ProcessGroup> pg, OptimizerFactory factory,
                                   ShardMode mode, double bucketMb, int stepGroups)
    : pg_(std::move(pg)), mode_(mode) {
  if (!pg_ || !factory)
    throw std::invalid_argument("ShardedOptimizer needs a process group and an optimizer factory");
  if (mode_ == ShardMode::Zero1 && !(bucketMb > 0))
    throw std::invalid_argument("ShardedOptimizer: the bucket size must be positive");
  if (mode_ == ShardMode::Zero1 && stepGroups < 1)
    throw std::invalid_argument("ShardedOptimizer: the number of step groups must be positive");
  for (torch::Tensor &p : params)
    if (p.requires_grad())
      params_.push_back(p);
  if (params_.empty())
    throw std::invalid_argument("ShardedOptimizer: no parameter requires a gradient");
  for (const torch::Tensor &p : params_)
    if (p.scalar_type() != params_[0].scalar_type() || p.device() != pg_->device())
      throw std::invalid_argument("ShardedOptimizer: every parameter must have one dtype and live "
                                  "on the process group's device (" + pg_->device().str() + ")");

  int64_t elements = mode_ == ShardMode::Zero1
                         ? layOutByBucket(std::max<int64_t>(1, static_cast<int64_t>(bucketMb * (1 << 20))))
                         : layOutByOwner();
  torch::NoGradGuard noGrad;
  flatParams_ = torch::zeros({elements}, params_[0].options());
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor view = flatParams_.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes());
    view.copy_(params_[i]);
    params_[i].set_data(view);
  }
  pg_->wait(pg_->broadcast(flatParams_, 0), "broadcast of rank 0's parameters");
  // The local optimizer steps whole own parameters (Broadcast) or 1-D views of
  // the own slices of the flat buffer (Zero1).
  for (const LocalShard &s : shards_)
    localParams_.push_back(mode_ == ShardMode::Zero1
                               ? flatParams_.narrow(0, offsets_[s.param] + s.offset, s.numel)
                               : params_[s.param]);
  if (mode_ == ShardMode::Broadcast) {
    groupShardBegin_ = {0, shards_.size()};
    locals_.push_back(factory(localParams_));
    return;
  }
  setUpGradientBuckets();
  formStepGroups(stepGroups);
  for (size_t g = 0; g + 1 < groupShardBegin_.size(); ++g) {
    size_t begin = groupShardBegin_[g], end = groupShardBegin_[g + 1];
    locals_.push_back(begin == end ? nullptr
                                   : factory(std::vector<torch::Tensor>(
                                         localParams_.begin() + static_cast<std::ptrdiff_t>(begin),
                                         localParams_.begin() + static_cast<std::ptrdiff_t>(end))));
  }
}

void ShardedOptimizer::formStepGroups(int groups) {
  // Consecutive buckets, a group per 1/groups of the flat buffer where a bucket
  // starts (the same on every rank, so the all-gathers go out in the same order).
  const Bucket &last = buckets_.back();
  int64_t total = last.offset + last.chunk * pg_->size();
  groupBucketBegin_.clear();
  int64_t previous = -1;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    int64_t g = total > 0 ? std::min<int64_t>(groups - 1, buckets_[b].offset * groups / total) : 0;
    if (g != previous)
      groupBucketBegin_.push_back(b);
    previous = g;
  }
  groupBucketBegin_.push_back(buckets_.size());
  // shards_ are in bucket order: each group's are consecutive.
  size_t count = groupBucketBegin_.size() - 1;
  groupShardBegin_.assign(count + 1, shards_.size());
  size_t k = 0;
  for (size_t g = 0; g < count; ++g) {
    while (k < shards_.size() &&
           static_cast<size_t>(bucketOf_[shards_[k].param]) < groupBucketBegin_[g])
      ++k;
    groupShardBegin_[g] = k;
  }
  // What waitForParameters() looks up: each parameter's group, by its tensor.
  groupOfParam_.assign(params_.size(), 0);
  for (size_t g = 0; g < count; ++g)
    for (size_t b = groupBucketBegin_[g]; b < groupBucketBegin_[g + 1]; ++b)
      for (int i : buckets_[b].params)
        groupOfParam_[i] = static_cast<int>(g);
  for (size_t i = 0; i < params_.size(); ++i)
    paramIndex_[params_[i].unsafeGetTensorImpl()] = static_cast<int>(i);
  gathers_.resize(count);
  gatherInputs_.resize(count);
}

std::pair<LocalOptimizer *, size_t> ShardedOptimizer::localOptimizerOf(size_t k) const {
  if (k >= shards_.size())
    throw std::out_of_range("ShardedOptimizer: no local shard " + std::to_string(k));
  // The last group starting at or before k (empty groups before it start there too).
  size_t g = static_cast<size_t>(
      std::upper_bound(groupShardBegin_.begin(), groupShardBegin_.end(), k) -
      groupShardBegin_.begin() - 1);
  return {locals_.at(g).get(), k - groupShardBegin_[g]};
}

ParamState ShardedOptimizer::localState(size_t k) const {
  auto [optimizer, i] = localOptimizerOf(k);
  return optimizer->state(i);
}

ShardedOptimizer::~ShardedOptimizer() {
  for (Work &gather : gathers_) // the parameters must not be left half-written
    if (gather) {
      try {
        gather->wait();
      } catch (...) {
      }
    }
  if (mode_ == ShardMode::Zero1)
    for (const torch::Tensor &p : params_)
      clearGradReadyHook(p);
}

int64_t ShardedOptimizer::layOutByOwner() {
  std::vector<int64_t> bytes;
  for (const torch::Tensor &p : params_)
    bytes.push_back(bytesOf(p));
  int world = pg_->size();
  owners_ = assignOwners(bytes, world);
  std::vector<int64_t> used(world, 0);
  for (size_t i = 0; i < params_.size(); ++i)
    used[owners_[i]] += params_[i].numel();
  regionElements_ = *std::max_element(used.begin(), used.end());
  std::vector<int64_t> cursor(world, 0);
  offsets_.assign(params_.size(), 0);
  for (size_t i = 0; i < params_.size(); ++i) {
    int r = owners_[i];
    offsets_[i] = r * regionElements_ + cursor[r];
    cursor[r] += params_[i].numel();
    if (r == pg_->rank())
      shards_.push_back({static_cast<int>(i), 0, params_[i].numel()});
  }
  return regionElements_ * world;
}

int64_t ShardedOptimizer::layOutByBucket(int64_t bucketBytes) {
  std::vector<GradientSlot> slots;
  for (const torch::Tensor &p : params_)
    slots.push_back({bytesOf(p), 0});
  int rank = pg_->rank(), world = pg_->size();
  offsets_.assign(params_.size(), 0);
  bucketOf_.assign(params_.size(), 0);
  int64_t end = 0;
  for (std::vector<int> &group : assignBuckets(slots, bucketBytes)) {
    Bucket bucket;
    bucket.offset = end;
    int64_t used = 0;
    for (int i : group) {
      offsets_[i] = end + used;
      bucketOf_[i] = static_cast<int>(buckets_.size());
      used = alignUp(used + params_[i].numel());
    }
    bucket.chunk = alignUp((used + world - 1) / world);
    bucket.params = std::move(group);
    end += bucket.chunk * world;
    // This rank's slice, cut at the parameters' edges.
    int64_t lo = bucket.offset + rank * bucket.chunk, hi = lo + bucket.chunk;
    for (int i : bucket.params) {
      int64_t from = std::max(lo, offsets_[i]), to = std::min(hi, offsets_[i] + params_[i].numel());
      if (from < to)
        shards_.push_back({i, from - offsets_[i], to - from});
    }
    buckets_.push_back(std::move(bucket));
  }
  return end;
}

void ShardedOptimizer::allocateGradients(torch::ScalarType dtype) {
  flatGrads_ = torch::zeros({flatParams_.numel()}, flatParams_.options().dtype(dtype));
  // The reduce-scatter leaves the mean of each own chunk there (NCCL in place;
  // Gloo's output is copied back), and the local optimizer reads it there.
  localGrads_.clear();
  for (size_t k = 0; k < shards_.size(); ++k) {
    const LocalShard &s = shards_[k];
    localGrads_.push_back(flatGrads_.narrow(0, offsets_[s.param] + s.offset, s.numel));
    localParams_[k].mutable_grad() = localGrads_.back();
  }
  for (torch::Tensor &p : params_)
    p.mutable_grad() = torch::Tensor();
}

void ShardedOptimizer::setUpGradientBuckets() {
  allocateGradients(flatParams_.scalar_type());
  flags_ = torch::zeros({static_cast<int64_t>(params_.size())},
                        torch::TensorOptions().dtype(torch::kInt32).device(pg_->device()));
  launchOrder_.assign(bucketOf_, buckets_.size());
  works_.resize(buckets_.size());
  reduced_.resize(buckets_.size());
  for (size_t i = 0; i < params_.size(); ++i)
    setGradReadyHook(params_[i], [this, i] { onGradReady(static_cast<int>(i)); }); // cleared by ~ShardedOptimizer
}

const std::vector<int> &ShardedOptimizer::owners() const {
  if (mode_ == ShardMode::Zero1)
    throw std::logic_error("ShardedOptimizer::owners(): zero1 shards every gradient bucket by "
                           "elements, so a parameter has no single owner; use localShards()");
  return owners_;
}

torch::Tensor ShardedOptimizer::gradSlot(size_t i) const {
  return flatGrads_.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes());
}

torch::Tensor ShardedOptimizer::slotAsGradient(const torch::Tensor &slot) const {
  // A gradient in another dtype than its parameter's would break the next
  // backward's accumulation and readers of .grad(): there is none then.
  return slot.scalar_type() == params_[0].scalar_type() ? slot : torch::Tensor();
}

void ShardedOptimizer::reduceGradientsIn(torch::ScalarType dtype) {
  if (mode_ != ShardMode::Zero1)
    throw std::logic_error("ShardedOptimizer: only zero1 reduces gradients in its own dtype");
  if (!at::isFloatingType(dtype))
    throw std::invalid_argument("ShardedOptimizer: gradients are reduced in a floating-point dtype");
  std::lock_guard<std::mutex> lock(mutex_);
  if (launchOrder_.inBackward())
    throw std::logic_error("ShardedOptimizer: reduceGradientsIn() between a backward and step()");
  if (dtype != flatGrads_.scalar_type())
    allocateGradients(dtype);
}

torch::ScalarType ShardedOptimizer::gradientReduceDtype() const {
  return flatGrads_.defined() ? flatGrads_.scalar_type() : flatParams_.scalar_type();
}

int64_t ShardedOptimizer::gradientBufferBytes() const {
  return flatGrads_.defined() ? flatGrads_.numel() * static_cast<int64_t>(flatGrads_.element_size())
                              : 0;
}

void ShardedOptimizer::zeroGrad() {
  torch::NoGradGuard noGrad;
  if (mode_ == ShardMode::Zero1) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (launchOrder_.inBackward()) // its buckets are on the wire: every rank must finish with step()
      throw std::logic_error("ShardedOptimizer (zero1): zeroGrad() after a backward without step()");
  }
  // As DataParallel::zeroGrad: the hooks copy fresh gradients into their slots,
  // which is cheaper than zeroing the buffer and accumulating into it.
  for (torch::Tensor &p : params_)
    p.mutable_grad() = torch::Tensor();
}

void ShardedOptimizer::onGradReady(int param) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!launchOrder_.arrive(param)) // its bucket may be on the wire already: the sum would be lost
    throw std::runtime_error("ShardedOptimizer (zero1): parameter " + std::to_string(param) +
                             " got a second gradient before step(); zero1 reduces each "
                             "backward's gradients during it, so call step() after each backward");
  // Into the slot right away, so autograd's tensor is freed now.
  torch::Tensor &grad = params_[param].mutable_grad();
  torch::Tensor slot = gradSlot(param);
  if (grad.defined() && grad.data_ptr() != slot.data_ptr()) {
    torch::NoGradGuard noGrad;
    slot.copy_(grad);
    grad = slotAsGradient(slot);
  }
  launchReadyBuckets(/*fromHook=*/true);
}

void ShardedOptimizer::launchReadyBuckets(bool fromHook) {
  launchOrder_.launchReady([this](size_t b) { launchBucket(b); }, fromHook);
}

bool ShardedOptimizer::hasGradient(int param) const {
  // A slot view whose hook did not fire in this backward is last step's.
  const torch::Tensor &grad = params_[param].grad();
  return launchOrder_.arrived(param) ||
         (grad.defined() && grad.data_ptr() != gradSlot(param).data_ptr());
}

void ShardedOptimizer::launchBucket(size_t b) {
  torch::NoGradGuard noGrad;
  const Bucket &bucket = buckets_[b];
  for (int i : bucket.params) {
    if (launchOrder_.arrived(i)) // the hook has put it in its slot
      continue;
    torch::Tensor &grad = params_[i].mutable_grad();
    torch::Tensor slot = gradSlot(i);
    if (hasGradient(i))
      slot.copy_(grad); // set without a backward
    else
      slot.zero_();
    grad = slotAsGradient(slot);
  }
  torch::Tensor input = flatGrads_.narrow(0, bucket.offset, bucket.chunk * pg_->size());
  torch::Tensor own = input.narrow(0, pg_->rank() * bucket.chunk, bucket.chunk);
  // NCCL reduces into its own chunk in place and averages (no division pass
  // afterwards); Gloo needs a separate output and has no average.
  bool nccl = pg_->kind() == BackendKind::Nccl;
  reduced_[b] = nccl ? own : torch::empty_like(own);
  works_[b] = pg_->reduceScatter(reduced_[b], input,
                                 nccl ? c10d::ReduceOp::AVG : c10d::ReduceOp::SUM);
}

std::vector<bool> ShardedOptimizer::finishGradientReduction() {
  std::lock_guard<std::mutex> lock(mutex_);
  // What the hooks have not launched (all of it if no hook fired): gradients
  // that never came count as zero.
  launchOrder_.release();
  // Pinned, so the upload does not make the host wait for the backward.
  bool cuda = flags_.is_cuda();
  torch::Tensor flags = torch::empty(
      flags_.sizes(), torch::TensorOptions().dtype(torch::kInt32).pinned_memory(cuda));
  int32_t *flag = flags.data_ptr<int32_t>();
  std::vector<bool> hadLocally(params_.size());
  for (size_t i = 0; i < params_.size(); ++i) {
    hadLocally[i] = hasGradient(static_cast<int>(i));
    flag[i] = hadLocally[i] ? 1 : 0;
  }
  launchReadyBuckets(/*fromHook=*/false);
  flags_.copy_(flags, /*non_blocking=*/cuda);
  Work flagWork = pg_->allReduce(flags_);
  markCommunication(0);
  for (size_t b = 0; b < buckets_.size(); ++b)
    pg_->wait(works_[b], "gradient reduce-scatter of bucket " + std::to_string(b));
  pg_->wait(flagWork, "gradient flag all-reduce");
  markCommunication(1);
  torch::NoGradGuard noGrad;
  int rank = pg_->rank();
  for (size_t b = 0; b < buckets_.size(); ++b) {
    const Bucket &bucket = buckets_[b];
    torch::Tensor own = flatGrads_.narrow(0, bucket.offset + rank * bucket.chunk, bucket.chunk);
    if (reduced_[b].data_ptr() != own.data_ptr())
      own.copy_(reduced_[b]);
  }
  if (!localGrads_.empty() && pg_->kind() != BackendKind::Nccl)
    at::_foreach_div_(localGrads_, static_cast<double>(pg_->size()));
  std::fill(works_.begin(), works_.end(), Work());
  std::fill(reduced_.begin(), reduced_.end(), torch::Tensor());
  launchOrder_.finish();
  return hadLocally;
}

void ShardedOptimizer::step() {
  torch::NoGradGuard noGrad;
  if (mode_ == ShardMode::Broadcast) {
    locals_[0]->step();
    // Every owner's broadcast in one collective: an all-gather over the flat
    // buffer, whose region r is rank r's parameters, is exactly "rank r
    // broadcasts its region" for every r at once. With NCCL that moves every
    // region in both directions of the links at the same time; separate
    // broadcasts on the one NCCL stream run one after the other, each using one
    // direction (twice the time at 2 ranks).
    allGatherParameters();
    return;
  }
  // The last all-gathers (NCCL: in place, reading this rank's chunk) must be
  // done before the local optimizers write the chunk again.
  waitForAllParameters();
  std::vector<bool> hadLocally = finishGradientReduction();
  std::vector<size_t> hidden = hideGradientsNobodyHad(hadLocally);
  // Group by group: step it, then send its parameters while the next one steps
  // (NCCL: the all-gather waits for the step on its own stream; the compute
  // stream goes on with the next group). Overlapping the next forward, the last
  // group goes first: buckets are in backward order, so it holds the first
  // layers, whose parameters the forward needs first.
  size_t groups = locals_.size();
  for (size_t i = 0; i < groups; ++i) {
    size_t g = overlapForward_ ? groups - 1 - i : i;
    if (locals_[g])
      locals_[g]->step();
    gatherInputs_[g].clear();
    gathers_[g] = launchGroupAllGather(g, gatherInputs_[g]);
  }
  for (size_t k : hidden)
    localParams_[k].mutable_grad() = localGrads_[k];
  if (!overlapForward_)
    waitForAllParameters();
}

void ShardedOptimizer::overlapAllGatherWithForward(bool on) {
  if (on && mode_ != ShardMode::Zero1)
    throw std::logic_error("ShardedOptimizer: only zero1 can overlap its parameter all-gather "
                           "with the next forward");
  if (!on)
    waitForAllParameters();
  overlapForward_ = on;
}

void ShardedOptimizer::waitForGroup(size_t g) {
  if (!gathers_[g])
    return;
  Work gather = std::move(gathers_[g]);
  gathers_[g] = Work();
  pg_->wait(gather, "parameter all-gather of step group " + std::to_string(g));
  gatherInputs_[g].clear();
}

void ShardedOptimizer::waitForParameters(const std::vector<torch::Tensor> &params) {
  std::vector<size_t> groups;
  for (const torch::Tensor &p : params) {
    auto it = paramIndex_.find(p.unsafeGetTensorImpl());
    if (it == paramIndex_.end())
      continue;
    size_t g = static_cast<size_t>(groupOfParam_[it->second]);
    if (gathers_[g] && std::find(groups.begin(), groups.end(), g) == groups.end())
      groups.push_back(g);
  }
  if (groups.empty())
    return;
  markCommunication(2);
  for (size_t g : groups)
    waitForGroup(g);
  markCommunication(3);
}

void ShardedOptimizer::waitForAllParameters() {
  if (stepGroupsInFlight() == 0)
    return;
  markCommunication(2);
  for (size_t g = 0; g < gathers_.size(); ++g)
    waitForGroup(g);
  markCommunication(3);
}

size_t ShardedOptimizer::stepGroupsInFlight() const {
  return static_cast<size_t>(
      std::count_if(gathers_.begin(), gathers_.end(), [](const Work &w) { return bool(w); }));
}

Work ShardedOptimizer::launchGroupAllGather(size_t g, std::vector<torch::Tensor> &inputs) {
  // One all-gather per bucket, coalesced into one collective (NCCL: one group
  // launch), so the many buckets cost about what one all-gather does. NCCL
  // gathers in place (the input is this rank's chunk of the output); Gloo needs
  // a separate input.
  bool inPlace = pg_->kind() == BackendKind::Nccl;
  int rank = pg_->rank(), world = pg_->size();
  std::vector<torch::Tensor> outputs, groupInputs;
  for (size_t b = groupBucketBegin_[g]; b < groupBucketBegin_[g + 1]; ++b) {
    const Bucket &bucket = buckets_[b];
    outputs.push_back(flatParams_.narrow(0, bucket.offset, bucket.chunk * world));
    torch::Tensor own = outputs.back().narrow(0, rank * bucket.chunk, bucket.chunk);
    groupInputs.push_back(inPlace ? own : own.clone());
  }
  inputs.insert(inputs.end(), groupInputs.begin(), groupInputs.end());
  return pg_->allGatherCoalesced(outputs, groupInputs);
}

std::vector<size_t> ShardedOptimizer::hideGradientsNobodyHad(const std::vector<bool> &hadLocally) {
  // A shard whose parameter had a gradient here had one somewhere: only read the
  // flags (a device-to-host copy) when some local shard's parameter had none here.
  bool allHad = std::all_of(shards_.begin(), shards_.end(),
                            [&](const LocalShard &s) { return hadLocally[s.param]; });
  if (allHad)
    return {};
  torch::Tensor summed = flags_.cpu();
  const int32_t *counts = summed.data_ptr<int32_t>();
  std::vector<size_t> hidden;
  for (size_t k = 0; k < shards_.size(); ++k)
    if (counts[shards_[k].param] == 0) {
      localParams_[k].mutable_grad() = torch::Tensor();
      hidden.push_back(k);
    }
  return hidden;
}

void ShardedOptimizer::allGatherParameters() {
  torch::NoGradGuard noGrad;
  // NCCL gathers in place (the input is this rank's chunk of the output); Gloo
  // needs a separate input.
  bool inPlace = pg_->kind() == BackendKind::Nccl;
  int rank = pg_->rank();
  torch::Tensor ownParams = flatParams_.narrow(0, rank * regionElements_, regionElements_);
  torch::Tensor input = inPlace ? ownParams : ownParams.clone();
  markCommunication(2);
  pg_->wait(pg_->allGather(flatParams_, input), "parameter all-gather");
  markCommunication(3);
}

int64_t ShardedOptimizer::localStateBytes() const {
  int64_t total = 0;
  for (size_t k = 0; k < shards_.size(); ++k)
    for (const auto &[name, t] : localState(k))
      total += bytesOf(t);
  return total;
}

int64_t ShardedOptimizer::localParameterBytes() const {
  int64_t total = 0;
  for (const torch::Tensor &t : localParams_)
    total += bytesOf(t);
  return total;
}

void ShardedOptimizer::saveConsolidated(const std::string &path) {
  waitForAllParameters();
  std::vector<StatePiece> mine;
  for (size_t k = 0; k < shards_.size(); ++k)
    mine.push_back({shards_[k], localState(k)});
  tessel::dist::saveConsolidated(*pg_, path, params_, mine);
}

void ShardedOptimizer::loadConsolidated(const std::string &path) {
  waitForAllParameters();
  ConsolidatedCheckpoint checkpoint = ConsolidatedCheckpoint::load(*pg_, path, params_.size());
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < params_.size(); ++i)
    params_[i].copy_(checkpoint.param(i, params_[i].sizes()));
  // Each local shard takes its elements of its parameter's per-element state.
  for (size_t k = 0; k < shards_.size(); ++k) {
    ParamState state = checkpoint.stateOf(shards_[k]);
    for (auto &[name, t] : state)
      if (perElementState(name))
        t = t.reshape(localParams_[k].sizes());
    auto [optimizer, index] = localOptimizerOf(k);
    optimizer->loadState(index, state);
  }
}

} // namespace tessel::dist
