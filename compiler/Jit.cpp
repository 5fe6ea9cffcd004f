//===- compiler/Jit.cpp - in-process compilation with a disk cache --------===//
#include "compiler/Jit.h"

#include "compiler/Compiler.h"
#include "frontend/ConstEval.h"
#include "package/Error.h"
#include "package/FileUtil.h"
#include "package/Hash.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>

namespace tessel {
namespace {

std::atomic<int64_t> compiles{0}, cacheHits{0};
// One compilation at a time (a thread that waited finds what the first one compiled).
std::mutex compileMutex;

std::string cacheDirOf(const JitOptions &options) {
  if (!options.cacheDir.empty())
    return options.cacheDir;
  if (const char *dir = std::getenv("TESSEL_CACHE_DIR"); dir && *dir)
    return dir;
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/tessel";
}

compiler::CompileOptions compileOptions(const JitOptions &options) {
  compiler::CompileOptions o;
  o.arch = options.arch;
  for (const auto &[name, text] : options.defines) {
    std::optional<frontend::ConstValue> value = frontend::parseConstValue(text);
    if (!value)
      throw Error("jit: constexpr " + name + "=" + text +
                  " is not an int, a float, True/False or a dtype");
    o.defines.emplace_back(name, *value);
  }
  return o;
}

/// Compiles `source` in memory and publishes the package as the cache entry `cachePath`.
Package compileInto(std::string_view source, std::string_view name, const std::string &cachePath,
                    const JitOptions &options) {
  compiler::CompileResult result = compiler::compile(source, name, compileOptions(options));
  if (!result.ok)
    throw Error("jit: compiling '" + std::string(name) + "' failed:\n" + result.diagnostics);
  // Written atomically: concurrent processes see the old entry or the new one, whole.
  std::filesystem::create_directories(std::filesystem::path(cachePath).parent_path());
  result.package.save(cachePath);
  result.package.origin = cachePath;
  ++compiles;
  return std::move(result.package);
}

std::optional<Package> lookup(const std::string &cachePath) {
  std::error_code ec;
  if (!std::filesystem::exists(cachePath, ec))
    return std::nullopt;
  try {
    Package package = Package::load(cachePath);
    ++cacheHits;
    return package;
  } catch (const std::exception &e) {
    std::cerr << "tessel: warning: ignoring the unreadable JIT cache entry " << cachePath << " ("
              << e.what() << "); recompiling\n";
    return std::nullopt;
  }
}

} // namespace

std::string jitCachePath(std::string_view source, const JitOptions &options) {
  uint64_t hash = fnv1a(source);
  for (const auto &[name, value] : options.defines)
    hash = fnv1a(name + "=" + value + ";", hash);
  hash = fnv1a("arch=" + options.arch + ";", hash);
  hash = fnv1a(compiler::versionText(), hash);
  return cacheDirOf(options) + "/jit/" + toHex16(hash) + ".tslpkg";
}

Package jitSource(std::string_view source, std::string_view name, const JitOptions &options) {
  std::string cachePath = jitCachePath(source, options);
  if (std::optional<Package> cached = lookup(cachePath))
    return *cached;
  std::lock_guard<std::mutex> lock(compileMutex);
  if (std::optional<Package> cached = lookup(cachePath))
    return *cached;
  return compileInto(source, name, cachePath, options);
}

Package jitFile(const std::string &path, const JitOptions &options) {
  // Compiled under the file's own name, so diagnostics name it.
  return jitSource(readFile(path), path, options);
}

JitStats jitStats() { return JitStats{compiles.load(), cacheHits.load()}; }

} // namespace tessel
