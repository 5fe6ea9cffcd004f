//===- test/interpreter/HostDataTest.cpp - tessel-interpret's buffers under bad input ===//
//
// The .npy reader and the generator specs, fuzzed in-process: thousands of mutated files
// (flipped, inserted and dropped bytes, truncations, edited headers) and random specs.
// Every input either parses into a buffer that agrees with its own shape or gives an
// error message; none may crash, throw or allocate past the machine.
//
//===----------------------------------------------------------------------===//
#include "tools/tessel-interpret/HostData.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

using namespace tessel::interpret;

namespace {

std::string npyFile(const std::string &header, size_t dataBytes) {
  std::string file = "\x93NUMPY\x01";
  file += '\0';
  file += char(header.size() & 0xff);
  file += char(header.size() >> 8);
  file += header;
  for (size_t i = 0; i < dataBytes; ++i)
    file += char(i * 37);
  return file;
}

std::optional<HostData> parse(const std::string &file, const std::string &dtype,
                              std::string &error) {
  return parseNpy(std::vector<uint8_t>(file.begin(), file.end()), "x.npy", dtype, error);
}

/// A parse result is either an error with a message, or a buffer that holds exactly the
/// elements its shape says.
void expectConsistent(const std::optional<HostData> &data, const std::string &error,
                      const std::string &what) {
  if (!data) {
    EXPECT_FALSE(error.empty()) << what;
    return;
  }
  size_t count = 1;
  for (int64_t d : data->shape) {
    ASSERT_GE(d, 0) << what;
    count *= size_t(d);
  }
  EXPECT_EQ(data->bytes.size(), count * dtypeBytes(data->dtype)) << what;
}

TEST(HostData, GoodNpyReads) {
  std::string error;
  auto data = parse(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24),
                    "f32", error);
  ASSERT_TRUE(data) << error;
  EXPECT_EQ(data->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(data->count(), 6u);
  auto bf16 = parse(npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n", 16),
                    "bf16", error);
  ASSERT_TRUE(bf16) << error;
  EXPECT_EQ(bf16->bytes.size(), 8u);
}

TEST(HostData, MutatedNpyFilesNeverCrash) {
  const std::string seeds[] = {
      npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 24),
      npyFile("{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }\n", 20),
      npyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", 4),
  };
  const char *pieces[] = {"(", ")", ",", "'", ":", "shape", "descr", "-1", "99999999999999999999",
                          "4294967296", " ", "}", "True"};
  std::mt19937 rng(20261125);
  int parsed = 0, refused = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string file = seeds[rng() % 3];
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !file.empty(); ++e) {
      size_t at = rng() % file.size();
      switch (rng() % 5) {
      case 0: file[at] = char(rng()); break;              // flip a byte
      case 1: file.erase(at, 1); break;                   // drop one
      case 2: file.insert(at, 1, char(rng())); break;     // add one
      case 3: file.resize(at); break;                     // truncate
      default: {                                          // header edit
        size_t pos = 10 + rng() % 50;
        if (pos < file.size())
          file.insert(pos, pieces[rng() % (sizeof pieces / sizeof *pieces)]);
      }
      }
    }
    for (const char *dtype : {"f32", "bf16", "i32"}) {
      std::string error;
      std::optional<HostData> data = parse(file, dtype, error);
      expectConsistent(data, error, "round " + std::to_string(round));
      (data ? parsed : refused)++;
    }
  }
  // Both outcomes happened: the mutations reach past the magic number and the header.
  EXPECT_GT(parsed, 100);
  EXPECT_GT(refused, 100);
}

TEST(HostData, RandomGeneratorSpecsNeverCrash) {
  const char *kinds[] = {"randn", "rand", "zeros", "ones", "arange", "full", "nope", ""};
  const char *dtypes[] = {"f32", "bf16", "i32", "f64", "", "q8"};
  const char *dims[] = {"0", "1", "7", "64", "-3", "", "x", "1e3", "99999999999999999999",
                        "1000", "abc"};
  const char *values[] = {"2.5", "-inf", "nan", "abc", "", "1e400"};
  std::mt19937 rng(7);
  for (int round = 0; round < 5000; ++round) {
    std::string spec = kinds[rng() % 8];
    if (rng() % 2)
      spec += std::string(":") + dtypes[rng() % 6];
    spec += ":";
    int rank = 1 + int(rng() % 2);
    for (int d = 0; d < rank; ++d)
      spec += (d ? "x" : "") + std::string(dims[rng() % 11]);
    if (rng() % 3 == 0)
      spec += std::string(":") + values[rng() % 6];
    std::string error;
    std::optional<HostData> data = makeHostData(spec, "f32", 1, error);
    expectConsistent(data, error, spec);
    if (data) {
      EXPECT_LE(data->bytes.size(), size_t(4) << 20) << spec; // the dims above stay small
    }
  }
  // Sizes past the machine are refused before allocating.
  std::string error;
  EXPECT_FALSE(makeHostData("zeros:10000000x10000000x10000000", "f32", 0, error));
  EXPECT_NE(error.find("overflows 64 bits"), std::string::npos) << error;
  EXPECT_FALSE(makeHostData("zeros:1000000x1000000", "f32", 0, error));
  EXPECT_NE(error.find("more than half of this machine's memory"), std::string::npos) << error;
}

} // namespace
