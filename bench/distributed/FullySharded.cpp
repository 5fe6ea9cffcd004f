//===- bench/distributed/FullySharded.cpp - Fully sharded data parallel (ZeRO-3) -===//
#include "bench/distributed/FullySharded.h"
#include "bench/distributed/ConsolidatedCheckpoint.h"
#include "bench/distributed/GradReadyHook.h"
#include "bench/distributed/Strategy.h"

#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include <sys/stat.h>

namespace tessel::dist {

namespace {
/// Chunks are multiples of 16 elements, so every rank's chunk starts 64-byte aligned.
constexpr int64_t kChunkAlign = 16;

} // namespace

FullySharded::FullySharded(std::vector<torch::nn::Module *> units, std::shared_ptr<ProcessGroup> pg,
                           OptimizerFactory factory, FullyShardedOptions options)
    : pg_(std::move(pg)), options_(options) {
  if (!pg_ || !factory)
    throw std::invalid_argument("FullySharded needs a process group and an optimizer factory");
  if (options_.prefetch < 0 || options_.maxGatheredUnits < 1)
    throw std::invalid_argument("FullySharded: prefetch must be >= 0 and maxGatheredUnits >= 1");
  torch::NoGradGuard noGrad;
  int world = pg_->size(), rank = pg_->rank();
  std::unordered_set<const c10::TensorImpl *> seen;
  std::vector<torch::Tensor> shards;
  // Unit by unit: initialise (a meta-built model), flatten, keep this rank's chunk on the
  // device, and let the host copy go before the next unit.
  torch::Tensor fingerprints = torch::empty({2 * static_cast<int64_t>(units.size())}, torch::kFloat64);
  for (torch::nn::Module *module : units) {
    size_t k = units_.size();
    if (options_.materialize)
      options_.materialize(*module);
    Unit u;
    u.name = module->name() + " #" + std::to_string(k);
    int64_t numel = 0;
    for (torch::Tensor &p : module->parameters()) {
      if (!p.requires_grad())
        continue;
      if (!seen.insert(p.unsafeGetTensorImpl()).second)
        throw std::invalid_argument("FullySharded: a parameter belongs to two units (" + u.name + ")");
      if (p.scalar_type() != torch::kFloat)
        throw std::invalid_argument("FullySharded: parameters must be f32 (the master dtype)");
      if (p.is_meta())
        throw std::invalid_argument("FullySharded: unit " + u.name +
                                    " is on the meta device: give options.materialize");
      u.params.push_back(p);
      u.shapes.push_back(p.sizes().vec());
      u.numels.push_back(p.numel());
      u.offsets.push_back(numel);
      numel += p.numel();
    }
    if (u.params.empty())
      throw std::invalid_argument("FullySharded: unit " + u.name + " has no parameter to train");
    int64_t perRank = (numel + world - 1) / world;
    u.chunk = (perRank + kChunkAlign - 1) / kChunkAlign * kChunkAlign;
    torch::Tensor flat = torch::zeros({world * u.chunk}, u.params[0].options());
    for (size_t i = 0; i < u.params.size(); ++i)
      flat.narrow(0, u.offsets[i], u.params[i].numel()).copy_(u.params[i].reshape(-1));
    torch::Tensor f64 = flat.to(torch::kFloat64);
    fingerprints[2 * k] = f64.sum();
    fingerprints[2 * k + 1] = f64.square().sum();
    f64 = torch::Tensor();
    u.shard = flat.narrow(0, rank * u.chunk, u.chunk).to(pg_->device()).clone();
    flat = torch::Tensor(); // the host copy of the whole unit goes now
    // The gathered buffer is one tensor for the unit's lifetime and each parameter a view
    // into it, set once; freeing the unit frees the buffer's storage, not the tensor, so
    // what autograd saved of a parameter (W^T, a view) sees the values again after the
    // backward's gather, and holds no memory in between (FSDP's storage resize).
    u.full = torch::empty({pg_->size() * u.chunk}, u.shard.options().dtype(options_.paramDtype));
    for (size_t i = 0; i < u.params.size(); ++i)
      u.params[i].set_data(u.full.narrow(0, u.offsets[i], u.numels[i]).view(u.shapes[i]));
    unitIndex_[module] = k;
    firstParam_.push_back(k == 0 ? 0 : firstParam_.back() + units_.back().params.size());
    units_.push_back(std::move(u));
    reshard(units_.back());
    shards.push_back(units_.back().shard);
  }
  if (units_.empty())
    throw std::invalid_argument("FullySharded: no units");
  checkRanksAgree(fingerprints);
  for (size_t k = 0; k < units_.size(); ++k)
    for (torch::Tensor &p : units_[k].params)
      setGradReadyHook(p, [this, k] { onGradReady(k); }); // cleared by ~FullySharded
  local_ = factory(shards);
  nextReduction_ = static_cast<int>(units_.size()) - 1;
}

FullySharded::~FullySharded() {
  for (Unit &u : units_)
    for (torch::Tensor &p : u.params)
      clearGradReadyHook(p);
}

void FullySharded::checkRanksAgree(const torch::Tensor &fingerprints) {
  // A fingerprint per unit (sum and sum of squares in f64), all-gathered and compared.
  int world = pg_->size();
  int64_t n = fingerprints.numel() / 2;
  torch::Tensor input = fingerprints.to(pg_->device());
  torch::Tensor all = torch::empty({world * 2 * n}, input.options());
  pg_->wait(pg_->allGather(all, input), "FSDP parameter check at wrap time");
  all = all.cpu().view({world, 2 * n});
  for (int r = 0; r < world; ++r)
    for (int64_t k = 0; k < n; ++k)
      if (!all[r][2 * k].equal(all[0][2 * k]) || !all[r][2 * k + 1].equal(all[0][2 * k + 1])) {
        std::ostringstream message;
        message << "FullySharded: the parameters of unit " << units_[k].name
                << " differ between ranks at wrap time (sum " << all[0][2 * k].item<double>()
                << " on rank 0, " << all[r][2 * k].item<double>() << " on rank " << r
                << "): build the model from the same seed, or load the same checkpoint, on every rank";
        throw std::invalid_argument(message.str());
      }
}

size_t FullySharded::indexOf(const torch::nn::Module &unit) const {
  auto it = unitIndex_.find(&unit);
  if (it == unitIndex_.end())
    throw std::logic_error("FullySharded: " + unit.name() + " is not one of its units");
  return it->second;
}

void FullySharded::launchGather(Unit &u) {
  c10::StorageImpl *storage = u.full.storage().unsafeGetStorageImpl();
  size_t bytes = u.full.numel() * u.full.element_size();
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
  u.gatherInput = options_.paramDtype == torch::kFloat ? u.shard : u.shard.to(options_.paramDtype);
  u.gather = pg_->allGather(u.full, u.gatherInput);
  u.state = State::Gathering;
  peakGathered_ = std::max(peakGathered_, ++gathered_);
}

void FullySharded::prefetch(size_t k) {
  if (units_[k].state == State::Free && gathered_ < options_.maxGatheredUnits)
    launchGather(units_[k]);
}

void FullySharded::ensureGathered(size_t k) {
  Unit &u = units_[k];
  if (u.state == State::Gathered)
    return;
  if (u.state == State::Free)
    launchGather(u);
  mark(2);
  pg_->wait(u.gather, "FSDP all-gather of " + u.name);
  mark(3);
  u.gather = Work();
  u.gatherInput = torch::Tensor();
  u.state = State::Gathered;
}

void FullySharded::reshard(Unit &u) {
  // The memory returns to the allocator in stream order (the kernels still reading it were
  // issued before, on the stream that allocated it; NCCL's use is recorded or waited for).
  c10::StorageImpl *storage = u.full.storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(at::DataPtr(nullptr, storage->device()));
  storage->set_nbytes(0);
  if (u.state != State::Free)
    --gathered_;
  u.state = State::Free;
}

void FullySharded::beforeForward(torch::nn::Module &unit) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t k = indexOf(unit);
  ensureGathered(k);
  for (size_t ahead = k + 1; ahead <= k + options_.prefetch && ahead < units_.size(); ++ahead)
    prefetch(ahead);
}

