//===- bench/distributed/DataParallel.cpp - Four ways to do data-parallel gradients ---===//

#include "bench/distributed/DataParallel.h"
#include "bench/distributed/Buckets.h"
#include "bench/distributed/GradReadyHook.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>

namespace tessel::dist {

DdpMode parseDdpMode(const std::string &name) {
  if (name == "naive")
    return DdpMode::Naive;
  if (name == "flat")
    return DdpMode::Flat;
  if (name == "overlapped")
    return DdpMode::Overlapped;
  if (name == "bucketed")
    return DdpMode::Bucketed;
  throw std::invalid_argument("unknown DDP mode '" + name +
                              "' (expected naive, flat, overlapped or bucketed)");
}

const char *toString(DdpMode mode) {
  switch (mode) {
  case DdpMode::Naive:
    return "naive";
  case DdpMode::Flat:
    return "flat";
  case DdpMode::Overlapped:
    return "overlapped";
  case DdpMode::Bucketed:
    return "bucketed";
  }
  return "?";
}

CommHook parseCommHook(const std::string &name) {
  if (name == "none")
    return CommHook::None;
  if (name == "bf16")
    return CommHook::Bf16;
  throw std::invalid_argument("unknown communication hook '" + name + "' (expected none or bf16)");
}

const char *toString(CommHook hook) { return hook == CommHook::Bf16 ? "bf16" : "none"; }

namespace {

/// One in-flight reduction: `comm` goes over the wire; afterwards it is copied
/// into `target` when they differ (compression, or a gradient outside a bucket).
struct Pending {
  Work work;
  torch::Tensor comm, target;
};

} // namespace

/// Everything the hooks touch. Hooks run on autograd's threads, so it is
/// guarded by a mutex; the DataParallel owns it and the hooks hold a weak_ptr.
struct DataParallel::State {
  std::mutex mutex;
  std::shared_ptr<ProcessGroup> pg;
  DdpMode mode = DdpMode::Bucketed;
  CommHook hook = CommHook::None;
  bool viewGrads = false;
  bool findUnused = false;
  bool syncEnabled = true;

  std::vector<torch::Tensor> params;
  // Bucketed / Overlapped:
  std::vector<BucketInfo> buckets;
  std::vector<torch::Tensor> bucketBuffers; // Bucketed only (flat, one dtype each)
  std::vector<int> bucketOf, offsetOf;      // per parameter: bucket, element offset in it
  // Per step:
  BucketLaunchOrder order;      // which buckets may go, in order
  std::vector<Pending> pending; // per bucket

  torch::Tensor gradView(int p) {
    const torch::Tensor &param = params[p];
    return bucketBuffers[bucketOf[p]].narrow(0, offsetOf[p], param.numel()).view(param.sizes());
  }

  bool isBucketView(int p) {
    const torch::Tensor &grad = params[p].grad();
    return grad.defined() && grad.data_ptr() == gradView(p).data_ptr();
  }

  /// Makes parameter p's gradient live in its bucket slot (copying it there if
  /// autograd created a fresh tensor, e.g. after zero_grad(set_to_none)).
  void moveGradIntoBucket(int p) {
    torch::Tensor &grad = params[p].mutable_grad();
    torch::Tensor view = gradView(p);
    if (grad.defined() && grad.data_ptr() == view.data_ptr())
      return;
    torch::NoGradGuard noGrad;
    if (grad.defined())
      view.copy_(grad);
    else
      view.zero_();
    if (viewGrads)
      grad = view;
  }

  Pending reduce(torch::Tensor target) {
    Pending p;
    p.target = target;
    p.comm = hook == CommHook::Bf16 && target.scalar_type() != torch::kBFloat16
                 ? target.to(torch::kBFloat16)
                 : target;
    p.work = pg->allReduceMean(p.comm);
    return p;
  }

  void finish(Pending &p, const std::string &what) {
    pg->wait(p.work, what);
    if (!p.comm.is_same(p.target)) {
      torch::NoGradGuard noGrad;
      p.target.copy_(p.comm);
    }
  }

  /// Launches bucket b: gradients into the buffer (unless already views), then
  /// an asynchronous all-reduce.
  void launch(size_t b) {
    torch::NoGradGuard noGrad;
    const BucketInfo &bucket = buckets[b];
    if (mode == DdpMode::Overlapped) {
      int p = bucket.params[0];
      torch::Tensor &grad = params[p].mutable_grad();
      if (!grad.defined())
        grad = torch::zeros_like(params[p]);
      pending[b] = reduce(grad);
      return;
    }
    for (int p : bucket.params)
      moveGradIntoBucket(p);
    pending[b] = reduce(bucketBuffers[b]);
  }

