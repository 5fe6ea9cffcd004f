//===- bench/ops/AdamW.cpp - kernels/adamw.tsl: every parameter in one launch ===//
//
// adamw_multi reaches every tensor of a kind (params, grads, moments, step counts) from one
// base pointer, the kind's lowest address, by an element offset, and runs one program per
// chunk of at most kChunk elements (adamw_multi_copy also writes each parameter's working
// copy). The chunk table (7 x i64 per chunk) is built on the
// host for each set of addresses and kept (staged in pinned memory, and on the device) for
// as long as the process lives: a CUDA graph that captured its upload replays it.
//
//===----------------------------------------------------------------------===//
#include "bench/ops/FusedOps.h"
#include "bench/ops/OpSupport.h"

#include <torch/torch.h>

#ifdef TESSEL_HAVE_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

namespace tessel::ops {
namespace {

const char *kOp = "adamw";
constexpr int64_t kChunk = 65536;
/// The configuration the update runs with. It is not tuned: timing an in-place update
/// would apply it several times (bench/kernels compares the configurations).
const char *kPrune = "BLOCK != 2048";

struct Table {
  torch::Tensor device;
  int64_t chunks = 0;
};

/// Pinned host memory the tables are staged in, never reused: a CUDA graph that captured a
/// table's upload reads its staging copy again on every replay. Allocated outside capture
/// (pinned allocation is not allowed while a stream captures); a table that does not fit
/// while capturing is an error that says so.
class Staging {
public:
  int64_t *take(size_t count, bool capturing) {
    if (used_ + count > capacity_) {
      if (capturing)
        failOp(kOp, "the chunk table changed during CUDA graph capture and the pinned staging "
                    "area is full: run one uncaptured step first");
      capacity_ = std::max<size_t>(count * 8, size_t(1) << 17);
      void *memory = nullptr;
#ifdef TESSEL_HAVE_TORCH_CUDA
      if (cudaHostAlloc(&memory, capacity_ * sizeof(int64_t), cudaHostAllocDefault) != cudaSuccess)
        failOp(kOp, "cannot allocate pinned memory for the chunk table");
#else
      failOp(kOp, "needs LibTorch with CUDA");
#endif
      blocks_.push_back(static_cast<int64_t *>(memory));
      used_ = 0;
    }
    int64_t *at = blocks_.back() + used_;
    used_ += count;
    return at;
  }

private:
  std::vector<int64_t *> blocks_; // kept for the process's life (graphs may read them)
  size_t capacity_ = 0, used_ = 0;
};

/// One launch: the tensors of one (param dtype, grad dtype, copy dtype or none).
struct Group {
  std::vector<size_t> members;
};
using GroupKey = std::tuple<torch::ScalarType, torch::ScalarType, std::optional<torch::ScalarType>>;

/// (address - base) / element size for each tensor, base the lowest address.
std::pair<void *, std::vector<int64_t>> offsetsFromBase(const std::vector<torch::Tensor> &tensors,
                                                        const std::vector<size_t> &members) {
  auto address = [&](size_t i) { return reinterpret_cast<uintptr_t>(tensors[i].data_ptr()); };
  uintptr_t base = address(members.front());
  for (size_t i : members)
    base = std::min(base, address(i));
  std::vector<int64_t> offsets;
  for (size_t i : members) {
    uintptr_t bytes = address(i) - base;
    size_t size = tensors[i].element_size();
    if (bytes % size != 0)
      failOp(kOp, "a tensor's address is not a multiple of its element size");
    offsets.push_back(int64_t(bytes / size));
  }
  return {reinterpret_cast<void *>(base), offsets};
}

/// offsets: params, grads, exp_avg, exp_avg_sq, copies (zeros without) and step counts.
const Table &tableFor(const std::vector<std::vector<int64_t>> &offsets,
                      const std::vector<int64_t> &numels, torch::Device device) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, Table> tables;
  std::vector<int64_t> rows;
  for (size_t t = 0; t < numels.size(); ++t)
    for (int64_t start = 0; start < numels[t]; start += kChunk)
      for (int64_t value : {offsets[0][t] + start, offsets[1][t] + start, offsets[2][t] + start,
                            offsets[3][t] + start, offsets[4][t] + start,
                            std::min(kChunk, numels[t] - start), offsets[5][t]})
        rows.push_back(value);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = tables.find(rows);
  if (it != tables.end())
    return it->second;
  Table table;
  table.chunks = int64_t(rows.size() / 7);
  table.device = torch::empty({int64_t(rows.size())},
                              torch::TensorOptions().dtype(torch::kLong).device(device));
#ifdef TESSEL_HAVE_TORCH_CUDA
  static Staging staging;
  cudaStream_t stream = c10::cuda::getCurrentCUDAStream().stream();
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaStreamIsCapturing(stream, &status);
  int64_t *host = staging.take(rows.size(), status != cudaStreamCaptureStatusNone);
  std::copy(rows.begin(), rows.end(), host);
  if (cudaMemcpyAsync(table.device.data_ptr(), host, rows.size() * sizeof(int64_t),
                      cudaMemcpyHostToDevice, stream) != cudaSuccess)
    failOp(kOp, "cannot upload the chunk table");
#else
  failOp(kOp, "needs LibTorch with CUDA");
#endif
  return tables.emplace(std::move(rows), std::move(table)).first->second;
}

} // namespace

