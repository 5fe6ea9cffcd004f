//===- tools/tesselc/Options.cpp - tesselc's command line ------------------===//
#include "tools/tesselc/Options.h"
#include "package/ConfigLimits.h"

#include <cstdlib>
#include <iostream>

namespace tessel::tesselc {

using compiler::Stage;

const char *helpText() {
  return R"(OVERVIEW: tesselc - the Tessel kernel compiler

USAGE: tesselc [options] FILE.tsl

Compiles every @kernel of FILE.tsl, for each configuration (@autotune configs,
or one from the constexpr defaults and -D values), into two variants (generic,
and specialised for 16-byte-aligned pointers and integer parameters that are
multiples of 16), and writes them to a package (FILE.tslpkg by default).

OPTIONS:
  -o FILE              Output file (package, or the --emit stage; '-' = stdout)
  --emit=STAGE         Print one stage instead of writing a package:
                         ast           the syntax tree
                         tessel        the tessel dialect (frontend output)
                         llvm-dialect  after the lowering (LLVM + NVVM dialects)
                         llvm          the optimised LLVM IR
                         ptx           the PTX
  --config N           With --emit: the configuration to show (default 0)
  --specialize         With --emit: the variant specialised for divisibility by 16
  --arch ARCH          sm_80, sm_90 or sm_90a (default sm_90)
  -D NAME=VALUE        Set a constexpr (int, float, True/False or a dtype such as
                       bf16); overrides defaults and every @autotune config
  -I DIR               Where `import "file.tsl"` looks after the importing file's folder
                       (repeatable, in order; then the kernels/ folder of Tessel's
                       source tree, so `import "flash_attention.tsl"` works anywhere)
  --kernel NAME        Compile only this kernel (repeatable; default: all)
  --num-warps N        num_warps of kernels without @autotune (default 4)
  --tma OPERANDS        sm_90a: wgmma operands loaded by the bulk tensor engine (TMA):
                       a, b, ab or none (default b; the rest use cp.async)
  --mma-tma OPERANDS   sm_90, sm_90a: mma.sync operands (f16, bf16, tf32) loaded by the
                       bulk tensor engine: a, b, ab or none (default ab; the rest use
                       cp.async)
  --multicast-b N      sm_90, sm_90a: launch programs in clusters of N (2, 4 or 8) that
                       fetch a bulk-copied B tile of whole 128-byte column blocks once
                       for all N (TMA multicast) where consecutive program ids copy the
                       same tile (tested in the kernel; default 1: no clusters)
  --no-async-dots      sm_90a: every register-A wgmma dot waits for its result at once
                       (-tessel-async-dots off; to measure what the overlap is worth)
  --warp-specialize    sm_90a: pipelined loops whose loads all come by TMA (with --tma ab)
                       run in two partitions: a producer warpgroup issues the copies, the
                       num_warps consumer warps compute (docs/matmul.md); a configuration
                       asks for it with config(..., warp_specialize=True)
  --warpgroup-turns    sm_90a: the consumer warpgroups of such a loop whose dots retire
                       within the iteration issue its first product in turn (ping-pong;
                       off by default: measured no faster on attention, docs/attention.md)
  --max-stages N       Compile only the configurations with num_stages <= N (e.g. for
                       builds whose pipelined loops are slow to compile and gain
                       little, such as exact-f32 FMA dots; default: all)
  --error-limit N      Stop reporting after N errors (default 20; 0: no limit)
  --cubin              Also store each variant's machine code, assembled by the CUDA
                       toolkit's ptxas for --arch: a GPU of that arch then loads it
                       instead of JIT-compiling the PTX on first launch
  --ptxas PATH         The ptxas for --cubin (default: $CUDA_HOME/bin, /usr/local/cuda/bin,
                       then PATH)
  --json               Print a machine-readable summary on stdout
  --help               Show this help
  --version            Show the version
)";
}

static bool fail(const std::string &message) {
  std::cerr << "tesselc: error: " << message << "\n";
  return false;
}

static bool parseDefine(const std::string &text, Options &opts) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    return fail("-D expects NAME=VALUE, got '" + text + "'");
  std::string name = text.substr(0, eq);
  auto value = frontend::parseConstValue(text.substr(eq + 1));
  if (!value)
    return fail("-D " + name + ": '" + text.substr(eq + 1) +
                "' is not an int, a float, True/False or a dtype");
  for (auto &kv : opts.compile.defines)
    if (kv.first == name) {
      kv.second = *value;
      return true;
    }
  opts.compile.defines.emplace_back(name, *value);
  return true;
}

static bool parseEmit(const std::string &v, Options &opts) {
  if (v == "ast") opts.compile.stage = Stage::AST;
  else if (v == "tessel") opts.compile.stage = Stage::Tessel;
  else if (v == "llvm-dialect") opts.compile.stage = Stage::LLVMDialect;
  else if (v == "llvm") opts.compile.stage = Stage::LLVM;
  else if (v == "ptx") opts.compile.stage = Stage::PTX;
  else if (v == "package") opts.compile.stage = Stage::Package;
  else
    return fail("unknown --emit stage '" + v + "' (expected ast, tessel, llvm-dialect, llvm or ptx)");
  return true;
}

static bool parseUnsigned(const std::string &flag, const std::string &v, unsigned &out) {
  char *end = nullptr;
  unsigned long n = std::strtoul(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n > 1024)
    return fail(flag + " expects a number, got '" + v + "'");
  out = unsigned(n);
  return true;
}

