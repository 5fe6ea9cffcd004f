//===- tools/tessel-run/tessel-run.cpp - Local launcher for N ranks -------===//
//
//   tessel-run -n 2 -- tessel-bench ddp --model xl
//
// Starts N ranks of a program on this machine with MASTER_ADDR, MASTER_PORT,
// RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE set (what torchrun sets),
// prefixes their output with "[rank k]", and when one rank fails ends the
// others and exits with that rank's code.
//
//===----------------------------------------------------------------------===//

#include "tools/tessel-run/Launcher.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#ifndef TESSEL_VERSION
#define TESSEL_VERSION "0.0.0"
#endif

static const char *kUsage =
    "usage: tessel-run -n N [options] -- program [args...]\n"
    "\n"
    "Starts N ranks of `program` on this machine for c10d (NCCL/Gloo) programs.\n"
    "Each rank gets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK and\n"
    "LOCAL_WORLD_SIZE; its stdout/stderr lines are prefixed with \"[rank k]\".\n"
    "If a rank exits non-zero or is killed, the others get SIGTERM (SIGKILL after\n"
    "the grace period) and tessel-run exits with that rank's exit code.\n"
    "\n"
    "options:\n"
    "  -n, --nproc N        number of ranks (required)\n"
    "  --master-addr ADDR   rendezvous address (default 127.0.0.1)\n"
    "  --master-port PORT   rendezvous port (default: a free port)\n"
    "  --grace SECONDS      SIGTERM-to-SIGKILL grace period (default 5)\n"
    "  --timeout SECONDS    end the job after this long, exit 124 (default: none)\n"
    "  --help               this message\n"
    "  --version            the version\n"
    "\n"
    "SIGINT, SIGTERM or SIGHUP to tessel-run ends all ranks the same way (exit 128 + signal).\n";

static int usageError(const std::string &message) {
  std::fprintf(stderr, "tessel-run: error: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

static bool parseNumber(const std::string &text, double &out) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return !text.empty() && end && *end == '\0';
}

int main(int argc, char **argv) {
  tessel::run::LaunchOptions options;
  options.numProcesses = 0;
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--version") {
      std::printf("tessel-run %s\n", TESSEL_VERSION);
      return 0;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    bool known = name == "-n" || name == "--nproc" || name == "--master-addr" ||
                 name == "--master-port" || name == "--grace" || name == "--timeout";
    if (!known) {
      if (arg.rfind("-", 0) == 0)
        return usageError("unknown option '" + arg + "'");
      break; // the program starts here (the "--" is optional)
    }
    if (!hasValue) {
      if (i + 1 >= argc)
        return usageError("option '" + name + "' needs a value");
      value = argv[++i];
    }
    double number = 0;
    if (name == "--master-addr") {
      options.masterAddr = value;
      continue;
    }
    if (!parseNumber(value, number) || number < 0)
      return usageError("option '" + name + "' needs a non-negative number, got '" + value + "'");
    if (name == "-n" || name == "--nproc") {
      if (number < 1 || number != static_cast<int>(number))
        return usageError("-n needs a positive whole number, got '" + value + "'");
      options.numProcesses = static_cast<int>(number);
    } else if (name == "--master-port") {
      if (number > 65535 || number != static_cast<int>(number))
        return usageError("--master-port needs a port number, got '" + value + "'");
      options.masterPort = static_cast<int>(number);
    } else if (name == "--grace") {
      options.graceSeconds = number;
    } else {
      options.timeoutSeconds = number;
    }
  }
  if (options.numProcesses == 0)
    return usageError("-n N is required");
  for (; i < argc; ++i)
    options.argv.emplace_back(argv[i]);
  if (options.argv.empty())
    return usageError("no program given after '--'");
  // Ctrl-C or a job scheduler's SIGTERM: end the ranks in order, not by orphaning them.
  struct sigaction action {};
  action.sa_handler = [](int sig) { tessel::run::requestStop(sig); };
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaction(sig, &action, nullptr);
  try {
    tessel::run::LaunchResult result = tessel::run::launch(options);
    return result.exitCode;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tessel-run: error: %s\n", e.what());
    return 1;
  }
}
