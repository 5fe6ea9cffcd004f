//===- compiler/Jit.h - compile .tsl source in process, cached on disk -----===//
//
// Available when the program is built with the compiler (library TesselJit). Compiles a
// kernel source (a file or a string) with the given constexprs through the compiler
// library (compiler/Compiler.h), in memory, and keeps the package under
//   $TESSEL_CACHE_DIR/jit/<hash>.tslpkg          (default ~/.cache/tessel)
// keyed by the source text, the constexprs, the arch and the compiler version, so a
// second process (or a second call) compiles nothing. Cache files are written atomically;
// one that does not parse is ignored with a one-line warning and rebuilt.
//
//   tessel::Package pkg = tessel::jitFile("kernels/softmax.tsl", {{{"T", "bf16"}}});
//   tessel::TunedKernel k = tessel::TunedKernel::load(pkg, "softmax");
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_JIT_H
#define TESSEL_COMPILER_JIT_H

#include "package/Package.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel {

struct JitOptions {
  /// Constexpr values, as `-D NAME=VALUE` would give them ("1024", "bf16", "True").
  std::vector<std::pair<std::string, std::string>> defines;
  std::string arch = "sm_90";
  /// Empty: $TESSEL_CACHE_DIR, else ~/.cache/tessel.
  std::string cacheDir;
};

struct JitStats {
  int64_t compiles = 0;  ///< packages compiled by this process
  int64_t cacheHits = 0; ///< packages read back from the disk cache
};

/// Compiles (or finds in the cache) the kernels of a .tsl file. Throws tessel::Error
/// whose message holds the compiler's diagnostics when the source does not compile.
Package jitFile(const std::string &path, const JitOptions &options = {});
/// The same for source text; `name` stands for the file name in diagnostics.
Package jitSource(std::string_view source, std::string_view name,
                  const JitOptions &options = {});

/// The cache file a compilation with these inputs uses.
std::string jitCachePath(std::string_view source, const JitOptions &options);
JitStats jitStats();

} // namespace tessel

#endif // TESSEL_COMPILER_JIT_H