std::optional<Options> parseOptions(int argc, char **argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // Options with a value accept "--opt=V", "--opt V" (and "-DV", "-oV").
    auto value = [&](const std::string &flag, std::string &out) -> bool {
      if (a.size() > flag.size() && a.compare(0, flag.size() + 1, flag + "=") == 0) {
        out = a.substr(flag.size() + 1);
        return true;
      }
      if (a == flag) {
        if (i + 1 >= argc)
          return fail(flag + " expects a value");
        out = argv[++i];
        return true;
      }
      return false;
    };
    auto is = [&](const std::string &flag) {
      return a == flag || a.compare(0, flag.size() + 1, flag + "=") == 0;
    };
    std::string v;
    if (a == "--help" || a == "-h" || a == "-help") {
      opts.help = true;
    } else if (a == "--version") {
      opts.version = true;
    } else if (a == "--json") {
      opts.json = true;
    } else if (a == "--specialize") {
      opts.compile.specialize = true;
    } else if (a == "-o") {
      if (i + 1 >= argc) {
        fail("-o expects a file name");
        return std::nullopt;
      }
      opts.output = argv[++i];
    } else if (a.size() > 2 && a.compare(0, 2, "-o") == 0 && a[2] != '-') {
      opts.output = a.substr(2);
    } else if (a == "-D") {
      if (i + 1 >= argc) {
        fail("-D expects NAME=VALUE");
        return std::nullopt;
      }
      if (!parseDefine(argv[++i], opts))
        return std::nullopt;
    } else if (a.size() > 2 && a.compare(0, 2, "-D") == 0) {
      if (!parseDefine(a.substr(2), opts))
        return std::nullopt;
    } else if (a == "-I") {
      if (i + 1 >= argc) {
        fail("-I expects a folder");
        return std::nullopt;
      }
      opts.compile.importDirs.push_back(argv[++i]);
    } else if (a.size() > 2 && a.compare(0, 2, "-I") == 0) {
      opts.compile.importDirs.push_back(a.substr(2));
    } else if (is("--emit")) {
      if (!value("--emit", v) || !parseEmit(v, opts))
        return std::nullopt;
    } else if (is("--arch")) {
      if (!value("--arch", v))
        return std::nullopt;
      if (v != "sm_80" && v != "sm_90" && v != "sm_90a") {
        fail("unsupported --arch '" + v + "' (expected sm_80, sm_90 or sm_90a)");
        return std::nullopt;
      }
      opts.compile.arch = v;
    } else if (is("--tma") || is("--mma-tma")) {
      // Which dot operands the bulk tensor engine copies ("none": cp.async only).
      std::string flag = is("--tma") ? "--tma" : "--mma-tma";
      if (!value(flag, v))
        return std::nullopt;
      if (v != "a" && v != "b" && v != "ab" && v != "none") {
        fail(flag + " must be a, b, ab or none");
        return std::nullopt;
      }
      (flag == "--tma" ? opts.compile.tmaOperands : opts.compile.mmaTmaOperands) = v == "none" ? "" : v;
    } else if (is("--multicast-b")) {
      unsigned n = 0;
      if (!value("--multicast-b", v) || !parseUnsigned("--multicast-b", v, n))
        return std::nullopt;
      if (n != 1 && n != 2 && n != 4 && n != 8) {
        fail("--multicast-b must be 1, 2, 4 or 8");
        return std::nullopt;
      }
      opts.compile.multicastB = n;
    } else if (is("--cubin")) {
      opts.compile.cubin = true;
    } else if (is("--ptxas")) {
      if (!value("--ptxas", v))
        return std::nullopt;
      opts.compile.ptxas = v;
    } else if (is("--no-async-dots")) {
      opts.compile.asyncDots = false;
    } else if (is("--warpgroup-turns")) {
      opts.compile.warpgroupTurns = true;
    } else if (is("--warp-specialize")) {
      opts.compile.warpSpecialize = true;
    } else if (is("--kernel")) {
      if (!value("--kernel", v))
        return std::nullopt;
      opts.compile.kernels.push_back(v);
    } else if (is("--num-warps")) {
      unsigned n = 0;
      if (!value("--num-warps", v) || !parseUnsigned("--num-warps", v, n))
        return std::nullopt;
      if (!isValidNumWarps(n)) {
        fail("--num-warps must be a power of two from 1 to " + std::to_string(kMaxNumWarps));
        return std::nullopt;
      }
      opts.compile.numWarps = n;
    } else if (is("--max-stages")) {
      unsigned n = 0;
      if (!value("--max-stages", v) || !parseUnsigned("--max-stages", v, n))
        return std::nullopt;
      if (n == 0) {
        fail("--max-stages must be at least 1");
        return std::nullopt;
      }
      opts.compile.maxStages = n;
    } else if (is("--error-limit")) {
      if (!value("--error-limit", v) || !parseUnsigned("--error-limit", v, opts.compile.errorLimit))
        return std::nullopt;
    } else if (is("--config")) {
      unsigned n = 0;
      if (!value("--config", v) || !parseUnsigned("--config", v, n))
        return std::nullopt;
      opts.compile.config = n;
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      fail("unknown option '" + a + "' (see --help)");
      return std::nullopt;
    } else {
      if (!opts.input.empty()) {
        fail("more than one input file ('" + opts.input + "' and '" + a + "')");
        return std::nullopt;
      }
      opts.input = a;
    }
  }
  if (opts.compile.cubin && opts.compile.stage != Stage::Package) {
    fail("--cubin stores machine code in a package; it does not combine with --emit");
    return std::nullopt;
  }
  if (!opts.help && !opts.version && opts.input.empty()) {
    fail("no input file (usage: tesselc [options] FILE.tsl; see --help)");
    return std::nullopt;
  }
  return opts;
}

} // namespace tessel::tesselc
