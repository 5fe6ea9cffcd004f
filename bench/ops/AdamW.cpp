//===- bench/ops/AdamW.cpp - kernels/adamw.tsl: every parameter in one launch ===//
//
// adamw_multi reaches every tensor of a kind (params, grads, moments, step counts) from one
// base pointer, the kind's lowest address, by an element offset, and runs one program per
// chunk of at most kChunk elements. The chunk table (6 x i64 per chunk) is built on the
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

/// One group: the tensors of one (param dtype, grad dtype).
struct Group {
  std::vector<size_t> members;
};

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

const Table &tableFor(const std::vector<std::vector<int64_t>> &offsets,
                      const std::vector<int64_t> &numels, torch::Device device) {
  static std::mutex mutex;
  static std::map<std::vector<int64_t>, Table> tables;
  std::vector<int64_t> rows;
  for (size_t t = 0; t < numels.size(); ++t)
    for (int64_t start = 0; start < numels[t]; start += kChunk)
      for (int64_t value : {offsets[0][t] + start, offsets[1][t] + start, offsets[2][t] + start,
                            offsets[3][t] + start, std::min(kChunk, numels[t] - start),
                            offsets[4][t]})
        rows.push_back(value);
  std::lock_guard<std::mutex> lock(mutex);
  auto it = tables.find(rows);
  if (it != tables.end())
    return it->second;
  Table table;
  table.chunks = int64_t(rows.size() / 6);
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
               const std::vector<torch::Tensor> &steps, const AdamWHyper &hyper) {
  size_t n = params.size();
  if (grads.size() != n || expAvg.size() != n || expAvgSq.size() != n || steps.size() != n)
    failOp(kOp, "params, grads, moments and steps must be lists of one length");
  if (n == 0)
    return;
  std::map<std::pair<torch::ScalarType, torch::ScalarType>, Group> groups;
  for (size_t i = 0; i < n; ++i) {
    const torch::Tensor &p = params[i], &g = grads[i];
    requireCudaFloat(kOp, {&params[0], &p, &g, &expAvg[i], &expAvgSq[i], &steps[i]});
    if (g.sizes() != p.sizes() || expAvg[i].sizes() != p.sizes() ||
        expAvgSq[i].sizes() != p.sizes() || steps[i].numel() != 1)
      failOp(kOp, "parameter " + std::to_string(i) + ": grad, moments and step must match " +
                      describe(p));
    for (const torch::Tensor *t : {&p, &g, &expAvg[i], &expAvgSq[i]})
      if (!t->is_contiguous())
        failOp(kOp, "parameter " + std::to_string(i) + ": tensors must be contiguous; got " +
                        describe(*t));
    if (expAvg[i].scalar_type() != torch::kFloat32 ||
        expAvgSq[i].scalar_type() != torch::kFloat32 || steps[i].scalar_type() != torch::kFloat32)
      failOp(kOp, "moments and steps must be f32; got " + describe(expAvg[i]));
    packageDType(kOp, p.scalar_type());
    packageDType(kOp, g.scalar_type());
    if (p.numel() > 0)
      groups[{p.scalar_type(), g.scalar_type()}].members.push_back(i);
  }
  for (const auto &[dtypes, group] : groups) {
    auto [pBase, pOff] = offsetsFromBase(params, group.members);
    auto [gBase, gOff] = offsetsFromBase(grads, group.members);
    auto [mBase, mOff] = offsetsFromBase(expAvg, group.members);
    auto [vBase, vOff] = offsetsFromBase(expAvgSq, group.members);
    auto [sBase, sOff] = offsetsFromBase(steps, group.members);
    std::vector<int64_t> numels;
    for (size_t i : group.members)
      numels.push_back(params[i].numel());
    const Table &table =
        tableFor({pOff, gOff, mOff, vOff, sOff}, numels, params[group.members[0]].device());
    std::string package = "adamw_" + packageDType(kOp, dtypes.first);
    if (dtypes.second != dtypes.first)
      package += "_grad_" + packageDType(kOp, dtypes.second);
    tunedKernel(kOp, package, "adamw_multi", kPrune)
        .launch(table.chunks,
                {pBase, gBase, mBase, vBase, sBase, table.device.data_ptr(),
                 int32_t(table.chunks), float(hyper.lr), float(hyper.beta1), float(hyper.beta2),
                 float(hyper.eps), float(hyper.weightDecay)},
                currentStream());
  }
}

} // namespace tessel::ops
