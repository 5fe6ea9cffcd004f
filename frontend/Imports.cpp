//===- frontend/Imports.cpp - a file and the files it imports, as one module ===//
#include "frontend/Imports.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tessel::frontend {
namespace fs = std::filesystem;

namespace {

/// One spelling per file, for cycles and diamonds.
std::string canonical(const std::string &path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

class ImportLoader {
public:
  ImportLoader(DiagnosticEngine &diags, ImportedFiles &imported,
               const std::vector<std::string> &searchDirs, const ParserLimits &limits)
      : diags_(diags), imported_(imported), searchDirs_(searchDirs), limits_(limits) {}

  /// `file`'s module with its imports merged in; `key` identifies it for cycles. `reach`
  /// gets the file indices it imports, directly or not.
  ast::Module load(const SourceFile &file, const std::string &key, std::set<uint32_t> &reach) {
    ast::Module own = parseModule(file, diags_, limits_);
    if (own.imports.empty())
      return own;
    active_.push_back(key);
    ast::Module merged;
    for (const ast::Import &imp : own.imports) {
      const SourceFile *dep = open(file, imp);
      if (!dep)
        continue;
      std::string depKey = canonical(dep->name());
      uint32_t index = diags_.fileIndex(*dep);
      std::set<uint32_t> depReach;
      if (loaded_.count(depKey)) { // joined already: its definitions are in the module
        depReach = loaded_[depKey];
      } else {
        loaded_[depKey] = {}; // (a cycle back to it is caught by `active_` first)
        ast::Module theirs = load(*dep, depKey, depReach);
        loaded_[depKey] = depReach;
        depReach.insert(index);
        merge(merged, std::move(theirs), depReach);
      }
      depReach.insert(index);
      reach.insert(depReach.begin(), depReach.end());
    }
    active_.pop_back();
    merge(merged, std::move(own), reach);
    return merged;
  }

private:
  /// The imported file, read and registered (once: a second import gives the same one);
  /// null after an error.
  const SourceFile *open(const SourceFile &from, const ast::Import &imp) {
    std::vector<fs::path> tried;
    fs::path base = fs::path(from.name()).parent_path();
    tried.push_back(base / imp.path);
    for (const std::string &dir : searchDirs_)
      tried.push_back(fs::path(dir) / imp.path);
    if (fs::path(imp.path).is_absolute())
      tried = {fs::path(imp.path)};
    for (const fs::path &candidate : tried) {
      std::error_code ec;
      if (!fs::is_regular_file(candidate, ec))
        continue;
      std::string key = canonical(candidate.string());
      for (const std::string &open : active_)
        if (open == key) {
          diags_.error(imp.range, "import cycle: '" + imp.path + "' imports this file again");
          return nullptr;
        }
      for (const auto &f : imported_.files) // a diamond: the file read already
        if (canonical(f->name()) == key)
          return f.get();
      std::ifstream in(candidate, std::ios::binary);
      std::stringstream text;
      text << in.rdbuf();
      if (!in && !in.eof()) {
        diags_.error(imp.range, "cannot read '" + candidate.string() + "'");
        return nullptr;
      }
      imported_.files.push_back(
          std::make_unique<SourceFile>(candidate.lexically_normal().string(), text.str()));
      return imported_.files.back().get();
    }
    std::string where;
    for (const fs::path &p : tried)
      where += (where.empty() ? "" : ", ") + p.parent_path().string();
    diags_.error(imp.range, "cannot find '" + imp.path + "' (looked in " +
                                (where.empty() ? std::string(".") : where) + ")");
    return nullptr;
  }

  void redefinition(const std::string &name, SourceRange range, SourceRange previous) {
    Diagnostic &d = diags_.error(range, "redefinition of '" + name + "'");
    DiagnosticEngine::note(d, previous, "previous definition is here");
  }

  /// `from`'s definitions after `into`'s. A constant of `from` replaces one of `into` in
  /// place when `into`'s came from a file `from` imports (`reach`, file indices): an
  /// importing file configures what it imports. Any other name twice is a redefinition.
  void merge(ast::Module &into, ast::Module from, const std::set<uint32_t> &reach) {
    for (ast::Constant &c : from.constants) {
      auto it = std::find_if(into.constants.begin(), into.constants.end(),
                             [&](const ast::Constant &x) { return x.name == c.name; });
      if (it != into.constants.end() && reach.count(it->nameRange.begin.file))
        *it = std::move(c);
      else if (it != into.constants.end())
        redefinition(c.name, c.nameRange, it->nameRange);
      else if (const ast::Function *f = into.function(c.name))
        redefinition(c.name, c.nameRange, f->nameRange);
      else
        into.constants.push_back(std::move(c));
    }
    for (auto &fn : from.functions) {
      if (const ast::Function *f = into.function(fn->name))
        redefinition(fn->name, fn->nameRange, f->nameRange);
      else if (const ast::Constant *other = into.constant(fn->name))
        redefinition(fn->name, fn->nameRange, other->nameRange);
      else
        into.functions.push_back(std::move(fn));
    }
  }

  DiagnosticEngine &diags_;
  ImportedFiles &imported_;
  const std::vector<std::string> &searchDirs_;
  const ParserLimits &limits_;
  std::vector<std::string> active_; // the files being loaded, outermost first
  /// Every imported file (canonical path), with the files it imports: loaded once.
  std::map<std::string, std::set<uint32_t>> loaded_;
};

} // namespace

ast::Module parseWithImports(const SourceFile &file, DiagnosticEngine &diags,
                             ImportedFiles &imported, const std::vector<std::string> &searchDirs,
                             const ParserLimits &limits) {
  ImportLoader loader(diags, imported, searchDirs, limits);
  std::set<uint32_t> reach;
  return loader.load(file, canonical(file.name()), reach);
}

} // namespace tessel::frontend
