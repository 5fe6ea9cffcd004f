//===- frontend/Diagnostics.cpp - clang-style diagnostic printing ----------===//
#include "frontend/Diagnostics.h"

#include <algorithm>

namespace tessel::frontend {

SourceRange join(SourceRange a, SourceRange b) {
  if (!a.isValid())
    return b;
  if (!b.isValid())
    return a;
  return SourceRange(a.begin, b.end.offset > a.end.offset ? b.end : a.end);
}

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  // A UTF-8 byte-order mark (editors on Windows write one) is not part of the program.
  if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0)
    text_.erase(0, 3);
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n')
      lineStarts_.push_back(uint32_t(i + 1));
}

std::string_view SourceFile::lineText(unsigned line) const {
  if (line == 0 || line > lineStarts_.size())
    return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = line < lineStarts_.size() ? lineStarts_[line] - 1 : text_.size();
  if (end > begin && text_[end - 1] == '\r')
    --end;
  return std::string_view(text_).substr(begin, end - begin);
}

SourceLoc SourceFile::locFor(unsigned line, unsigned col) const {
  line = std::clamp(line, 1u, unsigned(lineStarts_.size()));
  size_t length = lineText(line).size();
  col = std::clamp(col, 1u, unsigned(length + 1));
  return SourceLoc{uint32_t(lineStarts_[line - 1] + col - 1), line, col};
}

uint32_t DiagnosticEngine::fileIndex(const SourceFile &file) {
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i] == &file)
      return uint32_t(i);
  files_.push_back(&file);
  return uint32_t(files_.size() - 1);
}

std::optional<uint32_t> DiagnosticEngine::fileNamed(const std::string &name) const {
  for (size_t i = 0; i < files_.size(); ++i)
    if (files_[i]->name() == name)
      return uint32_t(i);
  return std::nullopt;
}

Diagnostic &DiagnosticEngine::add(Severity severity, SourceRange range,
                                  std::string message) {
  if (severity == Severity::Error) {
    ++errorCount_;
    if (errorLimit_ != 0 && errorCount_ > errorLimit_) {
      // Past the limit the diagnostic goes to a scratch slot that is dropped.
      if (errorCount_ == errorLimit_ + 1) {
        Diagnostic stop;
        stop.range = range;
        stop.message = "too many errors emitted, stopping now (--error-limit " +
                       std::to_string(errorLimit_) + "; 0 for no limit)";
        diags_.push_back(std::move(stop));
      }
      overflow_ = Diagnostic();
      return overflow_;
    }
  }
  Diagnostic diag;
  diag.severity = severity;
  diag.range = range;
  diag.message = std::move(message);
  diags_.push_back(std::move(diag));
  return diags_.back();
}

Diagnostic &DiagnosticEngine::error(SourceRange range, std::string message) {
  return add(Severity::Error, range, std::move(message));
}

Diagnostic &DiagnosticEngine::warning(SourceRange range, std::string message) {
  return add(Severity::Warning, range, std::move(message));
}

void DiagnosticEngine::note(Diagnostic &diag, SourceRange range, std::string message) {
  Diagnostic n;
  n.severity = Severity::Note;
  n.range = range;
  n.message = std::move(message);
  diag.notes.push_back(std::move(n));
}

static const char *severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

void DiagnosticEngine::renderOne(std::string &out, const Diagnostic &diag) const {
  const SourceFile &file = fileAt(diag.range.begin.file);
  out += file.name();
  if (diag.range.isValid()) {
    out += ':' + std::to_string(diag.range.begin.line) + ':' +
           std::to_string(diag.range.begin.col);
  }
  out += ": ";
  out += severityName(diag.severity);
  out += ": ";
  out += diag.message;
  out += '\n';
  if (!diag.range.isValid())
    return;
  std::string_view line = file.lineText(diag.range.begin.line);
  // Non-printable bytes would garble the terminal: show them as '?'.
  std::string shown(line);
  for (char &c : shown)
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      c = '?';
  out += shown;
  out += '\n';
  // The caret line repeats the tabs of the source line so that it aligns.
  size_t col = std::min<size_t>(diag.range.begin.col - 1, line.size());
  std::string caret;
  for (size_t i = 0; i < col; ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  caret += '^';
  size_t endCol = col + 1;
  if (diag.range.end.line == diag.range.begin.line &&
      diag.range.end.col > diag.range.begin.col)
    endCol = std::min<size_t>(diag.range.end.col - 1, line.size());
  else if (diag.range.end.line > diag.range.begin.line)
    endCol = line.size();
  for (size_t i = col + 1; i < endCol; ++i)
    caret += '~';
  out += caret;
  out += '\n';
}

std::string DiagnosticEngine::render(const Diagnostic &diag) const {
  std::string out;
  renderOne(out, diag);
  for (const Diagnostic &n : diag.notes)
    renderOne(out, n);
  return out;
}

void DiagnosticEngine::flush(std::ostream &os) {
  // The lexer runs before the parser: print in source order (an imported file's after).
  // (A stable sort by offset, done on indices: std::stable_sort trips a
  // libstdc++ deprecation warning under clang.)
  std::vector<size_t> order;
  for (size_t i = printed_; i < diags_.size(); ++i)
    order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const SourceLoc &la = diags_[a].range.begin, &lb = diags_[b].range.begin;
    if (la.file != lb.file)
      return la.file < lb.file;
    return la.offset != lb.offset ? la.offset < lb.offset : a < b;
  });
  std::vector<Diagnostic> sorted;
  for (size_t i : order)
    sorted.push_back(std::move(diags_[i]));
  std::move(sorted.begin(), sorted.end(), diags_.begin() + long(printed_));
  for (; printed_ < diags_.size(); ++printed_)
    os << render(diags_[printed_]);
  os.flush();
}

void DiagnosticEngine::printSummary(std::ostream &os) const {
  if (errorCount_ == 0)
    return;
  os << errorCount_ << (errorCount_ == 1 ? " error" : " errors") << " generated.\n";
}

} // namespace tessel::frontend