  void launchReadyBuckets(bool fromHook) {
    order.launchReady([this](size_t b) { launch(b); }, fromHook);
  }

  /// Called by the hook of parameter p once its gradient is accumulated.
  void onGradReady(int p) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!syncEnabled) {
      if (viewGrads)
        moveGradIntoBucket(p);
      return;
    }
    if (mode != DdpMode::Overlapped && mode != DdpMode::Bucketed)
      return;
    if (!order.arrive(p)) // its bucket may already be on the wire: the sum would be lost
      throw std::runtime_error(
          "DataParallel: parameter " + std::to_string(p) +
          " got a second gradient before finishGradientSynchronization() (a second "
          "backward outside noSync()); synchronise after each backward, or accumulate "
          "the earlier ones inside noSync()");
    // Into the bucket right away: the fresh gradient autograd made is freed
    // now rather than when the whole bucket is ready.
    if (mode == DdpMode::Bucketed)
      moveGradIntoBucket(p);
    launchReadyBuckets(/*fromHook=*/true);
  }
};

namespace {

int dtypeKey(const torch::Tensor &t) {
  return static_cast<int>(t.scalar_type()) * 1000 + static_cast<int>(t.device().index() + 1);
}

/// The working copy that stands for `param` (index i of the module's parameters):
/// a leaf of the parameter's shape on its device, in a lower float precision.
torch::Tensor checkedWorkingCopy(const torch::Tensor &copy, const torch::Tensor &param, size_t i) {
  if (!copy.is_leaf() || !copy.requires_grad() || copy.sizes() != param.sizes() ||
      copy.device() != param.device() || !copy.is_floating_point() ||
      copy.element_size() >= param.element_size())
    throw std::invalid_argument(
        "DataParallel: working copy " + std::to_string(i) +
        " must be a leaf that requires grad, of its parameter's shape and device, in a lower "
        "float precision (e.g. a bf16 copy of an f32 parameter)");
  if (!param.requires_grad())
    throw std::invalid_argument("DataParallel: parameter " + std::to_string(i) +
                                " does not require grad but has a working copy");
  return copy;
}

} // namespace

DataParallel::DataParallel(std::shared_ptr<torch::nn::Module> module,
                           std::shared_ptr<ProcessGroup> pg, DdpOptions options,
                           std::vector<torch::Tensor> workingCopies)
    : module_(std::move(module)), pg_(std::move(pg)), options_(options),
      state_(std::make_shared<State>()) {
  if (!module_ || !pg_)
    throw std::invalid_argument("DataParallel needs a module and a process group");
  State &s = *state_;
  s.pg = pg_;
  s.mode = options_.mode;
  s.hook = options_.hook;
  s.findUnused = options_.findUnusedParameters;
  s.viewGrads = options_.mode == DdpMode::Bucketed && options_.gradientAsBucketView;
  std::vector<torch::Tensor> moduleParams = module_->parameters();
  if (!workingCopies.empty() && workingCopies.size() != moduleParams.size())
    throw std::invalid_argument("DataParallel: " + std::to_string(workingCopies.size()) +
                                " working copies for " + std::to_string(moduleParams.size()) +
                                " parameters (one per parameter, undefined where none)");
  std::vector<std::pair<torch::Tensor, torch::Tensor>> copyOfMaster;
  for (size_t i = 0; i < moduleParams.size(); ++i) {
    const torch::Tensor &param = moduleParams[i];
    if (!workingCopies.empty() && workingCopies[i].defined()) {
      s.params.push_back(checkedWorkingCopy(workingCopies[i], param, i));
      copyOfMaster.emplace_back(workingCopies[i], param);
    } else if (param.requires_grad()) {
      s.params.push_back(param);
    }
  }

  // Rank 0's weights everywhere, one broadcast per tensor (at start-up only).
  {
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> tensors = module_->parameters();
    if (options_.broadcastBuffers)
      for (const torch::Tensor &buffer : module_->buffers())
        tensors.push_back(buffer);
    for (torch::Tensor &t : tensors) {
      if (t.device() != pg_->device())
        throw std::invalid_argument("DataParallel: a parameter or buffer is on " + t.device().str() +
                                    " but the " + pg_->backendName() + " process group works on " +
                                    pg_->device().str());
      torch::Tensor contiguous = t.is_contiguous() ? t : t.contiguous();
      pg_->wait(pg_->broadcast(contiguous, 0), "broadcast of rank 0's parameters");
      if (!contiguous.is_same(t))
        t.copy_(contiguous);
    }
    for (auto &[copy, master] : copyOfMaster)
      copy.copy_(master);
  }

  if (options_.mode == DdpMode::Bucketed) {
    if (options_.autoBucketSize)
      calibrate();
    else if (!(options_.bucketSizeMb > 0))
      throw std::invalid_argument("bucketSizeMb must be positive");
    int64_t bytes = options_.autoBucketSize
                        ? calibration_.chosenBytes
                        : static_cast<int64_t>(options_.bucketSizeMb * (1 << 20));
    buildBuckets(std::max<int64_t>(bytes, 1));
  } else if (options_.mode == DdpMode::Overlapped) {
    buildBuckets(0);
  }
  if (!s.buckets.empty()) {
    s.order.assign(s.bucketOf, s.buckets.size());
    s.pending.resize(s.buckets.size());
    std::weak_ptr<State> weak = state_;
    for (size_t p = 0; p < s.params.size(); ++p)
      setGradReadyHook(s.params[p], [weak, index = static_cast<int>(p)] {
        if (auto state = weak.lock())
          state->onGradReady(index);
      });
  }
}

