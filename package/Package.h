//===- package/Package.h - Kernel packages (*.tslpkg) -----------*- C++ -*-===//
//
// A package is ONE JSON document holding every compiled variant of a set of
// kernels: the PTX and the metadata needed to launch it (signature, constexpr
// values, num_warps, shared memory, arch, specialisation). Code and metadata
// live in the same file, written atomically, so they can never be mixed up.
// The format is documented in docs/runtime.md.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_PACKAGE_H
#define TESSEL_PACKAGE_PACKAGE_H

#include "package/DType.h"
#include "package/Json.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

enum class ParamKind { Pointer, Scalar };

/// One runtime (launch) parameter of a kernel.
struct ParamInfo {
  std::string name;
  ParamKind kind = ParamKind::Scalar;
  /// For a pointer: the pointee type; for a scalar: its type.
  DType dtype = DType::I32;

  bool isPointer() const { return kind == ParamKind::Pointer; }
  /// "*f32" for pointers, "i32" for scalars.
  std::string typeName() const;
  bool operator==(const ParamInfo &other) const {
    return name == other.name && kind == other.kind && dtype == other.dtype;
  }
};

/// A kernel argument (param >= 0) or a constant value.
struct ParamOrValue {
  int param = -1;
  int64_t value = 0;
};

/// A CUtensorMap the runtime encodes before each launch and passes as an extra
/// (`__grid_constant__`) parameter after the kernel's own: a 2-D row-major matrix of
/// `rows` x `cols` elements of `dtype` at the pointer argument `pointer`, `rowStride`
/// elements from row to row, copied in boxes of box[0] rows x box[1] columns with the
/// 128-byte swizzle; elements outside the matrix read as zero.
struct TensorMapSpec {
  int param = 0; // its position in the PTX entry's parameter list
  int pointer = 0;
  ParamOrValue rows, cols, rowStride;
  /// A batched matrix's outer dimensions (at most two, in elements): the map gets one
  /// more dimension each, outside the rows (and the column block), whose coordinates the
  /// kernel computes (attention's batch and head).
  std::vector<ParamOrValue> batchStrides;
  int64_t boxRows = 0, boxCols = 0;
  DType dtype = DType::BF16;
  /// Rows land interleaved within each group of 8 (row k at 2 (k % 4) + (k % 8) / 4), so
  /// that tf32 mma.sync's B fragment loads hit distinct banks under the 128-byte swizzle:
  /// a rank-4 map (columns, k / 4 % 2, k % 4, k / 8). Needs rows in multiples of 8.
  bool interleave8 = false;
  /// Column blocks (of boxCols columns, 128 bytes) one copy of a tile takes: above 1, and
  /// where the matrix's columns are whole blocks, the map gets one more (outermost)
  /// dimension, the block, so that a single box brings the whole tile, block after block
  /// (as the per-block boxes would land). The kernel makes the same test on the same
  /// column count to pick its copy; otherwise it copies block by block.
  int64_t colBlocks = 1;
  /// Programs of a cluster (2, 4 or 8) that share each whole-blocks copy (TMA multicast):
  /// the map's box is colBlocks / multicast blocks, one piece per program of the
  /// cluster. The runtime launches the variant in clusters of this many programs where
  /// the grid's x extent is a multiple of it; 1: no multicast.
  int64_t multicast = 1;
};

/// One compiled PTX module of a configuration: the generic code or a specialisation
/// (parameters assumed divisible by 16), for one arch.
struct Variant {
  /// The index of the configuration it belongs to (its owner in KernelInfo::configs).
  int config = 0;
  /// Dynamic shared memory the kernel needs (it uses no static shared memory).
  int64_t sharedBytes = 0;
  /// Target the PTX was generated for: "sm_80", "sm_90a", ...
  std::string arch;
  /// The .entry symbol in the PTX.
  std::string entry;
  /// Params this variant assumes divisible by 16: pointers 16-byte aligned,
  /// integers multiples of 16. Empty for the generic variant.
  std::vector<std::string> divisibleBy16;
  std::string ptx;
  /// Optional: ptxas's machine code for `arch` (tesselc --cubin), loaded instead of
  /// the PTX on a device of exactly that compute capability (no JIT on first launch).
  /// Stored base64-encoded in the file.
  std::string cubin;
  /// Optional: the variant's kernel in the tessel dialect (before layouts), as
  /// text; what the CPU interpreter runs (TESSEL_INTERPRET=1, runtime/Interpret.h).
  std::string tesselIR;
  /// Tensor maps (sm_90a bulk copies), in parameter order after the kernel's params.
  std::vector<TensorMapSpec> tensorMaps;
  /// Warps of a warp-specialized kernel's producer, launched after the configuration's
  /// num_warps consumer warps (0: not specialized).
  int producerWarps = 0;

