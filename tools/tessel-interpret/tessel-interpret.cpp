//===- tools/tessel-interpret/tessel-interpret.cpp - run a kernel on the CPU ===//
//
//   tessel-interpret kernels/softmax.tsl -D BLOCK=1024 --grid 256
//       out=zeros:256x1000 inp=randn:256x1000 in_stride=1000 out_stride=1000 n_cols=1000
//       -o out=out.npy
//
// Compiles one configuration of a kernel (from .tsl source, or tessel-dialect
// .mlir), builds its arguments (generated, or read from .npy/raw files), runs
// every program instance in the interpreter with bounds checking, prints a
// summary of each buffer and writes the requested ones.
//
//===----------------------------------------------------------------------===//
#include "interpreter/Interpreter.h"
#include "interpreter/Source.h"
#include "tools/tessel-interpret/HostData.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace tessel;
using namespace tessel::interpret;

namespace {

const char *kUsage = R"(usage: tessel-interpret FILE.tsl|FILE.mlir --grid X[,Y[,Z]] [options] NAME=VALUE...

Runs one kernel on the CPU in the Tessel interpreter: every load and store is
checked against the argument buffers, and an access outside them is reported
with the kernel's source line, the program id and the element.

Arguments (one per runtime parameter, by name; `--arg NAME=VALUE` is the same):
  NAME=42, NAME=0.5, NAME=true     a scalar
  NAME=randn[:DTYPE]:SHAPE         a buffer of normal random values (SHAPE: 1000, 256x1000)
  NAME=rand|zeros|ones|arange[:DTYPE]:SHAPE, NAME=full[:DTYPE]:SHAPE:VALUE
  NAME=@file.npy, NAME=@file.bin   a buffer read from .npy or raw binary
  DTYPE, when given, must be the parameter's pointee type.

Options:
  -k, --kernel NAME      the kernel to run (default: the file's only @kernel)
  -D NAME=VALUE          a constexpr value, as for tesselc (int, float, True/False, dtype)
  -I DIR                 where `import "file.tsl"` looks, as for tesselc (repeatable; then
                         the kernels/ folder of Tessel's source tree)
  --config N             the @autotune configuration (default 0)
  -g, --grid X[,Y[,Z]]   program instances per axis (required)
  -o, --out NAME=FILE    write buffer NAME after the run (.npy, else raw bytes)
  --seed N               seed of randn/rand (default 0; each buffer gets seed + its index)
  --repeat N             run N times (buffers are not restored) and print the median time
  -q, --quiet            do not print buffer summaries
  --print-ir             print the tessel IR that runs (with source locations) and exit
  -h, --help             this text
)";

int fail(const std::string &message) {
  std::cerr << "tessel-interpret: error: " << message << "\n";
  return 1;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool parseGrid(const std::string &text, interp::LaunchGrid &grid) {
  int64_t dims[3] = {1, 1, 1};
  size_t start = 0;
  for (int d = 0; d < 3; ++d) {
    size_t comma = text.find(',', start);
    std::string part = text.substr(start, comma == std::string::npos ? comma : comma - start);
    char *end = nullptr;
    dims[d] = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || dims[d] < 0)
      return false;
    if (comma == std::string::npos)
      break;
    start = comma + 1;
    if (d == 2)
      return false;
  }
  grid = {dims[0], dims[1], dims[2]};
  return true;
}

/// "!tessel.ptr<f32>" -> "f32".
std::string pointee(const std::string &type) {
  size_t open = type.find('<');
  return type.substr(open + 1, type.rfind('>') - open - 1);
}

std::optional<Arg> scalarArg(const std::string &type, const std::string &text, std::string &error) {
  char *end = nullptr;
  if (type == "i1") {
    if (text == "true" || text == "True" || text == "1")
      return Arg(true);
    if (text == "false" || text == "False" || text == "0")
      return Arg(false);
  } else if (type[0] == 'i' || type == "index") {
    long long v = std::strtoll(text.c_str(), &end, 0);
    if (!text.empty() && !*end)
      return v >= INT32_MIN && v <= INT32_MAX ? Arg(int32_t(v)) : Arg(int64_t(v));
  } else {
    double v = std::strtod(text.c_str(), &end);
    if (!text.empty() && !*end)
      return Arg(v);
  }
  error = "'" + text + "' is not a valid " + type;
  return std::nullopt;
}

/// A non-negative integer flag value below 2^31, or nullopt.
std::optional<unsigned> parseCount(const std::string &text) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end || errno == ERANGE || v < 0 || v > INT32_MAX)
    return std::nullopt;
  return unsigned(v);
}

} // namespace

