//===- runtime/Jit.cpp - in-process compilation with a disk cache ---------===//
#include "runtime/Jit.h"

#include "frontend/ConstEval.h"
#include "runtime/Error.h"
#include "runtime/FileUtil.h"
#include "runtime/Hash.h"
#include "tools/tesselc/Compile.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <unistd.h>

namespace tessel {
namespace {

std::atomic<int64_t> compiles{0}, cacheHits{0};
// One compilation at a time: each builds its own MLIR context, but the driver's
// diagnostics go to the process's stderr.
std::mutex compileMutex;

std::string cacheDirOf(const JitOptions &options) {
  if (!options.cacheDir.empty())
    return options.cacheDir;
  if (const char *dir = std::getenv("TESSEL_CACHE_DIR"); dir && *dir)
    return dir;
  const char *home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/tessel";
}

tesselc::Options driverOptions(const JitOptions &options) {
  tesselc::Options o;
  o.arch = options.arch;
  o.quiet = true;
  for (const auto &[name, text] : options.defines) {
    std::optional<frontend::ConstValue> value = frontend::parseConstValue(text);
    if (!value)
      throw Error("jit: constexpr " + name + "=" + text +
                  " is not an int, a float, True/False or a dtype");
    o.defines.emplace_back(name, *value);
  }
  return o;
}

/// Compiles `input` (a file) into the cache entry `cachePath`.
Package compileInto(const std::string &input, std::string_view name, const std::string &cachePath,
                    const JitOptions &options) {
  tesselc::Options o = driverOptions(options);
  o.input = input;
  o.output = cachePath + ".tmp-" + std::to_string(::getpid());
  if (tesselc::run(o) != 0) {
    std::remove(o.output.c_str());
    throw Error("jit: compiling '" + std::string(name) + "' failed (diagnostics above, on stderr)");
  }
  Package package = Package::load(o.output);
  // Publish atomically: concurrent processes see the old entry or the new one, whole.
  std::filesystem::rename(o.output, cachePath);
  ++compiles;
  return package;
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
  hash = fnv1a(tesselc::versionText(), hash);
  return cacheDirOf(options) + "/jit/" + toHex16(hash) + ".tslpkg";
}

Package jitSource(std::string_view source, std::string_view name, const JitOptions &options) {
  std::string cachePath = jitCachePath(source, options);
  if (std::optional<Package> cached = lookup(cachePath))
    return *cached;
  std::lock_guard<std::mutex> lock(compileMutex);
  std::filesystem::create_directories(std::filesystem::path(cachePath).parent_path());
  // The driver reads files: hand it the text through a private one named like the source.
  std::string input = cachePath + ".src-" + std::to_string(::getpid()) + "-" +
                      std::filesystem::path(std::string(name)).filename().string();
  writeFileAtomic(input, source);
  try {
    Package package = compileInto(input, name, cachePath, options);
    std::remove(input.c_str());
    return package;
  } catch (...) {
    std::remove(input.c_str());
    throw;
  }
}

Package jitFile(const std::string &path, const JitOptions &options) {
  std::string source = readFile(path);
  std::string cachePath = jitCachePath(source, options);
  if (std::optional<Package> cached = lookup(cachePath))
    return *cached;
  std::lock_guard<std::mutex> lock(compileMutex);
  std::filesystem::create_directories(std::filesystem::path(cachePath).parent_path());
  // Compiled from the file itself, so diagnostics name it.
  return compileInto(path, path, cachePath, options);
}

JitStats jitStats() { return JitStats{compiles.load(), cacheHits.load()}; }

} // namespace tessel
