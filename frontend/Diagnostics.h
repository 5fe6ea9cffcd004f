//===- frontend/Diagnostics.h - source files, locations, clang-style errors -===//
//
// Plain C++ (no LLVM/MLIR): the parser fuzzer links this alone.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_FRONTEND_DIAGNOSTICS_H
#define TESSEL_FRONTEND_DIAGNOSTICS_H

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::frontend {

/// A position in a source file: byte offset and 1-based line and column, and which file of
/// the compilation (0: the file compiled; others: the files it imports, in the order the
/// DiagnosticEngine met them).
struct SourceLoc {
  uint32_t offset = 0;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t file = 0;
  bool isValid() const { return line != 0; }
};

/// A half-open byte range [begin, end) of one file.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;
  SourceRange() = default;
  SourceRange(SourceLoc b, SourceLoc e) : begin(b), end(e) {}
  explicit SourceRange(SourceLoc b) : begin(b), end(b) {}
  bool isValid() const { return begin.isValid(); }
};

/// The range from the start of `a` to the end of `b`.
SourceRange join(SourceRange a, SourceRange b);

/// A source file's name and text, with a line index for printing.
class SourceFile {
public:
  SourceFile(std::string name, std::string text);
  const std::string &name() const { return name_; }
  const std::string &text() const { return text_; }
  unsigned lineCount() const { return unsigned(lineStarts_.size()); }
  /// The text of 1-based line `line` without its newline ("" when out of range).
  std::string_view lineText(unsigned line) const;
  /// The location of 1-based (line, col), clamped into the file (file index 0: the caller
  /// sets the index it knows the file by).
  SourceLoc locFor(unsigned line, unsigned col) const;

private:
  std::string name_;
  std::string text_;
  std::vector<uint32_t> lineStarts_;
};

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  /// Notes printed after the diagnostic, each with its own location.
  std::vector<Diagnostic> notes;
};

/// Collects the diagnostics of one compilation (a file and the files it imports) and prints
/// them like clang:
///   file.tsl:12:9: error: unknown name 'colss'
///       mask = colss < n
///              ^~~~~
class DiagnosticEngine {
public:
  /// By default at most this many errors are kept (clang's -ferror-limit); then one
  /// "too many errors" is added and the rest are dropped.
  static constexpr unsigned kDefaultErrorLimit = 20;

  explicit DiagnosticEngine(const SourceFile &file, unsigned errorLimit = kDefaultErrorLimit)
      : files_{&file}, errorLimit_(errorLimit) {}

  /// Adds an error; returns it so that notes can be attached.
  Diagnostic &error(SourceRange range, std::string message);
  Diagnostic &warning(SourceRange range, std::string message);
  /// Attaches a note to `diag`.
  static void note(Diagnostic &diag, SourceRange range, std::string message);

  bool hasErrors() const { return errorCount_ != 0; }
  unsigned errorCount() const { return errorCount_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  /// The file compiled (index 0).
  const SourceFile &file() const { return *files_.front(); }
  /// The index locations in `file` carry, adding it (an imported file) on first use. The
  /// file must outlive the engine.
  uint32_t fileIndex(const SourceFile &file);
  const SourceFile &fileAt(uint32_t index) const {
    return *files_[index < files_.size() ? index : 0];
  }
  /// The file named `name` (index), or nullopt.
  std::optional<uint32_t> fileNamed(const std::string &name) const;

  /// Renders one diagnostic (and its notes) as text ending in a newline.
  std::string render(const Diagnostic &diag) const;
  /// Prints every diagnostic not printed yet, in the order reported.
  void flush(std::ostream &os);
  /// Prints the "N errors generated." summary when there were errors.
  void printSummary(std::ostream &os) const;

private:
  Diagnostic &add(Severity severity, SourceRange range, std::string message);
  void renderOne(std::string &out, const Diagnostic &diag) const;

  std::vector<const SourceFile *> files_;
  unsigned errorLimit_; // 0: no limit
  std::vector<Diagnostic> diags_;
  Diagnostic overflow_;
  unsigned errorCount_ = 0;
  size_t printed_ = 0;
};

} // namespace tessel::frontend

#endif // TESSEL_FRONTEND_DIAGNOSTICS_H
