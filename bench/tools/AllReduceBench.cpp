//===- bench/tools/AllReduceBench.cpp - tessel-bench allreduce ------------===//
//
//   tessel-run -n 2 -- tessel-bench allreduce --backend nccl --sizes 1MB,10MB,100MB,1GB
//       --collectives all-reduce,all-gather,reduce-scatter
//
// Every rank runs a float32 collective of the given sizes: warm-up calls, then timed calls
// (each synchronised: wait, then the device). A size is the all-reduced tensor, the
// all-gather's output, the reduce-scatter's input (what tessel-plan's formulas call a
// collective's bytes). An iteration's time is the slowest rank's; mean, median and std over
// iterations, and the algorithm and bus bandwidths as nccl-tests defines them (algbw =
// bytes / t; busbw = algbw * 2 (n - 1) / n for all-reduce, algbw (n - 1) / n for the
// others). Rank 0 prints the table and writes the JSON.
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/Stats.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace {

using tessel::bench::Record;
using namespace tessel::dist;

/// "1MB" -> 1e6 bytes (decimal units, as nccl-tests prints them); also KB, GB, B, MiB, GiB.
int64_t parseBytes(const std::string &text) {
  size_t end = 0;
  double value = std::stod(text, &end);
  std::string unit = text.substr(end);
  double scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KB")
    scale = 1e3;
  else if (unit == "MB")
    scale = 1e6;
  else if (unit == "GB")
    scale = 1e9;
  else if (unit == "KiB")
    scale = 1024;
  else if (unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  if (scale == 0 || value <= 0)
    throw std::invalid_argument("bad size '" + text + "' (e.g. 1MB, 100MB, 1GB)");
  return static_cast<int64_t>(value * scale);
}

/// One timed call of `collective` on buffers of `elements` float32s (divisible by the world).
Work issue(ProcessGroup &pg, const std::string &collective, torch::Tensor &full,
           torch::Tensor &chunk) {
  if (collective == "all-gather")
    return pg.allGather(full, chunk);
  if (collective == "reduce-scatter")
    return pg.reduceScatter(chunk, full);
  return pg.allReduce(full);
}

int runAllReduce(int argc, char **argv) {
  std::string backend = "auto", json, markdownFile;
  std::vector<std::string> sizes = {"1MB", "10MB", "100MB", "1GB"};
  std::vector<std::string> collectives = {"all-reduce"};
  int64_t warmup = 5, iters = 20;
  int64_t timeoutSeconds = 300;
  bool markdown = false;
  tessel::bench::FlagParser flags(
      "tessel-bench allreduce",
      "time float32 all-reduce (and all-gather, reduce-scatter) over c10d (run one process per\n"
      "rank, e.g. with tessel-run -n N); tessel-plan and --plan-allreduce fit each collective's\n"
      "t = o + bytes / w from the JSON");
  flags.add("backend", "NAME", "auto | nccl (CUDA tensors) | gloo (CPU tensors)", backend);
  flags.addList("sizes", "LIST",
                "sizes (1MB, 10MB, 100MB, 1GB, ...): the all-reduced tensor, the all-gather's "
                "output, the reduce-scatter's input",
                sizes);
  flags.addList("collectives", "LIST", "all-reduce, all-gather, reduce-scatter", collectives);
  flags.add("warmup", "N", "untimed calls per collective and size", warmup);
  flags.add("iters", "N", "timed calls per collective and size", iters);
  flags.add("timeout", "SECONDS", "collective timeout", timeoutSeconds);
  flags.add("json", "FILE", "write the results as JSON (rank 0)", json);
  flags.add("markdown-file", "FILE", "write the table as markdown (rank 0)", markdownFile);
  flags.addSwitch("markdown", "print the table as markdown", markdown);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  std::vector<int64_t> bytes;
  try {
    for (const std::string &s : sizes)
      bytes.push_back(parseBytes(s));
    if (iters < 1 || warmup < 0)
      throw std::invalid_argument("--iters must be at least 1 and --warmup at least 0");
    for (const std::string &c : collectives)
      if (c != "all-reduce" && c != "all-gather" && c != "reduce-scatter")
        throw std::invalid_argument("unknown collective '" + c +
                                    "' (all-reduce, all-gather, reduce-scatter)");
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n\n%s", e.what(), flags.usage().c_str());
    return 2;
  }

  ProcessGroupOptions options;
  options.backend = parseBackendKind(backend);
  options.timeout = std::chrono::seconds(timeoutSeconds);
  auto pg = ProcessGroup::fromEnvironment(options);
  bool leader = pg->rank() == 0;
  std::vector<Record> records;
  std::vector<std::pair<std::string, size_t>> runs; // (collective, size index)
  for (const std::string &c : collectives)
    for (size_t k = 0; k < bytes.size(); ++k)
      runs.emplace_back(c, k);
  for (const auto &[collective, k] : runs) {
    int64_t world = pg->size(), elements = std::max<int64_t>(1, bytes[k] / 4 / world) * world;
    auto floats = torch::TensorOptions().dtype(torch::kFloat32).device(pg->device());
    torch::Tensor t = torch::ones({elements}, floats), chunk = torch::ones({elements / world}, floats);
    std::vector<double> times;
    for (int64_t i = 0; i < warmup + iters; ++i) {
      pg->synchronizeDevice();
      auto start = std::chrono::steady_clock::now();
      pg->wait(issue(*pg, collective, t, chunk), collective);
      pg->synchronizeDevice();
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (i >= warmup)
        times.push_back(seconds);
    }
    // The slowest rank's time per iteration.
    torch::Tensor all = torch::tensor(times, torch::kFloat64).to(pg->device());
    pg->wait(pg->allReduce(all, c10d::ReduceOp::MAX), "timing all-reduce");
    all = all.cpu();
    std::vector<double> ms;
    for (int64_t i = 0; i < all.numel(); ++i)
      ms.push_back(all[i].item<double>() * 1e3);
    Summary s = summarize(ms);
    double bytesMoved = static_cast<double>(elements) * 4;
    Record r;
    r.set("collective", collective);
    r.set("backend", pg->backendName());
    r.set("device", pg->device().is_cuda() ? "cuda" : "cpu");
    r.set("world_size", static_cast<int64_t>(pg->size()));
    r.set("size", sizes[k]);
    r.set("bytes", static_cast<int64_t>(bytesMoved));
    r.set("iters", iters);
    r.set("mean_ms", s.mean);
    r.set("median_ms", s.median);
    r.set("std_ms", s.std);
    r.set("min_ms", s.min);
    r.set("algbw_GBs", algorithmBandwidth(bytesMoved, s.mean / 1e3) / 1e9);
    double bus = busBandwidth(bytesMoved, s.mean / 1e3, pg->size());
    r.set("busbw_GBs", (collective == "all-reduce" ? bus : bus / 2) / 1e9);
    records.push_back(r);
    if (leader)
      std::fprintf(stderr, "%s %s x%d %s: %.3f ms\n", collective.c_str(), pg->backendName().c_str(),
                   pg->size(), sizes[k].c_str(), s.mean);
  }
  pg->shutdown();
  if (!leader)
    return 0;
  using tessel::bench::fieldColumn;
  std::vector<tessel::bench::Column> columns = {
      fieldColumn("collective", "collective", 0, true), fieldColumn("backend", "backend", 0, true),
      fieldColumn("ranks", "world_size", 0),
      fieldColumn("size", "size", 0),               fieldColumn("mean ms", "mean_ms", 3),
      fieldColumn("median ms", "median_ms", 3),     fieldColumn("std ms", "std_ms", 3),
      fieldColumn("algbw GB/s", "algbw_GBs", 1),    fieldColumn("busbw GB/s", "busbw_GBs", 1)};
  std::cout << tessel::bench::formatTable(records, columns, markdown);
  Record meta;
  meta.set("study", "allreduce");
  meta.set("backend", pg->backendName());
  meta.set("world_size", static_cast<int64_t>(pg->size()));
  meta.set("warmup", warmup);
  if (!json.empty())
    tessel::bench::writeFile(json, [&](std::ostream &out) { tessel::bench::writeJson(out, meta, records); });
  if (!markdownFile.empty())
    tessel::bench::writeFile(markdownFile, [&](std::ostream &out) {
      out << tessel::bench::formatTable(records, columns, /*markdown=*/true);
    });
  return 0;
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("allreduce", "time all-reduce, all-gather, reduce-scatter over NCCL or Gloo",
                        runAllReduce);
