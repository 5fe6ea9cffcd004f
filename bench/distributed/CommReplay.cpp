//===- bench/distributed/CommReplay.cpp - A step's collectives, timed on their own -===//

#include "bench/distributed/CommReplay.h"

#include <algorithm>
#include <chrono>

namespace tessel::dist {
namespace {

using Kind = CollectiveCall::Kind;

/// Views of `numel` elements of `dtype` at the start of a byte buffer.
torch::Tensor viewOf(const torch::Tensor &bytes, c10::ScalarType dtype, int64_t numel) {
  int64_t size = numel * static_cast<int64_t>(c10::elementSize(dtype));
  return bytes.narrow(0, 0, size).view(dtype);
}

} // namespace

double timeCollectivesAlone(ProcessGroup &pg, const std::vector<CollectiveCall> &calls,
                            int iterations) {
  if (calls.empty())
    return 0;
  // One input and one output buffer, as large as the largest call needs (a coalesced
  // call's tensors side by side): the replay holds two collectives' memory, not a step's.
  // (The calls are waited on one by one, not synchronised with the host in between as
  // `tessel-bench allreduce` does, so back-to-back launches overlap as in the step.)
  int64_t world = pg.size(), inputBytes = 0, outputBytes = 0;
  for (const CollectiveCall &c : calls) {
    bool gathers = c.kind == Kind::AllGather, scatters = c.kind == Kind::ReduceScatter;
    inputBytes = std::max(inputBytes, scatters ? c.bytes() * world : c.bytes());
    if (gathers || scatters) // all-reduce and broadcast work in place, in the input
      outputBytes = std::max(outputBytes, gathers ? c.bytes() * world : c.bytes());
  }
  auto options = torch::TensorOptions().dtype(torch::kUInt8).device(pg.device());
  torch::Tensor in = torch::zeros({inputBytes}, options), out = torch::zeros({outputBytes}, options);

  auto round = [&] {
    for (const CollectiveCall &c : calls) {
      Work work;
      switch (c.kind) {
      case Kind::AllReduce: {
        torch::Tensor t = viewOf(in, c.dtype, c.numels.front());
        work = pg.allReduce(t);
        break;
      }
      case Kind::Broadcast: {
        torch::Tensor t = viewOf(in, c.dtype, c.numels.front());
        work = pg.broadcast(t, 0);
        break;
      }
      case Kind::ReduceScatter: {
        torch::Tensor input = viewOf(in, c.dtype, c.numels.front() * world);
        torch::Tensor output = viewOf(out, c.dtype, c.numels.front());
        work = pg.reduceScatter(output, input);
        break;
      }
      case Kind::AllGather: {
        if (c.numels.size() == 1) {
          torch::Tensor input = viewOf(in, c.dtype, c.numels.front());
          torch::Tensor output = viewOf(out, c.dtype, c.numels.front() * world);
          work = pg.allGather(output, input);
          break;
        }
        // Coalesced: disjoint slices of the buffers, one a tensor.
        std::vector<torch::Tensor> inputs, outputs;
        int64_t inAt = 0, outAt = 0, size = static_cast<int64_t>(c10::elementSize(c.dtype));
        for (int64_t n : c.numels) {
          inputs.push_back(in.narrow(0, inAt, n * size).view(c.dtype));
          outputs.push_back(out.narrow(0, outAt, n * world * size).view(c.dtype));
          inAt += n * size, outAt += n * world * size;
        }
        work = pg.allGatherCoalesced(outputs, inputs);
        break;
      }
      }
      pg.wait(work, "replayed collective");
    }
    pg.synchronizeDevice();
  };
  pg.barrier();
  round(); // NCCL's first call on a size sets up its channels
  std::vector<double> ms;
  for (int i = 0; i < std::max(1, iterations); ++i) {
    pg.barrier();
    pg.synchronizeDevice();
    auto start = std::chrono::steady_clock::now();
    round();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

} // namespace tessel::dist
