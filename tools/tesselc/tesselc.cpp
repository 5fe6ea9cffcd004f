//===- tools/tesselc/tesselc.cpp - the Tessel compiler's command line -----===//
//
// Reads the .tsl file, compiles it through the compiler library
// (compiler/Compiler.h), prints the diagnostics, writes the package (or the
// --emit stage) and reports what was compiled as a table or --json.
//
//===----------------------------------------------------------------------===//
#include "compiler/Compiler.h"
#include "package/FileUtil.h"
#include "tools/tesselc/Options.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

using namespace tessel;

namespace {

int fail(const std::string &message) {
  std::cerr << "tesselc: error: " << message << "\n";
  return 1;
}

/// Writes `text` to `path` ("" or "-": stdout).
bool writeOutput(const std::string &path, const std::string &text) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return true;
  }
  std::ofstream out(path, std::ios::binary);
  out << text;
  return bool(out);
}

/// FILE.tsl -> FILE.tslpkg, unless -o names one.
std::string packagePath(const tesselc::Options &opts) {
  if (!opts.output.empty())
    return opts.output;
  std::filesystem::path path(opts.input);
  return path.replace_extension(".tslpkg").string();
}

/// The package's configuration of the variant that `report` describes.
const Config &configOf(const compiler::CompileResult &result, const compiler::VariantReport &report) {
  return result.package.kernel(report.kernel).configs[size_t(report.config)];
}

/// The package's variant that `report` describes.
const Variant &variantOf(const compiler::CompileResult &result, const compiler::VariantReport &report) {
  return configOf(result, report).variants[report.specialised ? 1 : 0];
}

/// One row per compiled variant.
std::string reportTable(const compiler::CompileResult &result) {
  std::ostringstream table;
  table << std::left << std::setw(20) << "kernel" << std::setw(8) << "config" << std::setw(13)
        << "variant" << std::setw(7) << "warps" << std::setw(8) << "stages" << std::setw(10)
        << "shared" << std::setw(11) << "ptx lines" << "ms\n";
  for (const compiler::VariantReport &v : result.variants) {
    const Config &config = configOf(result, v);
    char ms[32];
    std::snprintf(ms, sizeof(ms), "%.1f", v.ms);
    table << std::left << std::setw(20) << v.kernel << std::setw(8) << v.config << std::setw(13)
          << (v.specialised ? "divisible16" : "generic") << std::setw(7) << config.numWarps
          << std::setw(8) << config.numStages << std::setw(10) << v.sharedBytes
          << std::setw(11) << v.ptxLines << ms << "\n";
  }
  return table.str();
}

/// Milliseconds per compiler stage.
Json stageJson(const compiler::StageTimes &t) {
  Json stages = Json::object();
  stages.set("mlirgen", t.mlirgenMs);
  stages.set("lowering", t.loweringMs);
  stages.set("llvm", t.llvmMs);
  stages.set("codegen", t.codegenMs);
  return stages;
}

/// Every variant's stage times added up: where the package's time went.
compiler::StageTimes totalStages(const compiler::CompileResult &result) {
  compiler::StageTimes total;
  for (const compiler::VariantReport &v : result.variants)
    total += v.stages;
  return total;
}

