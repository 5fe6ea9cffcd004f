//===- tools/tessel-interpret/HostData.h - argument buffers for a run -----===//
//
// Host buffers for tessel-interpret: generated (randn, rand, zeros, ones,
// arange, full), read from .npy or raw binary files, written back as .npy or
// raw, and summarised for the terminal.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_TESSEL_INTERPRET_HOSTDATA_H
#define TESSEL_TOOLS_TESSEL_INTERPRET_HOSTDATA_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::interpret {

/// A buffer of `count` elements of `dtype` ("f32", "bf16", "f16", "f64",
/// "i1", "i8", "i16", "i32", "i64").
struct HostData {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;

  size_t count() const;
  double get(size_t i) const;
  void set(size_t i, double v);
};

/// Bytes per element of a dtype, 0 when unknown.
size_t dtypeBytes(const std::string &dtype);

/// Builds a buffer from a spec: "randn:f32:1000", "rand:256x1000", "zeros:100",
/// "ones:bf16:64", "arange:f32:10", "full:100:2.5", or "@file.npy" / "@file.bin"
/// (raw: `dtype` elements). `dtype` is the param's pointee type, used when the
/// spec names none; a spec naming another dtype is an error. `seed` seeds randn/rand.
std::optional<HostData> makeHostData(const std::string &spec, const std::string &dtype,
                                     unsigned seed, std::string &error);

/// Parses the bytes of a .npy file (`name` for messages) into a buffer of `dtype` (bf16
/// reads float32 files); nullopt with `error` set when the file is malformed, disagrees
/// with its own shape, or would not fit in memory.
std::optional<HostData> parseNpy(const std::vector<uint8_t> &file, const std::string &name,
                                 const std::string &dtype, std::string &error);

/// Writes `data` to `path`: .npy (bf16 written as float32) or raw bytes.
bool writeHostData(const HostData &data, const std::string &path, std::string &error);

/// "f32[1000] min -1.2 max 3.4 mean 0.01 nan 0: 0.5 0.25 ..."
std::string summarize(const HostData &data, size_t show = 8);

} // namespace tessel::interpret

#endif // TESSEL_TOOLS_TESSEL_INTERPRET_HOSTDATA_H
