//===- frontend/Imports.h - a file and the files it imports, as one module -===//
//
// `import "flash_attention.tsl"` makes another file's functions and constants part of the
// importing file's module, so that a kernel can be reused and configured without editing
// it: the attention variants import the attention kernels and set the constants they read
// (`SCORE_MOD = softcap`).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_IMPORTS_H
#define TESSEL_FRONTEND_IMPORTS_H

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"
#include "frontend/Parser.h"

#include <memory>
#include <string>
#include <vector>

namespace tessel::frontend {

/// The imported files of one compilation, kept alive for the diagnostics and locations that
/// point into them.
struct ImportedFiles {
  std::vector<std::unique_ptr<SourceFile>> files;
};

/// Parses `file` and, transitively, the files it imports into one module. An import's path
/// is looked up relative to the importing file's folder, then in each of `searchDirs` in
/// order. The imported files' functions and constants come first (in import order), then the
/// file's own. A constant the importing file defines replaces an imported constant of the
/// same name, in its place (the imported kernels read it: their configuration); any other
/// name defined twice is a redefinition. A file imported twice joins once; a file that
/// cannot be read and an import cycle are errors at the import.
ast::Module parseWithImports(const SourceFile &file, DiagnosticEngine &diags,
                             ImportedFiles &imported,
                             const std::vector<std::string> &searchDirs = {},
                             const ParserLimits &limits = ParserLimits());

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_IMPORTS_H