void FullySharded::afterForward(torch::nn::Module &unit, const std::vector<torch::Tensor> &outputs) {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t k = indexOf(unit);
  bool hooked = false;
  for (const torch::Tensor &out : outputs)
    if (out.defined() && out.requires_grad()) {
      out.register_hook([this, k](const torch::Tensor &) {
        std::lock_guard<std::mutex> lock(mutex_);
        preBackward(k);
      });
      hooked = true;
    }
  // The last unit's backward comes first: keep it. A unit without a backward (no
  // gradient needed) is freed too.
  if (k + 1 < units_.size() || !hooked)
    reshard(units_[k]);
}

void FullySharded::preBackward(size_t k) {
  Unit &u = units_[k];
  if (u.backwardGathered)
    return;
  u.backwardGathered = true;
  inBackward_ = true;
  ensureGathered(k);
  for (size_t behind = 1; behind <= static_cast<size_t>(options_.prefetch) && behind <= k; ++behind)
    prefetch(k - behind);
}

void FullySharded::onGradReady(size_t k) {
  std::lock_guard<std::mutex> lock(mutex_);
  Unit &u = units_[k];
  if (!sync_) {
    if (++u.gradsIn == u.params.size())
      accumulate(u);
    return;
  }
  inBackward_ = true;
  if (++u.gradsIn == u.params.size())
    u.ready = true;
  launchReadyReductions(/*fromHook=*/true);
}

