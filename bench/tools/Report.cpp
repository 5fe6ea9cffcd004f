//===- bench/tools/Report.cpp - Tables, JSON and CSV for benchmark results ===//

#include "bench/tools/Report.h"

#include "package/Json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace tessel::bench {

void Record::set(const std::string &key, Value value) {
  for (auto &field : fields_) {
    if (field.first == key) {
      field.second = std::move(value);
      return;
    }
  }
  fields_.emplace_back(key, std::move(value));
}

const Value *Record::get(const std::string &key) const {
  for (const auto &field : fields_)
    if (field.first == key)
      return &field.second;
  return nullptr;
}

std::string formatValue(const Value &value, int decimals) {
  if (std::holds_alternative<std::monostate>(value))
    return "";
  if (const auto *i = std::get_if<int64_t>(&value))
    return std::to_string(*i);
  if (const auto *d = std::get_if<double>(&value)) {
    if (!std::isfinite(*d))
      return "-";
    char buffer[64];
    std::snprintf(buffer, sizeof(buffer), "%.*f", decimals, *d);
    return buffer;
  }
  return std::get<std::string>(value);
}

Column fieldColumn(const std::string &header, const std::string &key, int decimals,
                   bool alignLeft) {
  return Column{header,
                [key, decimals](const Record &r) {
                  const Value *v = r.get(key);
                  return v ? formatValue(*v, decimals) : std::string();
                },
                alignLeft};
}

Column meanStdColumn(const std::string &header, const std::string &key, int decimals) {
  return Column{header, [key, decimals](const Record &r) {
                  const Value *mean = r.get(key + "_mean");
                  const Value *std = r.get(key + "_std");
                  if (!mean || !std::holds_alternative<double>(*mean))
                    return std::string("-");
                  std::string text = formatValue(*mean, decimals);
                  if (std && std::holds_alternative<double>(*std))
                    text += " ± " + formatValue(*std, decimals);
                  return text;
                }};
}

// Display width of UTF-8 text (counts code points; enough for "±").
static size_t displayWidth(const std::string &text) {
  size_t width = 0;
  for (unsigned char c : text)
    width += (c & 0xC0) != 0x80;
  return width;
}

std::string formatTable(const std::vector<Record> &records, const std::vector<Column> &columns,
                        bool markdown) {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> widths;
  for (const Column &column : columns)
    widths.push_back(displayWidth(column.header));
  for (const Record &record : records) {
    cells.emplace_back();
    for (size_t c = 0; c < columns.size(); ++c) {
      cells.back().push_back(columns[c].cell(record));
      widths[c] = std::max(widths[c], displayWidth(cells.back().back()));
    }
  }
  std::ostringstream out;
  auto pad = [&](const std::string &text, size_t c) {
    std::string fill(widths[c] - displayWidth(text), ' ');
    return columns[c].alignLeft ? text + fill : fill + text;
  };
  auto row = [&](const std::vector<std::string> &texts) {
    std::string line = markdown ? "|" : "";
    for (size_t c = 0; c < columns.size(); ++c)
      line += (markdown ? " " : (c ? "  " : "")) + pad(texts[c], c) + (markdown ? " |" : "");
    while (!markdown && !line.empty() && line.back() == ' ')
      line.pop_back();
    out << line << "\n";
  };
  std::vector<std::string> headers;
  for (const Column &column : columns)
    headers.push_back(column.header);
  row(headers);
  std::string rule = markdown ? "|" : "";
  for (size_t c = 0; c < columns.size(); ++c) {
    if (markdown)
      rule += columns[c].alignLeft ? " :" + std::string(widths[c] - 1, '-') + " |"
                                   : " " + std::string(widths[c] - 1, '-') + ": |";
    else
      rule += (c ? "  " : "") + std::string(widths[c], '-');
  }
  out << rule << "\n";
  for (const auto &texts : cells)
    row(texts);
  return out.str();
}

static Json jsonValue(const Value &value) {
  if (const auto *i = std::get_if<int64_t>(&value))
    return Json(*i);
  if (const auto *d = std::get_if<double>(&value))
    return Json(*d); // non-finite: null
  if (const auto *text = std::get_if<std::string>(&value))
    return Json(*text);
  return Json();
}

static Json jsonObject(const Record &record) {
  Json object = Json::object();
  for (const auto &[key, value] : record.fields())
    object.set(key, jsonValue(value));
  return object;
}

void writeJson(std::ostream &out, const Record &meta, const std::vector<Record> &records) {
  Json document = jsonObject(meta), results = Json::array();
  for (const Record &record : records)
    results.push(jsonObject(record));
  document.set("results", std::move(results));
  out << document.pretty() << "\n";
}

static std::string csvField(const std::string &text) {
  if (text.find_first_of(",\"\n") == std::string::npos)
    return text;
  std::string out = "\"";
  for (char c : text)
    out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

void writeCsv(std::ostream &out, const std::vector<Record> &records) {
  std::vector<std::string> keys;
  for (const Record &record : records)
    for (const auto &field : record.fields())
      if (std::find(keys.begin(), keys.end(), field.first) == keys.end())
        keys.push_back(field.first);
  for (size_t k = 0; k < keys.size(); ++k)
    out << (k ? "," : "") << csvField(keys[k]);
  out << "\n";
  for (const Record &record : records) {
    for (size_t k = 0; k < keys.size(); ++k) {
      const Value *v = record.get(keys[k]);
      std::string text;
      if (v && std::holds_alternative<double>(*v))
        text = std::isfinite(std::get<double>(*v)) ? jsonValue(*v).dump() : "";
      else if (v)
        text = formatValue(*v);
      out << (k ? "," : "") << csvField(text);
    }
    out << "\n";
  }
}

void writeFile(const std::string &path, const std::function<void(std::ostream &)> &write) {
  if (path == "-") {
    write(std::cout);
    return;
  }
  std::ofstream file(path);
  if (!file)
    throw std::runtime_error("cannot open '" + path + "' for writing");
  write(file);
  if (!file.flush())
    throw std::runtime_error("cannot write '" + path + "'");
}

} // namespace tessel::bench
