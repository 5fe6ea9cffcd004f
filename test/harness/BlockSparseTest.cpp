//===- test/harness/BlockSparseTest.cpp - a block mask as the kernels read it ---===//
//
// tessel::ops::blockSparseInts on the CPU: the header, every line's runs of kept blocks
// (rows over key blocks, columns over query blocks) against runs found by walking the
// table, the table itself, tables shared by the batch or the heads, and the errors. The
// layout is the one examples/attention/block_sparse.tsl reads (the interpreter's test runs
// the kernels on it; the GPU test runs the op).
//
//===----------------------------------------------------------------------===//
#include "bench/ops/BlockSparse.h"

#include <torch/torch.h>

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

using namespace tessel;

namespace {

/// The runs of kept entries of `line`, as (first, end) pairs.
std::vector<int32_t> runs(const std::vector<bool> &line) {
  std::vector<int32_t> out;
  for (size_t j = 0; j < line.size(); ++j)
    if (line[j] && (j == 0 || !line[j - 1])) {
      size_t end = j;
      while (end < line.size() && line[end])
        ++end;
      out.push_back(int32_t(j)), out.push_back(int32_t(end));
    }
  return out;
}

/// Checks the runs of `lines` entries of `n` blocks from `at` against the table's lines.
void expectRuns(const std::vector<int32_t> &ints, int64_t at, int64_t lines, int64_t n,
                const std::function<bool(int64_t, int64_t)> &kept) {
  for (int64_t line = 0; line < lines; ++line) {
    std::vector<bool> entries;
    for (int64_t j = 0; j < n; ++j)
      entries.push_back(kept(line, j));
    std::vector<int32_t> want = runs(entries);
    const int32_t *entry = &ints[size_t(at + line * (1 + 2 * n))];
    ASSERT_EQ(entry[0], int32_t(want.size() / 2)) << "line " << line;
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(entry[1 + i], want[i]) << "line " << line << " pair entry " << i;
  }
}

void check(const torch::Tensor &table, int64_t batch, int64_t heads, int64_t seqQ, int64_t seqK) {
  std::vector<int32_t> ints;
  torch::Tensor got = ops::blockSparseInts("test", table, batch, heads, seqQ, seqK);
  ASSERT_EQ(got.scalar_type(), torch::kInt32);
  ints.assign(got.data_ptr<int32_t>(), got.data_ptr<int32_t>() + got.numel());
  int64_t bm = table.size(0), hm = table.size(1), qb = table.size(2), kb = table.size(3);
  ASSERT_GE(ints.size(), 8u);
  EXPECT_EQ(ints[0], qb);
  EXPECT_EQ(ints[1], kb);
  EXPECT_EQ(ints[2], bm > 1 ? hm : 0);
  EXPECT_EQ(ints[3], hm > 1 ? 1 : 0);
  EXPECT_EQ(ints[6], ops::kMaskBlock);
  torch::Tensor kept = (table != 0).reshape({bm * hm, qb, kb});
  auto at = kept.accessor<bool, 3>();
  expectRuns(ints, 8, bm * hm * qb, kb,
             [&](int64_t line, int64_t j) { return at[line / qb][line % qb][j]; });
  expectRuns(ints, ints[4], bm * hm * kb, qb,
             [&](int64_t line, int64_t i) { return at[line / kb][i][line % kb]; });
  ASSERT_EQ(int64_t(ints.size()), ints[5] + bm * hm * qb * kb);
  for (int64_t line = 0; line < bm * hm * qb; ++line)
    for (int64_t j = 0; j < kb; ++j)
      EXPECT_EQ(ints[size_t(ints[5] + line * kb + j)], at[line / qb][line % qb][j] ? 1 : 0);
}

TEST(BlockSparseInts, RunsOfEveryLineAndColumn) {
  torch::manual_seed(3);
  // Per batch and head, ragged lengths (the last block short), an empty line, a full one.
  torch::Tensor table = torch::rand({2, 3, 5, 4}) < 0.5;
  table.select(2, 1).fill_(false);
  table.select(2, 3).fill_(true);
  check(table, 2, 3, 600, 400);
  // Integers as the table (nonzero: kept), one table for all, one for each head.
  check(torch::randint(0, 3, {1, 1, 8, 9}, torch::kInt32), 4, 2, 1024, 1100);
  check(torch::randint(0, 2, {1, 2, 3, 3}, torch::kLong), 3, 2, 300, 300);
  check(torch::randint(0, 2, {2, 1, 2, 7}, torch::kInt8), 2, 5, 256, 777);
}

TEST(BlockSparseInts, WrongTablesAreErrors) {
  auto message = [](const std::function<void()> &f) {
    try {
      f();
    } catch (const std::invalid_argument &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  torch::Tensor ok = torch::ones({1, 1, 2, 2}, torch::kBool);
  EXPECT_NE(message([&] { ops::blockSparseInts("op", ok, 1, 1, 300, 256); })
                .find("op: block_mask must be bool or integer [1 or 1, 1 or 1, 3, 2]"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::blockSparseInts("op", ok.to(torch::kFloat), 1, 1, 256, 256); })
                .find("block_mask must be bool or integer"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::blockSparseInts("op", torch::ones({3, 1, 2, 2}), 2, 1, 256, 256); })
                .find("[2 or 1, 1 or 1, 2, 2]"),
            std::string::npos);
  EXPECT_NE(message([&] { ops::blockSparseInts("op", ok.view({1, 2, 2}), 1, 1, 256, 256); })
                .find("got [1, 2, 2] Bool"),
            std::string::npos);
}

} // namespace