void FullySharded::accumulate(Unit &u) {
  torch::NoGradGuard noGrad;
  if (!u.accumulated.defined())
    u.accumulated = torch::zeros({pg_->size() * u.chunk}, u.shard.options());
  for (size_t i = 0; i < u.params.size(); ++i) {
    torch::Tensor &p = u.params[i];
    if (p.grad().defined()) {
      u.accumulated.narrow(0, u.offsets[i], u.numels[i]).add_(p.grad().reshape(-1));
      p.mutable_grad() = torch::Tensor();
    }
  }
  u.gradsIn = 0;
  u.backwardGathered = false;
  reshard(u);
}

void FullySharded::launchReadyReductions(bool fromHook) {
  while (nextReduction_ >= 0 && (units_[nextReduction_].ready || !fromHook)) {
    launchReduction(units_[nextReduction_]);
    if (fromHook)
      ++reducedByHooks_;
    --nextReduction_;
  }
}

void FullySharded::launchReduction(Unit &u) {
  int world = pg_->size();
  auto options = u.shard.options().dtype(options_.reduceDtype);
  u.gradInput = torch::zeros({world * u.chunk}, options);
  for (size_t i = 0; i < u.params.size(); ++i) {
    torch::Tensor &p = u.params[i];
    if (p.grad().defined()) {
      u.gradInput.narrow(0, u.offsets[i], u.numels[i]).copy_(p.grad().reshape(-1));
      p.mutable_grad() = torch::Tensor(); // autograd's copy is freed at once
    }
  }
  if (u.accumulated.defined()) { // the no-sync backwards' share, summed in f32
    if (u.gradInput.scalar_type() == torch::kFloat)
      u.gradInput.add_(u.accumulated);
    else
      u.gradInput.copy_(u.gradInput.to(torch::kFloat).add_(u.accumulated));
    u.accumulated = torch::Tensor();
  }
  u.gradShard = torch::empty({u.chunk}, options);
  u.reduce = pg_->reduceScatter(u.gradShard, u.gradInput);
  // The previous unit's reduction has had this unit's backward to finish: waiting for it
  // here (on the stream, as FSDP2's post-backward does) frees its flat gradients now
  // instead of holding every unit's until step().
  if (previousReduction_) {
    mark(2);
    pg_->wait(previousReduction_->reduce, "FSDP gradient reduce-scatter of " + previousReduction_->name);
    mark(3);
    previousReduction_->gradInput = torch::Tensor();
  }
  previousReduction_ = &u;
  if (u.state != State::Free)
    reshard(u);
}

void FullySharded::zeroGrad() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (inBackward_)
    throw std::logic_error("FullySharded: zeroGrad() after a backward without step()");
  reducedByHooks_ = 0;
  peakGathered_ = gathered_;
  for (Unit &u : units_) {
    for (torch::Tensor &p : u.params)
      p.mutable_grad() = torch::Tensor();
    u.accumulated = torch::Tensor();
  }
}

void FullySharded::step() {
  std::lock_guard<std::mutex> lock(mutex_);
  launchReadyReductions(/*fromHook=*/false);
  mark(0);
  for (Unit &u : units_)
    pg_->wait(u.reduce, "FSDP gradient reduce-scatter of " + u.name);
  mark(1);
  torch::NoGradGuard noGrad;
  double scale = 1.0 / pg_->size();
  for (Unit &u : units_) {
    torch::Tensor g = u.gradShard.scalar_type() == torch::kFloat ? u.gradShard
                                                                 : u.gradShard.to(torch::kFloat);
    u.shard.mutable_grad() = g.mul_(scale);
    u.gradInput = torch::Tensor();
    u.reduce = Work();
  }
  local_->step();
  for (Unit &u : units_) {
    u.shard.mutable_grad() = torch::Tensor();
    u.gradShard = torch::Tensor();
    u.gradsIn = 0;
    u.ready = u.backwardGathered = false;
  }
  nextReduction_ = static_cast<int>(units_.size()) - 1;
  previousReduction_ = nullptr;
  inBackward_ = false;
}

