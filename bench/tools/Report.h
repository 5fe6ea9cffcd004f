//===- bench/tools/Report.h - Tables, JSON and CSV for benchmark results -*- C++ -*-===//
//
// A benchmark result is a Record: named fields in insertion order, each a
// number, a string or null. Every tessel-bench tool prints records as an
// aligned table (or markdown) and writes them as JSON or CSV, so results from
// different tools (and from bench/reference/*.py, which writes the same JSON
// shape) can be put side by side.
//
// JSON shape: {"tool": ..., "version": ..., <meta fields>, "results": [{...}, ...]}
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_TOOLS_REPORT_H
#define TESSEL_BENCH_TOOLS_REPORT_H

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace tessel::bench {

using Value = std::variant<std::monostate, int64_t, double, std::string>;

class Record {
public:
  /// Sets a field, replacing an earlier value of the same name in place.
  void set(const std::string &key, Value value);
  /// The field, or nullptr.
  const Value *get(const std::string &key) const;
  const std::vector<std::pair<std::string, Value>> &fields() const { return fields_; }

private:
  std::vector<std::pair<std::string, Value>> fields_;
};

/// A table column: a header and how to render one record's cell.
struct Column {
  std::string header;
  std::function<std::string(const Record &)> cell;
  bool alignLeft = false;
};

/// A column that shows a field as is ("" when missing, numbers with `decimals`).
Column fieldColumn(const std::string &header, const std::string &key, int decimals = 2,
                   bool alignLeft = false);
/// A column "mean ± std" from fields <key>_mean and <key>_std ("-" when missing).
Column meanStdColumn(const std::string &header, const std::string &key, int decimals = 2);

std::string formatValue(const Value &value, int decimals = 2);
/// An aligned plain-text table, or a GitHub markdown table.
std::string formatTable(const std::vector<Record> &records, const std::vector<Column> &columns,
                        bool markdown = false);

void writeJson(std::ostream &out, const Record &meta, const std::vector<Record> &records);
/// CSV with the union of all records' fields as columns, in first-seen order.
void writeCsv(std::ostream &out, const std::vector<Record> &records);
/// Writes to `path` ("-" is stdout); throws std::runtime_error when it cannot.
void writeFile(const std::string &path, const std::function<void(std::ostream &)> &write);

} // namespace tessel::bench

#endif // TESSEL_BENCH_TOOLS_REPORT_H