int main(int argc, char **argv) {
  std::string input;
  interp::SourceOptions sourceOpts;
  interp::LaunchGrid grid;
  bool haveGrid = false, quiet = false, printIR = false;
  unsigned seed = 0, repeat = 1;
  std::vector<std::pair<std::string, std::string>> values, outputs;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string &flag) -> std::optional<std::string> {
      if (a.size() > flag.size() + 1 && a.compare(0, flag.size() + 1, flag + "=") == 0)
        return a.substr(flag.size() + 1);
      if (a != flag)
        return std::nullopt;
      if (i + 1 >= argc) {
        fail(flag + " expects a value");
        std::exit(1);
      }
      return std::string(argv[++i]);
    };
    auto pair = [](const std::string &text, std::vector<std::pair<std::string, std::string>> &to) {
      size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0)
        return false;
      to.emplace_back(text.substr(0, eq), text.substr(eq + 1));
      return true;
    };
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return 0;
    } else if (a == "-q" || a == "--quiet") {
      quiet = true;
    } else if (a == "--print-ir") {
      printIR = true;
    } else if (auto v = value("--kernel"); v || (v = value("-k"))) {
      sourceOpts.kernel = *v;
    } else if (a.size() > 2 && a.compare(0, 2, "-D") == 0) {
      sourceOpts.defines.push_back(a.substr(2));
    } else if (auto v = value("-D")) {
      sourceOpts.defines.push_back(*v);
    } else if (a.size() > 2 && a.compare(0, 2, "-I") == 0) {
      sourceOpts.importDirs.push_back(a.substr(2));
    } else if (auto v = value("-I")) {
      sourceOpts.importDirs.push_back(*v);
    } else if (auto v = value("--config")) {
      std::optional<unsigned> n = parseCount(*v);
      if (!n)
        return fail("--config expects a configuration index (0, 1, ...), got '" + *v + "'");
      sourceOpts.config = *n;
    } else if (auto v = value("--grid"); v || (v = value("-g"))) {
      if (!parseGrid(*v, grid))
        return fail("--grid expects X[,Y[,Z]] with non-negative integers, got '" + *v + "'");
      haveGrid = true;
    } else if (auto v = value("--out"); v || (v = value("-o"))) {
      if (!pair(*v, outputs))
        return fail("--out expects NAME=FILE, got '" + *v + "'");
    } else if (auto v = value("--seed")) {
      std::optional<unsigned> n = parseCount(*v);
      if (!n)
        return fail("--seed expects a non-negative integer, got '" + *v + "'");
      seed = *n;
    } else if (auto v = value("--repeat")) {
      std::optional<unsigned> n = parseCount(*v);
      if (!n || *n == 0)
        return fail("--repeat expects a positive integer, got '" + *v + "'");
      repeat = *n;
    } else if (auto v = value("--arg")) {
      if (!pair(*v, values))
        return fail("--arg expects NAME=VALUE, got '" + *v + "'");
    } else if (a.find('=') != std::string::npos && a[0] != '-') {
      pair(a, values);
    } else if (a[0] != '-' && input.empty()) {
      input = a;
    } else {
      return fail("unknown option '" + a + "' (see --help)");
    }
  }
  if (input.empty())
    return fail("no input file (see --help)");
  if (!haveGrid && !printIR)
    return fail("--grid is required");

  // Compile.
  interp::CompiledKernel kernel;
  std::vector<std::string> names;
  std::string configText;
  std::optional<interp::SourceKernel> source; // .tsl input: what checkServes() reads
  if (endsWith(input, ".mlir")) {
    auto buffer = llvm::MemoryBuffer::getFile(input);
    if (!buffer)
      return fail("cannot read '" + input + "'");
    auto compiled = interp::compileIR((*buffer)->getBuffer().str(), sourceOpts.kernel);
    if (!compiled)
      return fail(llvm::toString(compiled.takeError()));
    kernel = std::move(*compiled);
    for (size_t i = 0; i < kernel.numParams(); ++i)
      names.push_back("arg" + std::to_string(i));
    if (printIR) {
      std::cout << (*buffer)->getBuffer().str();
      return 0;
    }
  } else {
    sourceOpts.importDirs.push_back(TESSEL_KERNELS_DIR);
    auto compiled = interp::compileSourceFile(input, sourceOpts);
    if (!compiled) {
      std::cerr << llvm::toString(compiled.takeError()) << "\n";
      return 1;
    }
    if (printIR) {
      std::cout << compiled->ir;
      return 0;
    }
    kernel = compiled->kernel;
    names = compiled->paramNames;
    configText = compiled->configText;
    source = std::move(*compiled);
  }

  // Arguments.
  std::map<std::string, std::string> given(values.begin(), values.end());
  std::vector<Arg> args;
  std::map<std::string, HostData> buffers;
  interp::MemoryMap memory;
  std::string missing;
  for (size_t i = 0; i < kernel.numParams(); ++i) {
    auto it = given.find(names[i]);
    if (it == given.end()) {
      missing += (missing.empty() ? "" : ", ") + names[i] + ": " + kernel.paramType(i);
      continue;
    }
    std::string error;
    if (kernel.paramIsPointer(i)) {
      auto data = makeHostData(it->second, pointee(kernel.paramType(i)), seed + unsigned(i), error);
      if (!data)
        return fail(names[i] + ": " + error);
      HostData &stored = buffers[names[i]] = std::move(*data);
      memory.add(stored.bytes.data(), stored.bytes.size(), names[i]);
      args.push_back(Arg(static_cast<void *>(stored.bytes.data())));
    } else {
      auto arg = scalarArg(kernel.paramType(i), it->second, error);
      if (!arg)
        return fail(names[i] + ": " + error);
      args.push_back(*arg);
    }
    given.erase(it);
  }
  if (!missing.empty())
    return fail("missing arguments: " + missing);
  if (!given.empty())
    return fail("kernel " + kernel.name() + " has no parameter '" + given.begin()->first + "'");
  for (const auto &[name, path] : outputs)
    if (!buffers.count(name))
      return fail("--out " + name + ": not a pointer argument");

  // As the runtime does: a configuration the prune condition rules out is refused.
  if (source)
    if (llvm::Error e = source->checkServes(args))
      return fail(llvm::toString(std::move(e)));

  // Run.
  std::vector<double> times;
  for (unsigned r = 0; r < repeat; ++r) {
    auto start = std::chrono::steady_clock::now();
    if (llvm::Error e = kernel.run(grid, args, memory)) {
      std::cerr << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  std::cout << kernel.name() << (configText.empty() ? "" : " [" + configText + "]") << ": grid ("
            << grid.x << ", " << grid.y << ", " << grid.z << ") ran in " << times[times.size() / 2]
            << " ms" << (repeat > 1 ? " (median of " + std::to_string(repeat) + ")" : "") << "\n";
  if (!quiet)
    for (const auto &name : names)
      if (auto it = buffers.find(name); it != buffers.end())
        std::cout << "  " << name << ": " << summarize(it->second) << "\n";
  for (const auto &[name, path] : outputs) {
    std::string error;
    if (!writeHostData(buffers[name], path, error))
      return fail(error);
  }
  return 0;
}
