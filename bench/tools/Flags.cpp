//===- bench/tools/Flags.cpp - Command-line flags for tessel-bench tools --===//

#include "bench/tools/Flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>

#ifndef TESSEL_VERSION
#define TESSEL_VERSION "unknown"
#endif

namespace tessel::bench {

const char *versionString() { return TESSEL_VERSION; }

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ','))
    if (!item.empty())
      items.push_back(item);
  return items;
}

static int64_t parseInt(const std::string &text) {
  if (text.empty())
    throw std::invalid_argument("expected an integer, got nothing");
  errno = 0;
  char *end = nullptr;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE)
    throw std::invalid_argument("expected an integer, got '" + text + "'");
  return value;
}

static double parseDouble(const std::string &text) {
  if (text.empty())
    throw std::invalid_argument("expected a number, got nothing");
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || errno == ERANGE || !std::isfinite(value))
    throw std::invalid_argument("expected a number, got '" + text + "'");
  return value;
}

static std::string joinList(const std::vector<std::string> &items) {
  std::string text;
  for (const std::string &item : items)
    text += (text.empty() ? "" : ",") + item;
  return text;
}

FlagParser::FlagParser(std::string program, std::string description)
    : program_(std::move(program)), description_(std::move(description)) {}

void FlagParser::add(const std::string &name, const std::string &valueName,
                     const std::string &help, std::string &target) {
  addCustom(name, valueName, help, target, [&target](const std::string &v) { target = v; });
}

void FlagParser::add(const std::string &name, const std::string &valueName,
                     const std::string &help, int64_t &target) {
  addCustom(name, valueName, help, std::to_string(target),
            [&target](const std::string &v) { target = parseInt(v); });
}

void FlagParser::add(const std::string &name, const std::string &valueName,
                     const std::string &help, double &target) {
  std::ostringstream text;
  text << target;
  addCustom(name, valueName, help, text.str(),
            [&target](const std::string &v) { target = parseDouble(v); });
}

void FlagParser::addSwitch(const std::string &name, const std::string &help, bool &target) {
  addCustom(name, "", help, "", [&target](const std::string &) { target = true; });
  flags_.back().isSwitch = true;
}

void FlagParser::addList(const std::string &name, const std::string &valueName,
                         const std::string &help, std::vector<std::string> &target) {
  addCustom(name, valueName, help, joinList(target), [&target](const std::string &v) {
    target = splitList(v);
    if (target.empty())
      throw std::invalid_argument("expected a comma-separated list, got '" + v + "'");
  });
}

void FlagParser::addList(const std::string &name, const std::string &valueName,
                         const std::string &help, std::vector<int64_t> &target) {
  std::vector<std::string> defaults;
  for (int64_t value : target)
    defaults.push_back(std::to_string(value));
  addCustom(name, valueName, help, joinList(defaults), [&target](const std::string &v) {
    std::vector<int64_t> values;
    for (const std::string &item : splitList(v))
      values.push_back(parseInt(item));
    if (values.empty())
      throw std::invalid_argument("expected a comma-separated list of integers, got '" + v + "'");
    target = values;
  });
}

void FlagParser::addCustom(const std::string &name, const std::string &valueName,
                           const std::string &help, const std::string &defaultText,
                           std::function<void(const std::string &)> set) {
  flags_.push_back(Flag{name, valueName, help, defaultText, false, std::move(set)});
}

FlagParser::Flag *FlagParser::find(const std::string &name) {
  for (Flag &flag : flags_)
    if (flag.name == name)
      return &flag;
  return nullptr;
}

bool FlagParser::seen(const std::string &name) const {
  for (const Flag &flag : flags_)
    if (flag.name == name)
      return flag.seen;
  return false;
}

FlagParser::Outcome FlagParser::parse(int argc, char **argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i] ? argv[i] : "";
    if (arg == "--help" || arg == "-h")
      return Outcome::Help;
    if (arg == "--version")
      return Outcome::Version;
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      if (!positionalName_.empty() && (arg.empty() || arg[0] != '-')) {
        positional_.push_back(arg);
        continue;
      }
      error_ = "unexpected argument '" + arg + "'";
      return Outcome::Error;
    }
    std::string name = arg.substr(2), value;
    bool hasValue = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      hasValue = true;
    }
    Flag *flag = find(name);
    if (!flag) {
      error_ = "unknown flag --" + name;
      return Outcome::Error;
    }
    if (flag->isSwitch) {
      if (hasValue) {
        error_ = "--" + name + " takes no value";
        return Outcome::Error;
      }
    } else if (!hasValue) {
      if (i + 1 >= argc) {
        error_ = "--" + name + " needs a value (" + flag->valueName + ")";
        return Outcome::Error;
      }
      value = argv[++i];
    }
    try {
      flag->set(value);
    } catch (const std::exception &e) {
      error_ = "bad value for --" + name + ": " + e.what();
      return Outcome::Error;
    }
    flag->seen = true;
  }
  return Outcome::Ok;
}

std::optional<int> FlagParser::parseOrExit(int argc, char **argv) {
  switch (parse(argc, argv)) {
  case Outcome::Ok:
    return std::nullopt;
  case Outcome::Help:
    std::cout << usage();
    return 0;
  case Outcome::Version:
    std::cout << program_ << " " << versionString() << "\n";
    return 0;
  case Outcome::Error:
    std::cerr << "error: " << error_ << "\n\n" << usage();
    return 2;
  }
  return 2;
}

std::string FlagParser::usage() const {
  std::ostringstream out;
  out << "usage: " << program_ << " [flags]";
  if (!positionalName_.empty())
    out << " " << positionalName_ << "...";
  out << "\n\n" << description_ << "\n\nflags:\n";
  std::vector<std::string> heads;
  size_t width = 0;
  for (const Flag &flag : flags_) {
    std::string head = "  --" + flag.name + (flag.valueName.empty() ? "" : " " + flag.valueName);
    width = std::max(width, head.size());
    heads.push_back(head);
  }
  width = std::max<size_t>(width, 11);
  for (size_t i = 0; i < flags_.size(); ++i) {
    const Flag &flag = flags_[i];
    out << heads[i] << std::string(width - heads[i].size() + 2, ' ') << flag.help;
    if (!flag.defaultText.empty())
      out << " (default " << flag.defaultText << ")";
    out << "\n";
  }
  out << "  --help" << std::string(width - 8 + 2, ' ') << "show this message\n";
  out << "  --version" << std::string(width - 11 + 2, ' ') << "show the version\n";
  return out.str();
}

} // namespace tessel::bench