  /// Programs per cluster the variant asks for (its tensor maps' multicast; 1: none).
  int clusterSize() const {
    int64_t size = 1;
    for (const TensorMapSpec &map : tensorMaps)
      size = std::max(size, map.multicast);
    return int(size);
  }
  bool isGeneric() const { return divisibleBy16.empty(); }
  /// Threads a block of this variant runs: its configuration's warps and its producer's.
  int threadsPerBlock(int numWarps) const { return (numWarps + producerWarps) * 32; }
};

/// One tile configuration of a kernel, the one record of it: the values @autotune
/// resolved (constexprs, num_warps, num_stages) and the variants compiled for them.
/// The compiler writes it, the package carries it, grid functions, prune conditions
/// and the autotuner read it as it is.
struct Config {
  /// Its number among the kernel's configurations (0..n-1).
  int index = 0;
  /// Constexpr values (ints, bools or dtype names), in the order of
  /// KernelInfo::constexprParams.
  Json::Object constexprs;
  int numWarps = 4;
  int numStages = 1;
  /// config(..., warp_specialize=True) (the variants that qualified have producer warps).
  bool warpSpecialize = false;
  /// At least the generic variant; specialisations and other archs besides.
  std::vector<Variant> variants;

  /// Any constexpr (ints, bools, dtype names), nullptr when absent.
  const Json *find(std::string_view name) const;
  /// An integer (or bool) constexpr's value; throws tessel::Error naming the
  /// configuration and its constexprs when `name` is not one of them.
  int64_t operator[](std::string_view name) const;
  /// "BLOCK=1024 num_warps=4 num_stages=1" (and " warp_specialize") for messages, logs
  /// and tuning records.
  std::string text() const;
  /// Adds a variant of this configuration (sets its `config`).
  Variant &addVariant(Variant variant);
};

struct KernelInfo {
  std::string name;
  /// Runtime parameters only, in launch order.
  std::vector<ParamInfo> params;
  std::vector<std::string> constexprParams;
  /// Runtime params whose values select the autotuned configuration.
  std::vector<std::string> autotuneKey;
  /// @autotune(prune=...): a condition on constexprs, num_warps, num_stages
  /// and key params (see package/ConfigExpr.h); a config for which it is
  /// true is not tuned. Empty: prune nothing.
  std::string autotunePrune;
  /// @autotune(restore=[...]): pointer params the kernel reads and writes;
  /// the tuner restores their contents before every timing run.
  std::vector<std::string> autotuneRestore;
  /// The tile configurations, numbered 0..n-1 by their position.
  std::vector<Config> configs;

  int configCount() const { return int(configs.size()); }
  /// Appends a configuration (numbered next) and returns it.
  Config &addConfig(Json::Object constexprs, int numWarps = 4, int numStages = 1);
  /// Every variant, configuration by configuration: the numbering of "variant i" in
  /// the package file and in the runtime's messages.
  std::vector<const Variant *> allVariants() const;
  /// Index of a runtime param by name, or -1.
  int paramIndex(std::string_view paramName) const;
  /// "softmax(out: *f32, inp: *f32, stride: i32)" for messages.
  std::string signature() const;
};

struct Package {
  static constexpr std::string_view kFormat = "tessel-package";
  static constexpr int kVersion = 1;

  std::string compiler;
  std::string source;
  std::string sourceHash;
  std::vector<KernelInfo> kernels;
  /// Where the package came from (file path or caller-given name); used as
  /// the prefix of every error message. Not serialised.
  std::string origin;

  /// Parses and validates a package; throws tessel::Error whose message
  /// starts with `originName` and names the kernel, variant and field.
  static Package parse(std::string_view text, std::string_view originName);
  static Package load(const std::string &path);

  /// Validates the in-memory package (same rules as parse); throws.
  void validate() const;
  std::string serialize() const;
  Json toJson() const;
  /// Validates, then writes atomically (temp file + fsync + rename).
  void save(const std::string &path) const;

  /// Lookup by name; findKernel returns nullptr when absent, kernel() throws
  /// an error listing the available kernels.
  const KernelInfo *findKernel(std::string_view name) const;
  const KernelInfo &kernel(std::string_view name) const;
  std::vector<std::string> kernelNames() const;

  /// A 64-bit FNV-1a hash (16 hex digits) of the serialised package: stable
  /// identity of the code for the autotune cache.
  std::string contentHash() const;
};

/// Parses "sm_90", "sm_90a", "sm_100f" into the compute capability as
/// major*10+minor and the suffix ('\0', 'a' or 'f'); false when malformed.
bool parseArch(std::string_view arch, int &capability, char &suffix);

/// Whether PTX generated for `arch` runs on a device of compute capability
/// `capability` (major*10+minor): sm_XY needs capability >= XY (PTX is
/// forward compatible), sm_XYa exactly XY, sm_XYf the same major and >= XY.
bool archSupported(std::string_view arch, int capability);

/// The names an autotune_prune condition may use: the constexpr params,
/// num_warps, num_stages and the autotune_key params.
std::vector<std::string> pruneNames(const KernelInfo &kernel);

} // namespace tessel

#endif // TESSEL_PACKAGE_PACKAGE_H