/// Kernels, their configurations and each configuration's two variants, for machines.
Json reportJson(const tesselc::Options &opts, const std::string &output,
                const compiler::CompileResult &result, double maxConfigMs) {
  Json kernels = Json::array();
  for (const KernelInfo &kernel : result.package.kernels) {
    Json configs = Json::array();
    for (const Config &record : kernel.configs) {
      int c = record.index;
      Json config = Json::object(), variants = Json::array();
      config.set("index", int64_t(c));
      config.set("constexprs", Json(record.constexprs));
      config.set("num_warps", int64_t(record.numWarps));
      config.set("num_stages", int64_t(record.numStages));
      config.set("warp_specialize", record.warpSpecialize);
      double configMs = 0;
      for (const compiler::VariantReport &v : result.variants) {
        if (v.kernel != kernel.name || v.config != c)
          continue;
        const Variant &variant = variantOf(result, v);
        Json entry = Json::object(), divisible = Json::array();
        entry.set("variant", v.specialised ? "divisible16" : "generic");
        for (const std::string &name : variant.divisibleBy16)
          divisible.push(name);
        entry.set("divisible_by_16", divisible);
        entry.set("shared_bytes", v.sharedBytes);
        entry.set("producer_warps", int64_t(variant.producerWarps));
        entry.set("ptx_lines", int64_t(v.ptxLines));
        entry.set("compile_ms", v.ms);
        entry.set("stage_ms", stageJson(v.stages));
        variants.push(entry);
        configMs += v.ms;
      }
      config.set("compile_ms", configMs);
      config.set("variants", variants);
      configs.push(config);
    }
    Json entry = Json::object();
    entry.set("name", kernel.name);
    entry.set("configs", configs);
    kernels.push(entry);
  }
  Json summary = Json::object();
  summary.set("input", opts.input);
  summary.set("output", output);
  summary.set("arch", opts.compile.arch);
  summary.set("kernels", kernels);
  summary.set("configurations", int64_t(result.variants.size() / 2));
  summary.set("max_config_ms", maxConfigMs);
  summary.set("total_ms", result.totalMs);
  summary.set("stage_ms", stageJson(totalStages(result)));
  return summary;
}

int compileFile(const tesselc::Options &opts) {
  std::error_code ec;
  if (std::filesystem::is_directory(opts.input, ec))
    return fail("'" + opts.input + "' is a directory, not a .tsl file");
  std::string source;
  try {
    source = readFile(opts.input);
  } catch (const std::exception &) {
    return fail("cannot read '" + opts.input + "'");
  }
  compiler::CompileResult result = compiler::compile(source, opts.input, opts.compile);
  std::cerr << result.diagnostics;
  if (!result.ok)
    return 1;
  if (opts.compile.stage != compiler::Stage::Package)
    return writeOutput(opts.output, result.text) ? 0 : fail("cannot write '" + opts.output + "'");

  std::string output = packagePath(opts);
  // `-o -`: the package goes to stdout, so the report goes to stderr.
  bool toStdout = output == "-";
  try {
    if (toStdout) {
      result.package.validate();
      std::cout << result.package.serialize() << std::flush;
    } else {
      result.package.save(output);
    }
  } catch (const std::exception &e) {
    return fail(std::string("cannot write the package: ") + e.what());
  }
  std::map<std::pair<std::string, int>, double> configMs;
  double maxConfigMs = 0;
  for (const compiler::VariantReport &v : result.variants)
    maxConfigMs = std::max(maxConfigMs, configMs[{v.kernel, v.config}] += v.ms);
  std::ostream &report = toStdout ? std::cerr : std::cout;
  if (opts.json) {
    report << reportJson(opts, output, result, maxConfigMs).pretty() << "\n";
    return 0;
  }
  char line[256];
  std::snprintf(line, sizeof(line),
                "wrote %s: %zu kernel(s), %zu configuration(s), %.0f ms in all, "
                "slowest configuration %.0f ms\n",
                toStdout ? "the package to stdout" : output.c_str(),
                result.package.kernels.size(), configMs.size(), result.totalMs, maxConfigMs);
  compiler::StageTimes stages = totalStages(result);
  char stageLine[256];
  std::snprintf(stageLine, sizeof(stageLine),
                "time by stage: MLIRGen %.0f ms, lowering (MLIR) %.0f ms, LLVM IR and O3 %.0f ms, "
                "NVPTX code generation %.0f ms\n",
                stages.mlirgenMs, stages.loweringMs, stages.llvmMs, stages.codegenMs);
  report << reportTable(result) << line << stageLine;
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  auto opts = tesselc::parseOptions(argc, argv);
  if (!opts)
    return 2;
  if (opts->help) {
    std::cout << tesselc::helpText();
    return 0;
  }
  if (opts->version) {
    std::cout << compiler::versionText() << "\n";
    return 0;
  }
  // The kernels shipped with Tessel are importable from anywhere, after -I.
  opts->compile.importDirs.push_back(TESSEL_KERNELS_DIR);
  return compileFile(*opts);
}