void adamwStep(const std::vector<torch::Tensor> &params, const std::vector<torch::Tensor> &grads,
               const std::vector<torch::Tensor> &expAvg,
               const std::vector<torch::Tensor> &expAvgSq,
               const std::vector<torch::Tensor> &steps, const AdamWHyper &hyper,
               const std::vector<torch::Tensor> &copies) {
  size_t n = params.size();
  if (grads.size() != n || expAvg.size() != n || expAvgSq.size() != n || steps.size() != n ||
      (!copies.empty() && copies.size() != n))
    failOp(kOp, "params, grads, moments, steps (and copies, if any) must be lists of one length");
  if (n == 0)
    return;
  std::map<GroupKey, Group> groups;
  for (size_t i = 0; i < n; ++i) {
    const torch::Tensor &p = params[i], &g = grads[i];
    std::string which = "parameter " + std::to_string(i);
    requireCudaFloat(kOp, {&params[0], &p, &g, &expAvg[i], &expAvgSq[i], &steps[i]});
    if (g.sizes() != p.sizes() || expAvg[i].sizes() != p.sizes() ||
        expAvgSq[i].sizes() != p.sizes() || steps[i].numel() != 1)
      failOp(kOp, which + ": grad, moments and step must match " + describe(p));
    for (const torch::Tensor *t : {&p, &g, &expAvg[i], &expAvgSq[i]})
      if (!t->is_contiguous())
        failOp(kOp, which + ": tensors must be contiguous; got " + describe(*t));
    if (expAvg[i].scalar_type() != torch::kFloat32 ||
        expAvgSq[i].scalar_type() != torch::kFloat32 || steps[i].scalar_type() != torch::kFloat32)
      failOp(kOp, "moments and steps must be f32; got " + describe(expAvg[i]));
    packageDType(kOp, p.scalar_type());
    packageDType(kOp, g.scalar_type());
    std::optional<torch::ScalarType> copyType;
    if (!copies.empty() && copies[i].defined()) {
      const torch::Tensor &c = copies[i];
      requireCudaFloat(kOp, {&params[0], &c});
      if (c.sizes() != p.sizes() || !c.is_contiguous())
        failOp(kOp, which + ": the working copy must be contiguous and match " + describe(p) +
                        "; got " + describe(c));
      if (p.scalar_type() != torch::kFloat32 || c.scalar_type() == torch::kFloat32 ||
          g.scalar_type() != c.scalar_type())
        failOp(kOp, which + ": a working copy is bf16 or f16 of an f32 parameter, with its "
                            "gradient in the copy's dtype; got " + describe(p) + ", grad " +
                            describe(g) + ", copy " + describe(c));
      copyType = c.scalar_type();
    } else if (g.scalar_type() != p.scalar_type() && p.scalar_type() != torch::kFloat32) {
      // The mixed packages (adamw_f32_grad_<dtype>) are for f32 masters only.
      failOp(kOp, which + ": a gradient in another dtype than its parameter's needs an f32 "
                          "parameter: " + describe(p) + ", grad " + describe(g));
    }
    if (p.numel() > 0)
      groups[{p.scalar_type(), g.scalar_type(), copyType}].members.push_back(i);
  }
  for (const auto &[key, group] : groups) {
    const auto &[paramType, gradType, copyType] = key;
    auto [pBase, pOff] = offsetsFromBase(params, group.members);
    auto [gBase, gOff] = offsetsFromBase(grads, group.members);
    auto [mBase, mOff] = offsetsFromBase(expAvg, group.members);
    auto [vBase, vOff] = offsetsFromBase(expAvgSq, group.members);
    auto [sBase, sOff] = offsetsFromBase(steps, group.members);
    void *cBase = nullptr;
    std::vector<int64_t> cOff(group.members.size(), 0);
    if (copyType)
      std::tie(cBase, cOff) = offsetsFromBase(copies, group.members);
    std::vector<int64_t> numels;
    for (size_t i : group.members)
      numels.push_back(params[i].numel());
    const Table &table = tableFor({pOff, gOff, mOff, vOff, cOff, sOff}, numels,
                                  params[group.members[0]].device());
    std::string package = "adamw_" + packageDType(kOp, paramType);
    if (gradType != paramType)
      package += "_grad_" + packageDType(kOp, gradType);
    std::vector<tessel::Arg> args = {pBase, gBase, mBase, vBase};
    if (copyType)
      args.push_back(cBase);
    for (tessel::Arg arg : std::initializer_list<tessel::Arg>{
             sBase, table.device.data_ptr(), int32_t(table.chunks), float(hyper.lr),
             float(hyper.beta1), float(hyper.beta2), float(hyper.eps), float(hyper.weightDecay)})
      args.push_back(arg);
    tunedKernel(kOp, package, copyType ? "adamw_multi_copy" : "adamw_multi", kPrune)
        .launch(table.chunks, args, currentStream());
  }
}

} // namespace tessel::ops