void FullySharded::gatherAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (size_t k = 0; k < units_.size(); ++k)
    ensureGathered(k);
}

int64_t FullySharded::shardBytes() const {
  int64_t total = 0;
  for (const Unit &u : units_)
    total += bytesOf(u.shard);
  return total;
}

int64_t FullySharded::gradientShardBytes() const {
  int64_t total = 0;
  for (const Unit &u : units_)
    total += u.chunk * static_cast<int64_t>(c10::elementSize(options_.reduceDtype));
  return total;
}

int64_t FullySharded::stateBytes() const {
  int64_t total = 0;
  for (size_t k = 0; k < units_.size(); ++k)
    for (const auto &[name, t] : local_->state(k))
      total += bytesOf(t);
  return total;
}

void FullySharded::requireNoBackwardInFlight(const char *call) const {
  if (inBackward_)
    throw std::logic_error(std::string("FullySharded: ") + call +
                           "() between a backward and its step()");
}

void FullySharded::freeAllUnits() {
  for (Unit &u : units_) {
    if (u.state == State::Gathering)
      pg_->wait(u.gather, "FSDP all-gather of " + u.name);
    reshard(u);
  }
}

std::vector<FullySharded::Overlap> FullySharded::overlapsOfShard(size_t k) const {
  const Unit &u = units_[k];
  int64_t begin = pg_->rank() * u.chunk, end = begin + u.chunk;
  std::vector<Overlap> overlaps;
  for (size_t i = 0; i < u.params.size(); ++i) {
    int64_t lo = std::max(begin, u.offsets[i]), hi = std::min(end, u.offsets[i] + u.numels[i]);
    if (lo < hi)
      overlaps.push_back({i, lo - u.offsets[i], lo - begin, hi - lo});
  }
  return overlaps;
}

void FullySharded::saveConsolidated(const std::string &path) {
  std::lock_guard<std::mutex> lock(mutex_);
  requireNoBackwardInFlight("saveConsolidated");
  torch::NoGradGuard noGrad;
  // The f32 masters, gathered unit by unit (whatever dtype the units compute in); rank 0
  // keeps them on the host for the file.
  std::vector<torch::Tensor> params;
  std::vector<StatePiece> mine;
  for (size_t k = 0; k < units_.size(); ++k) {
    Unit &u = units_[k];
    torch::Tensor full = torch::empty({pg_->size() * u.chunk}, u.shard.options());
    pg_->wait(pg_->allGather(full, u.shard), "FSDP checkpoint gather of " + u.name);
    torch::Tensor host = pg_->rank() == 0 ? full.cpu() : torch::Tensor();
    for (size_t i = 0; i < u.params.size(); ++i)
      params.push_back(host.defined() ? host.narrow(0, u.offsets[i], u.numels[i]).view(u.shapes[i])
                                      : torch::Tensor());
    ParamState state = local_->state(k);
    for (const Overlap &o : overlapsOfShard(k)) {
      StatePiece piece{{static_cast<int>(firstParam_[k] + o.param), o.inParam, o.numel}, {}};
      for (const auto &[name, t] : state)
        piece.state.emplace_back(name, perElementState(name) ? t.narrow(0, o.inChunk, o.numel) : t);
      mine.push_back(std::move(piece));
    }
  }
  tessel::dist::saveConsolidated(*pg_, path, params, mine);
}