DataParallel::~DataParallel() {
  if (state_ && !state_->buckets.empty())
    for (const torch::Tensor &param : state_->params)
      clearGradReadyHook(param);
}

void DataParallel::buildBuckets(int64_t bucketBytes) {
  State &s = *state_;
  std::vector<GradientSlot> slots;
  for (const torch::Tensor &param : s.params)
    slots.push_back({param.numel() * static_cast<int64_t>(param.element_size()), dtypeKey(param)});
  // Overlapped: a bucket per parameter, i.e. a cap of one byte.
  std::vector<std::vector<int>> groups =
      bucketBytes > 0 ? assignBuckets(slots, bucketBytes,
                                      static_cast<int64_t>(options_.firstBucketMb * (1 << 20)),
                                      static_cast<int64_t>(options_.lastBucketMb * (1 << 20)))
                      : assignBuckets(slots, 1, 0);
  bucketBytes_ = bucketBytes;
  s.bucketOf.assign(s.params.size(), 0);
  s.offsetOf.assign(s.params.size(), 0);
  for (size_t b = 0; b < groups.size(); ++b) {
    BucketInfo info;
    info.params = groups[b];
    int64_t elements = 0;
    for (int p : groups[b]) {
      s.bucketOf[p] = static_cast<int>(b);
      s.offsetOf[p] = static_cast<int>(elements);
      elements += s.params[p].numel();
      info.bytes += slots[p].bytes;
    }
    s.buckets.push_back(std::move(info));
    if (options_.mode == DdpMode::Bucketed) {
      const torch::Tensor &first = s.params[groups[b][0]];
      s.bucketBuffers.push_back(torch::zeros({elements}, first.options()));
    }
  }
  if (s.viewGrads) {
    torch::NoGradGuard noGrad;
    for (size_t p = 0; p < s.params.size(); ++p)
      s.moveGradIntoBucket(static_cast<int>(p));
  }
}

void DataParallel::calibrate() {
  State &s = *state_;
  int64_t gradientBytes = 0;
  for (const torch::Tensor &param : s.params)
    gradientBytes += param.numel() * static_cast<int64_t>(param.element_size());
  // A few sizes from 256 KB up to the gradient size (at most 64 MB): enough to
  // separate the fixed cost from the per-byte cost without a long start-up.
  std::vector<double> sizes, times;
  int64_t top = std::clamp<int64_t>(gradientBytes, 1 << 20, 64 << 20);
  for (int64_t bytes = 256 << 10; bytes <= top; bytes *= 4) {
    torch::Tensor t = torch::ones({bytes / 4}, torch::TensorOptions().dtype(torch::kFloat32).device(pg_->device()));
    pg_->wait(pg_->allReduce(t), "calibration all-reduce");
    pg_->synchronizeDevice();
    const int reps = 5;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i)
      pg_->wait(pg_->allReduce(t), "calibration all-reduce");
    pg_->synchronizeDevice();
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / reps;
    sizes.push_back(static_cast<double>(bytes));
    times.push_back(seconds);
  }
  // Average the timings over ranks so every rank derives the same bucket size.
  torch::Tensor measured = torch::tensor(times, torch::kFloat64).to(pg_->device());
  pg_->wait(pg_->allReduce(measured), "calibration result all-reduce");
  measured = measured.cpu() / pg_->size();
  for (size_t i = 0; i < times.size(); ++i)
    times[i] = measured[static_cast<int64_t>(i)].item<double>();
  AllReduceCostModel model = fitAllReduceCost(sizes, times);
  calibration_.overheadMs = model.overheadSeconds * 1e3;
  calibration_.bandwidthGBs = model.bytesPerSecond / 1e9;
  calibration_.gradientBytes = gradientBytes;
  calibration_.chosenBytes = optimalBucketBytes(static_cast<double>(gradientBytes),
                                                model.overheadSeconds, model.bytesPerSecond);
}

