//===- SoftmaxBench.cpp - tessel-bench softmax: Tessel vs torch vs a copy -===//
//
// Row softmax of an (M, N) matrix. Bandwidth counts the bytes a perfect kernel moves
// (read the matrix once, write it once), for Tessel's kernel, torch.softmax and a
// device-to-device copy of the same bytes, all in one process on the same stream.
// Each sample is one launch timed with CUDA events; inputs rotate over enough copies
// to exceed the L2 cache; the median of the samples is reported.
//
//===----------------------------------------------------------------------===//
#include "bench/kernels/KernelBench.h"
#include "bench/kernels/KernelPackageDir.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"
#include "runtime/Runtime.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <iostream>

using namespace tessel;
using namespace tessel::bench;

namespace {

int runSoftmax(int argc, char **argv) {
  std::string packages = TESSEL_KERNEL_PACKAGE_DIR, json, markdown;
  int64_t rows = 4096, warmup = 10, samples = 100;
  std::vector<int64_t> cols = {1024, 4096, 16384};
  std::vector<std::string> dtypes = {"f32", "bf16"};
  FlagParser flags("tessel-bench softmax",
                   "Row softmax: Tessel's kernel, torch.softmax and a device copy, in GB/s");
  flags.add("packages", "DIR", "folder with softmax_<dtype>.tslpkg", packages);
  flags.add("rows", "M", "rows of the matrix", rows);
  flags.addList("cols", "LIST", "row lengths to sweep", cols);
  flags.addList("dtype", "LIST", "storage dtypes (f32, bf16, f16)", dtypes);
  flags.add("warmup", "N", "untimed launches first", warmup);
  flags.add("samples", "N", "timed launches (the median is reported)", samples);
  flags.add("json", "FILE", "write the results as JSON", json);
  flags.add("markdown", "FILE", "write the table as markdown", markdown);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;

  Driver *gpu = timingDriver("tessel-bench softmax");
  if (!gpu)
    return 1;
  Driver &driver = *gpu;
  const DeviceInfo &device = driver.deviceInfo(0);

  std::vector<Record> records;
  for (const std::string &dtypeName : dtypes) {
    auto dtype = dtypeName == "f32"    ? torch::kFloat32
                 : dtypeName == "bf16" ? torch::kBFloat16
                 : dtypeName == "f16"  ? torch::kFloat16
                                       : throw std::invalid_argument("unknown dtype " + dtypeName);
    Package package = Package::load(packages + "/softmax_" + dtypeName + ".tslpkg");
    Kernel kernel = Kernel::load(package, "softmax");
    for (int64_t n : cols) {
      int config = -1;
      int64_t block = 0;
      for (const Config &record : kernel.info().configs)
        if (record["BLOCK"] >= n && (config < 0 || record["BLOCK"] < block)) {
          config = record.index;
          block = record["BLOCK"];
        }
      if (config < 0) {
        std::cerr << "no softmax configuration holds rows of " << n << "\n";
        return 1;
      }
      kernel.preload(config);
      auto options = torch::TensorOptions().dtype(dtype).device(torch::kCUDA);
      int64_t bytes = rows * n * torch::elementSize(dtype);
      // Enough copies that one pass over them does not fit the L2 cache.
      int64_t copies = std::max<int64_t>(1, (int64_t(200) << 20) / bytes + 1);
      std::vector<torch::Tensor> inputs, outputs;
      for (int64_t i = 0; i < copies; ++i) {
        inputs.push_back(torch::randn({rows, n}, options) * 3);
        outputs.push_back(torch::empty({rows, n}, options));
      }
      auto launchTessel = [&](int64_t i) {
        torch::Tensor &in = inputs[i % copies], &out = outputs[i % copies];
        kernel.launch(Grid(rows),
                      {out.data_ptr(), in.data_ptr(), int32_t(n), int32_t(n), int32_t(n)},
                      nullptr, config);
      };
      double tesselMs = medianMs(driver, warmup, samples, launchTessel);
      double torchMs = medianMs(driver, warmup, samples, [&](int64_t i) {
        outputs[i % copies] = torch::softmax(inputs[i % copies], -1);
      });
      double copyMs = medianMs(driver, warmup, samples, [&](int64_t i) {
        outputs[i % copies].copy_(inputs[i % copies]);
      });
      // Correctness next to the timing: Tessel's output against torch.softmax in f32.
      launchTessel(0);
      torch::Tensor reference = torch::softmax(inputs[0].to(torch::kFloat32), -1);
      double maxError = (outputs[0].to(torch::kFloat32) - reference).abs().max().item<double>();

      auto gbps = [&](double ms) { return 2.0 * bytes / (ms * 1e-3) / 1e9; };
      Record record;
      record.set("dtype", dtypeName);
      record.set("rows", rows);
      record.set("cols", n);
      record.set("config", int64_t(config));
      record.set("block", block);
      record.set("tessel_ms", tesselMs);
      record.set("torch_ms", torchMs);
      record.set("copy_ms", copyMs);
      record.set("tessel_gbps", gbps(tesselMs));
      record.set("torch_gbps", gbps(torchMs));
      record.set("copy_gbps", gbps(copyMs));
      record.set("tessel_vs_copy", copyMs / tesselMs);
      record.set("tessel_vs_torch", torchMs / tesselMs);
      record.set("max_abs_error", maxError);
      records.push_back(record);
      std::cerr << "softmax " << dtypeName << " " << rows << "x" << n << " done\n";
    }
  }

  std::vector<Column> columns = {
      fieldColumn("dtype", "dtype", 0, true), fieldColumn("M", "rows", 0),
      fieldColumn("N", "cols", 0), fieldColumn("BLOCK", "block", 0),
      fieldColumn("tessel GB/s", "tessel_gbps", 0), fieldColumn("torch GB/s", "torch_gbps", 0),
      fieldColumn("copy GB/s", "copy_gbps", 0), fieldColumn("tessel/copy", "tessel_vs_copy", 3),
      fieldColumn("speed-up vs torch", "tessel_vs_torch", 2),
      fieldColumn("max abs err", "max_abs_error", 7)};
  Record meta;
  meta.set("rows", rows);
  meta.set("samples", samples);
  writeKernelReport(device, meta, records, columns, json, markdown);
  return 0;
}
} // namespace

TESSEL_BENCH_SUBCOMMAND("softmax", "row softmax: Tessel vs torch.softmax vs a copy (GB/s)",
                        runSoftmax);