void FullySharded::loadConsolidated(const std::string &path) {
  std::lock_guard<std::mutex> lock(mutex_);
  requireNoBackwardInFlight("loadConsolidated");
  size_t numParams = firstParam_.back() + units_.back().params.size();
  ConsolidatedCheckpoint checkpoint = ConsolidatedCheckpoint::load(*pg_, path, numParams);
  torch::NoGradGuard noGrad;
  freeAllUnits();
  for (size_t k = 0; k < units_.size(); ++k) {
    Unit &u = units_[k];
    u.shard.zero_(); // the padding stays zero
    ParamState state;
    for (const Overlap &o : overlapsOfShard(k)) {
      size_t param = firstParam_[k] + o.param;
      torch::Tensor value = checkpoint.param(param, u.shapes[o.param]).reshape(-1);
      u.shard.narrow(0, o.inChunk, o.numel).copy_(value.narrow(0, o.inParam, o.numel));
      ParamState piece = checkpoint.stateOf({static_cast<int>(param), o.inParam, o.numel});
      for (auto &[name, t] : piece) {
        auto it = std::find_if(state.begin(), state.end(), [&](const auto &e) { return e.first == name; });
        if (it == state.end()) {
          state.emplace_back(name, perElementState(name) ? torch::zeros({u.chunk}, t.options()) : t);
          it = state.end() - 1;
        }
        if (perElementState(name))
          it->second.narrow(0, o.inChunk, o.numel).copy_(t);
      }
    }
    local_->loadState(k, state);
  }
}

namespace {
/// The layout a sharded checkpoint must match: world size, then per unit its chunk.
torch::Tensor layoutOf(int world, const std::vector<int64_t> &chunks) {
  std::vector<int64_t> values = {world, static_cast<int64_t>(chunks.size())};
  values.insert(values.end(), chunks.begin(), chunks.end());
  return torch::tensor(values, torch::kInt64);
}
} // namespace

void FullySharded::saveSharded(const std::string &directory) {
  std::lock_guard<std::mutex> lock(mutex_);
  requireNoBackwardInFlight("saveSharded");
  std::vector<int64_t> chunks;
  torch::serialize::OutputArchive mine;
  for (size_t k = 0; k < units_.size(); ++k) {
    chunks.push_back(units_[k].chunk);
    std::string unit = "unit_" + std::to_string(k) + "_";
    mine.write(unit + "shard", units_[k].shard.detach().cpu());
    for (const auto &[name, t] : local_->state(k))
      mine.write(unit + "state_" + name, t.detach().cpu());
  }
  if (::mkdir(directory.c_str(), 0755) != 0 && errno != EEXIST)
    throw std::runtime_error("FullySharded: cannot create '" + directory + "': " + std::strerror(errno));
  if (pg_->rank() == 0) {
    torch::serialize::OutputArchive index;
    index.write("layout", layoutOf(pg_->size(), chunks));
    index.save_to(directory + "/index.pt");
  }
  mine.save_to(directory + "/rank" + std::to_string(pg_->rank()) + ".pt");
  pg_->barrier(); // every file is written
}

void FullySharded::loadSharded(const std::string &directory) {
  std::lock_guard<std::mutex> lock(mutex_);
  requireNoBackwardInFlight("loadSharded");
  std::vector<int64_t> chunks;
  for (const Unit &u : units_)
    chunks.push_back(u.chunk);
  torch::serialize::InputArchive index;
  index.load_from(directory + "/index.pt");
  torch::Tensor saved;
  index.read("layout", saved);
  torch::Tensor expected = layoutOf(pg_->size(), chunks);
  if (!saved.equal(expected))
    throw std::invalid_argument(
        "FullySharded: the sharded checkpoint in '" + directory + "' was written by " +
        std::to_string(saved[0].item<int64_t>()) + " ranks with " +
        std::to_string(saved[1].item<int64_t>()) + " units; this run has " +
        std::to_string(pg_->size()) + " ranks and " + std::to_string(units_.size()) +
        " units with other chunks: load a consolidated checkpoint to change the layout");
  torch::serialize::InputArchive mine;
  mine.load_from(directory + "/rank" + std::to_string(pg_->rank()) + ".pt");
  std::vector<std::string> keys = mine.keys();
  torch::NoGradGuard noGrad;
  freeAllUnits();
  for (size_t k = 0; k < units_.size(); ++k) {
    Unit &u = units_[k];
    std::string unit = "unit_" + std::to_string(k) + "_";
    torch::Tensor shard;
    mine.read(unit + "shard", shard);
    u.shard.copy_(shard);
    ParamState state;
    std::string prefix = unit + "state_";
    for (const std::string &key : keys)
      if (key.rfind(prefix, 0) == 0) {
        torch::Tensor t;
        mine.read(key, t);
        state.emplace_back(key.substr(prefix.size()), t);
      }
    local_->loadState(k, state);
  }
  pg_->barrier();
}

} // namespace tessel::dist