const std::vector<torch::Tensor> &DataParallel::parameters() const { return state_->params; }
std::vector<BucketInfo> DataParallel::buckets() const { return state_->buckets; }
int64_t DataParallel::bucketBytes() const { return bucketBytes_; }
int DataParallel::bucketsLaunchedDuringBackward() const { return state_->order.launchedByHooks(); }
const BucketCalibration &DataParallel::calibration() const { return calibration_; }

void DataParallel::finishGradientSynchronization() {
  State &s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.syncEnabled)
    return;
  torch::NoGradGuard noGrad;
  // Which parameters got a gradient in this backward (for findUnusedParameters).
  std::vector<char> usedLocally(s.params.size(), 0);
  bool hookMode = s.mode == DdpMode::Overlapped || s.mode == DdpMode::Bucketed;
  for (size_t p = 0; p < s.params.size(); ++p)
    usedLocally[p] = hookMode ? s.order.arrived(static_cast<int>(p)) : s.params[p].grad().defined();

  if (s.mode == DdpMode::Naive) {
    for (torch::Tensor &param : s.params) {
      torch::Tensor &grad = param.mutable_grad();
      if (!grad.defined())
        grad = torch::zeros_like(param);
      Pending p = s.reduce(grad);
      s.finish(p, "gradient all-reduce");
    }
  } else if (s.mode == DdpMode::Flat) {
    std::vector<torch::Tensor> grads;
    for (torch::Tensor &param : s.params) {
      torch::Tensor &grad = param.mutable_grad();
      if (!grad.defined())
        grad = torch::zeros_like(param);
      grads.push_back(grad.reshape(-1));
    }
    if (!grads.empty()) {
      torch::Tensor flat = torch::cat(grads);
      Pending p = s.reduce(flat);
      s.finish(p, "flat gradient all-reduce");
      int64_t offset = 0;
      for (torch::Tensor &param : s.params) {
        param.mutable_grad().copy_(flat.narrow(0, offset, param.numel()).view(param.sizes()));
        offset += param.numel();
      }
    }
  } else {
    // Whatever the hooks have not launched (all of it if no hook fired): gradients
    // that never came count as zero.
    s.order.release();
    s.launchReadyBuckets(/*fromHook=*/false);
    for (size_t b = 0; b < s.buckets.size(); ++b)
      s.finish(s.pending[b], "gradient all-reduce of bucket " + std::to_string(b));
    if (s.mode == DdpMode::Bucketed)
      for (size_t p = 0; p < s.params.size(); ++p) {
        torch::Tensor &grad = s.params[p].mutable_grad();
        torch::Tensor view = s.gradView(static_cast<int>(p));
        if (s.viewGrads || !grad.defined())
          grad = view;
        else
          grad.copy_(view);
      }
    s.pending.assign(s.buckets.size(), Pending{});
    s.order.finish();
  }

  if (s.findUnused) {
    torch::Tensor usedHost = torch::zeros({static_cast<int64_t>(s.params.size())}, torch::kInt32);
    for (size_t p = 0; p < s.params.size(); ++p)
      usedHost[static_cast<int64_t>(p)] = static_cast<int32_t>(usedLocally[p]);
    torch::Tensor used = usedHost.to(pg_->device());
    pg_->wait(pg_->allReduce(used), "unused-parameter mask all-reduce");
    torch::Tensor usedCpu = used.cpu();
    const int32_t *counts = usedCpu.data_ptr<int32_t>();
    for (size_t p = 0; p < s.params.size(); ++p)
      if (counts[p] == 0)
        s.params[p].mutable_grad() = torch::Tensor();
  }
}

void DataParallel::zeroGrad() {
  // Gradients become undefined even with gradient-as-bucket-view: the next
  // backward then hands each fresh gradient to its hook, which copies it into
  // the bucket slot once (one read, one write) and makes .grad() the slot view.
  // Zeroing the buckets instead would cost a zero pass plus an accumulate
  // (two reads, one write) per gradient.
  State &s = *state_;
  std::lock_guard<std::mutex> lock(s.mutex);
  for (torch::Tensor &param : s.params)
    param.mutable_grad() = torch::Tensor();
}

DataParallel::NoSyncGuard::NoSyncGuard(DataParallel &ddp) : ddp_(ddp) {
  std::lock_guard<std::mutex> lock(ddp_.state_->mutex);
  previous_ = ddp_.state_->syncEnabled;
  ddp_.state_->syncEnabled = false;
}

DataParallel::NoSyncGuard::~NoSyncGuard() {
  std::lock_guard<std::mutex> lock(ddp_.state_->mutex);
  ddp_.state_->syncEnabled = previous_;
}

} // namespace tessel::dist
