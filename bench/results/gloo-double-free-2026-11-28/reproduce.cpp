// Two Gloo worker threads (PyTorch's default) under ZeRO-1's pattern: several coalesced
// all-gathers (op name ALLGATHER_COALESCED, 19 characters) in flight at once.
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/torch.h>
#include <cstdio>
#include <cstdlib>
int main(int argc, char **argv) {
  int iters = atoi(argv[1]), threads = atoi(argv[2]);
  int rank = atoi(getenv("RANK")), world = atoi(getenv("WORLD_SIZE"));
  c10d::TCPStoreOptions so; so.port = atoi(getenv("MASTER_PORT")); so.isServer = rank == 0; so.numWorkers = world; so.waitWorkers = true;
  auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
  auto opts = c10d::ProcessGroupGloo::Options::create_default(std::chrono::milliseconds(60000));
  opts->threads = threads;
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world, opts);
  for (int it = 0; it < iters; ++it) {
    std::vector<c10::intrusive_ptr<c10d::Work>> works;
    for (int g = 0; g < 8; ++g) {
      torch::Tensor flat = torch::zeros({16 * world * 2});
      std::vector<torch::Tensor> outs, ins;
      for (int b = 0; b < 2; ++b) { outs.push_back(flat.narrow(0, b * 16 * world, 16 * world)); ins.push_back(outs.back().narrow(0, rank * 16, 16).clone()); }
      works.push_back(pg->allgather_into_tensor_coalesced(outs, ins));
    }
    for (auto &w : works) w->wait();
  }
  std::printf("rank %d done\n", rank);
  return 0;
}
