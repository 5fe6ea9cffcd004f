//===- bench/tools/PrecisionBench.cpp - tessel-bench precision ------------===//
//
// The CS336 mixed-precision accumulation demonstration: add 0.01 to a zero
// accumulator a thousand times with LibTorch tensors of different dtypes and
// see how far each lands from 10.
//
//===----------------------------------------------------------------------===//

#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"

#include <ATen/ATen.h>

#include <cmath>
#include <iostream>

namespace {

using tessel::bench::Record;

struct Case {
  const char *accumulator, *addend;
  at::ScalarType accType, addType;
  bool castAddend; // add addend.to(accType) (explicit up-cast) instead of relying on promotion
};

int runPrecision(int argc, char **argv) {
  int64_t count = 1000;
  double value = 0.01;
  std::string json, csv;
  bool markdown = false;
  tessel::bench::FlagParser flags(
      "tessel-bench precision",
      "Sums VALUE COUNT times into a zero accumulator with LibTorch tensors of several dtypes\n"
      "(the CS336 mixed-precision accumulation table). Low-precision accumulators drift\n"
      "because each partial sum is rounded; an f32 accumulator adding f16/bf16 values only\n"
      "carries the error of the rounded addend.");
  flags.add("count", "N", "number of additions", count);
  flags.add("value", "X", "the value added each time", value);
  flags.add("json", "FILE", "also write the results as JSON", json);
  flags.add("csv", "FILE", "also write the results as CSV", csv);
  flags.addSwitch("markdown", "print the table as markdown", markdown);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  if (count < 0 || count > 100000000) {
    std::cerr << "error: --count must be between 0 and 1e8\n\n" << flags.usage();
    return 2;
  }

  const Case cases[] = {
      {"f32", "f32", at::kFloat, at::kFloat, false},
      {"f16", "f16", at::kHalf, at::kHalf, false},
      {"bf16", "bf16", at::kBFloat16, at::kBFloat16, false},
      {"f32", "f16", at::kFloat, at::kHalf, false},
      {"f32", "f16 -> f32", at::kFloat, at::kHalf, true},
      {"f32", "bf16", at::kFloat, at::kBFloat16, false},
  };
  std::vector<Record> records;
  double exact = static_cast<double>(count) * value;
  for (const Case &c : cases) {
    at::Tensor sum = at::zeros({}, at::TensorOptions().dtype(c.accType));
    at::Tensor x = at::full({}, value, at::TensorOptions().dtype(c.addType));
    if (c.castAddend)
      x = x.to(c.accType);
    for (int64_t i = 0; i < count; ++i)
      sum += x;
    double result = sum.item<double>();
    Record r;
    r.set("accumulator", c.accumulator);
    r.set("addend", c.addend);
    r.set("count", count);
    r.set("value", value);
    r.set("addend_as_stored", x.to(at::kDouble).item<double>());
    r.set("result", result);
    r.set("error", result - exact);
    r.set("relative_error", exact != 0 ? std::fabs(result - exact) / std::fabs(exact) : 0.0);
    records.push_back(r);
  }

  using tessel::bench::fieldColumn;
  std::vector<tessel::bench::Column> columns = {
      fieldColumn("accumulator", "accumulator", 0, true), fieldColumn("addend", "addend", 0, true),
      fieldColumn("addend as stored", "addend_as_stored", 10), fieldColumn("sum", "result", 7),
      fieldColumn("error", "error", 7)};
  std::cout << "sum of " << value << " added " << count << " times (exact " << exact << ")\n\n"
            << tessel::bench::formatTable(records, columns, markdown);
  Record meta;
  meta.set("tool", "tessel-bench precision");
  meta.set("version", tessel::bench::versionString());
  if (!json.empty())
    tessel::bench::writeFile(json, [&](std::ostream &out) {
      tessel::bench::writeJson(out, meta, records);
    });
  if (!csv.empty())
    tessel::bench::writeFile(csv,
                             [&](std::ostream &out) { tessel::bench::writeCsv(out, records); });
  return 0;
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("precision", "the mixed-precision accumulation table (CS336)",
                        runPrecision);
