//===- frontend/fuzz/ParserFuzzer.cpp - libFuzzer entry for lexer + parser ===//
//
// Parses arbitrary bytes, prints the AST and renders every diagnostic: none of
// it may crash, hang, or trip a sanitizer.
//
//===----------------------------------------------------------------------===//
#include "frontend/ASTPrinter.h"
#include "frontend/Config.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace tessel::frontend;
  SourceFile file("fuzz.tsl", std::string(reinterpret_cast<const char *>(data), size));
  DiagnosticEngine diags(file);
  ast::Module module = parseModule(file, diags);
  std::string tree = printAST(module);
  // Configurations exercise constant evaluation of defaults and configs.
  for (const auto &fn : module.functions)
    if (fn->kind == ast::FunctionKind::Kernel)
      (void)resolveConfigs(*fn, {}, 4, diags);
  std::ostringstream sink;
  diags.flush(sink);
  diags.printSummary(sink);
  return tree.size() > size_t(1) << 40 ? 1 : 0;
}
