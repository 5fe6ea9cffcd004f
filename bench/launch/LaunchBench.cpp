//===- bench/launch/LaunchBench.cpp - tessel-launch-bench -----------------===//
//
// Host cost of a launch, side by side in one process on the same PTX (an
// empty kernel from test/gpu/autotune/scale_add.ptx):
//   bare         cuLaunchKernel with a prebuilt parameter array
//   kernel       tessel::Kernel::launch (pack + check + variant + launch)
//   tuned        tessel::TunedKernel::launch after tuning (+ key lookup)
//   tuned-gridfn the same with the grid computed from the chosen config
// Each mode enqueues --launches launches in batches of --batch, timing only
// the enqueue loop with a host clock (a sync between batches keeps the launch
// queue from filling); "with_sync" times all launches plus one final sync.
// Modes are interleaved over --trials trials; the median is reported.
//
// With --package/--kernel it also measures first-call tuning of a package
// kernel (fresh cache) and the start of a second process with a warm cache
// (this program re-executed with --phase warm).
//
//===----------------------------------------------------------------------===//
#include "package/PackageBuilder.h"
#include "runtime/Runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#ifndef TESSEL_LAUNCH_PTX
#error "TESSEL_LAUNCH_PTX must name scale_add.ptx"
#endif
#ifndef TESSEL_VERSION
#define TESSEL_VERSION "0.0.0"
#endif

using namespace tessel;
using Clock = std::chrono::steady_clock;

namespace {
const char *kHelp = R"(usage: tessel-launch-bench [options]

Host overhead per launch of a tuned tessel kernel against a bare cuLaunchKernel
of the same PTX, in the same process; optionally the first-call tuning time of
a package kernel and a second process's start with a warm cache.

options:
  --launches N       launches per mode and trial (default 100000)
  --batch N          launches between syncs (default 1000; the enqueue loop is timed)
  --trials N         interleaved trials per mode, median reported (default 5)
  --ptx PATH         PTX with an entry `noop(float*, float*, int, float)`
                     (default: test/gpu/autotune/scale_add.ptx)
  --package PKG      also measure tuning of kernel --kernel of PKG
  --kernel NAME      kernel to tune (default: the package's first)
  --arg NAME=VALUE   a scalar argument (repeatable); other integer scalars get
                     --default-int, float scalars 1.0
  --default-int N    default for integer scalars and the grid (default 4096)
  --elems N          elements allocated per pointer argument (default 16777216)
  --grid X[,Y[,Z]]   launch grid for --package (default: --default-int)
  --prune COND       extra prune condition for --package, e.g. "BLOCK < n_cols"
  --cache-dir DIR    tuning cache for --package (default: a fresh temp dir)
  --json             print one JSON document instead of text
  --help, --version
)";

struct Options {
  long launches = 100000;
  long batch = 1000;
  int trials = 5;
  std::string ptx = TESSEL_LAUNCH_PTX;
  std::string package, kernel, cacheDir, phase, prune;
  std::map<std::string, std::string> args;
  long defaultInt = 4096;
  long elems = 1 << 24;
  std::vector<long> grid;
  bool json = false;
};

[[noreturn]] void usageError(const std::string &message) {
  std::cerr << "tessel-launch-bench: error: " << message
            << " (see --help)\n";
  std::exit(2);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usageError(a + " needs a value");
      return argv[++i];
    };
    auto number = [&]() {
      std::string text = value();
      char *end = nullptr;
      long n = std::strtol(text.c_str(), &end, 10);
      if (!end || *end || n <= 0)
        usageError(a + " needs a positive integer, got '" + text + "'");
      return n;
    };
    if (a == "--help" || a == "-h") {
      std::cout << kHelp;
      std::exit(0);
    } else if (a == "--version") {
      std::cout << "tessel-launch-bench " << TESSEL_VERSION << "\n";
      std::exit(0);
    } else if (a == "--launches") {
      o.launches = number();
    } else if (a == "--batch") {
      o.batch = number();
    } else if (a == "--trials") {
      o.trials = int(number());
    } else if (a == "--ptx") {
      o.ptx = value();
    } else if (a == "--package") {
      o.package = value();
    } else if (a == "--kernel") {
      o.kernel = value();
    } else if (a == "--arg") {
      std::string text = value();
      size_t eq = text.find('=');
      if (eq == std::string::npos || eq == 0)
        usageError("--arg needs NAME=VALUE, got '" + text + "'");
      o.args[text.substr(0, eq)] = text.substr(eq + 1);
    } else if (a == "--default-int") {
      o.defaultInt = number();
    } else if (a == "--elems") {
      o.elems = number();
    } else if (a == "--grid") {
      std::stringstream in(value());
      std::string part;
      while (std::getline(in, part, ','))
        o.grid.push_back(std::atol(part.c_str()));
      if (o.grid.empty() || o.grid.size() > 3)
        usageError("--grid needs X[,Y[,Z]]");
    } else if (a == "--prune") {
      o.prune = value();
    } else if (a == "--cache-dir") {
      o.cacheDir = value();
    } else if (a == "--phase") {
      o.phase = value();
    } else if (a == "--json") {
      o.json = true;
    } else {
      usageError("unknown option '" + a + "'");
    }
  }
  return o;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

/// Microseconds per launch: {enqueue only (batched), all launches + sync}.
struct Timing {
  std::vector<double> enqueueUs, withSyncUs;
};

void measure(Driver &driver, const Options &o, Timing &timing,
             const std::function<void()> &launch) {
  double enqueue = 0;
  for (long done = 0; done < o.launches;) {
    long batch = std::min(o.batch, o.launches - done);
    Clock::time_point start = Clock::now();
    for (long i = 0; i < batch; ++i)
      launch();
    enqueue += std::chrono::duration<double, std::micro>(Clock::now() - start)
                   .count();
    driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
    done += batch;
  }
  timing.enqueueUs.push_back(enqueue / double(o.launches));
  Clock::time_point start = Clock::now();
  for (long i = 0; i < o.launches; ++i)
    launch();
  driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
  timing.withSyncUs.push_back(
      std::chrono::duration<double, std::micro>(Clock::now() - start).count() /
      double(o.launches));
}

Package noopPackage(const std::string &ptx) {
  PackageBuilder builder("noop.tslpkg");
  builder.kernel("noop",
                 {{"out", ParamKind::Pointer, DType::F32},
                  {"x", ParamKind::Pointer, DType::F32},
                  {"n", ParamKind::Scalar, DType::I32},
                  {"alpha", ParamKind::Scalar, DType::F32}},
                 {"BLOCK"}, {"n"});
  for (int c = 0; c < 2; ++c) {
    builder.config({{"BLOCK", Json(128 << c)}}, 4 << c);
    builder.variant("noop", ptx);
  }
  return builder.build();
}

Json launchOverhead(const Options &o) {
  Driver &driver = Driver::get();
  driver.ensureCurrent(0);
  std::string ptx = readFile(o.ptx);
  CUdeviceptr out = 0, x = 0;
  driver.check(driver.memAlloc(&out, 1024), "cuMemAlloc");
  driver.check(driver.memAlloc(&x, 1024), "cuMemAlloc");
  void *outPtr = reinterpret_cast<void *>(out), *xPtr = reinterpret_cast<void *>(x);
  int n = 256;
  float alpha = 1.0f;

  CUmodule module = nullptr;
  CUfunction function = nullptr;
  driver.check(driver.moduleLoadDataEx(&module, ptx.c_str(), 0, nullptr, nullptr),
               "cuModuleLoadDataEx");
  driver.check(driver.moduleGetFunction(&function, module, "noop"),
               "cuModuleGetFunction(noop)");
  void *params[] = {&out, &x, &n, &alpha};

  Package package = noopPackage(ptx);
  Kernel kernel = Kernel::load(package, "noop", 0);
  TuneOptions options;
  options.cacheDir = ""; // no disk cache: this measures the launch path only
  TunedKernel tuned = TunedKernel::load(package, "noop", options);
  tuned.launch(1, {outPtr, xPtr, n, alpha}); // tunes
  int chosen = tuned.results().back().config;
  kernel.launch(1, {outPtr, xPtr, n, alpha}, nullptr, chosen); // loads the module
  driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
  unsigned threads = unsigned(tuned.config(chosen).numWarps * 32);

  std::map<std::string, Timing> timings;
  const char *modes[] = {"bare", "kernel", "tuned", "tuned-gridfn"};
  for (int trial = 0; trial < o.trials; ++trial) {
    measure(driver, o, timings["bare"], [&] {
      driver.launchKernel(function, 1, 1, 1, threads, 1, 1, 0, nullptr, params,
                          nullptr);
    });
    measure(driver, o, timings["kernel"], [&] {
      kernel.launch(1, {outPtr, xPtr, n, alpha}, nullptr, chosen);
    });
    measure(driver, o, timings["tuned"],
            [&] { tuned.launch(1, {outPtr, xPtr, n, alpha}); });
    measure(driver, o, timings["tuned-gridfn"], [&] {
      tuned.launch([&](const Config &c) { return cdiv(n, c["BLOCK"]); },
                   {outPtr, xPtr, n, alpha});
    });
  }
  driver.moduleUnload(module);
  driver.memFree(out);
  driver.memFree(x);

  Json result = Json::object();
  result.set("kernel", "noop (1 block, " + std::to_string(threads) + " threads)");
  result.set("launches", int64_t(o.launches));
  result.set("batch", int64_t(o.batch));
  result.set("trials", o.trials);
  double bare = median(timings["bare"].enqueueUs);
  Json modesJson = Json::object();
  for (const char *mode : modes) {
    Json m = Json::object();
    double enqueue = median(timings[mode].enqueueUs);
    m.set("enqueue_us_per_launch", enqueue);
    m.set("with_sync_us_per_launch", median(timings[mode].withSyncUs));
    m.set("overhead_vs_bare_us", enqueue - bare);
    modesJson.set(mode, std::move(m));
  }
  result.set("modes", std::move(modesJson));
  return result;
}

/// One process's start: load, tune or hit the cache, launch, sync.
Json tuningRun(const Options &o) {
  Driver &driver = Driver::get();
  driver.ensureCurrent(0);
  Package package = Package::load(o.package);
  std::string name = o.kernel.empty() ? package.kernels.at(0).name : o.kernel;
  const KernelInfo &info = package.kernel(name);
  std::vector<CUdeviceptr> buffers;
  std::vector<Arg> args;
  for (const ParamInfo &param : info.params) {
    auto given = o.args.find(param.name);
    if (param.isPointer()) {
      CUdeviceptr buffer = 0;
      size_t bytes = size_t(o.elems) * std::max<size_t>(dtypeSize(param.dtype), 1);
      driver.check(driver.memAlloc(&buffer, bytes), "cuMemAlloc");
      driver.check(driver.memsetD8(buffer, 0, bytes), "cuMemsetD8");
      buffers.push_back(buffer);
      args.push_back(Arg::pointer(buffer));
    } else if (isFloatDType(param.dtype)) {
      args.push_back(given == o.args.end() ? 1.0 : std::atof(given->second.c_str()));
    } else if (param.dtype == DType::I1) {
      args.push_back(given != o.args.end() && given->second != "0");
    } else {
      args.push_back(int64_t(given == o.args.end()
                                 ? o.defaultInt
                                 : std::atoll(given->second.c_str())));
    }
  }
  Grid grid = o.grid.empty() ? Grid(o.defaultInt)
                             : Grid(o.grid[0], o.grid.size() > 1 ? o.grid[1] : 1,
                                    o.grid.size() > 2 ? o.grid[2] : 1);
  driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");

  Clock::time_point start = Clock::now();
  TuneOptions options;
  options.cacheDir = o.cacheDir;
  options.prune = o.prune;
  TunedKernel tuned = TunedKernel::load(Package::load(o.package), name, options);
  tuned.launch(grid, args);
  driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
  double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();

  TuningResult r = tuned.results().back();
  TuneStats stats = tuned.stats();
  Json result = Json::object();
  result.set("kernel", name);
  result.set("key", r.key);
  result.set("source", r.source);
  result.set("config", r.config);
  result.set("config_text", tuned.config(r.config).text());
  result.set("load_to_result_ms", ms);
  result.set("tuning_ms", r.tuningSeconds * 1e3);
  result.set("timed_launches", stats.timedLaunches);
  result.set("cache_hits", stats.cacheHits);
  Json configs = Json::array();
  for (const ConfigTiming &t : r.timings) {
    Json c = Json::object();
    c.set("config", t.config);
    c.set("text", tuned.config(t.config).text());
    if (t.skipped.empty())
      c.set("ms", t.ms);
    else
      c.set("skipped", t.skipped);
    configs.push(std::move(c));
  }
  result.set("configs", std::move(configs));
  for (CUdeviceptr buffer : buffers)
    driver.memFree(buffer);
  return result;
}

/// Re-runs this program with --phase warm; returns its JSON line.
Json warmChild(int argc, char **argv, const std::string &cacheDir) {
  int fds[2];
  if (::pipe(fds) != 0)
    throw Error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], 1);
    ::close(fds[0]);
    std::vector<std::string> storage(argv, argv + argc);
    storage.push_back("--phase");
    storage.push_back("warm");
    storage.push_back("--cache-dir");
    storage.push_back(cacheDir);
    std::vector<char *> childArgv;
    for (std::string &s : storage)
      childArgv.push_back(s.data());
    childArgv.push_back(nullptr);
    ::execv("/proc/self/exe", childArgv.data());
    ::_exit(127);
  }
  ::close(fds[1]);
  std::string text;
  char buf[4096];
  ssize_t got;
  while ((got = ::read(fds[0], buf, sizeof(buf))) > 0)
    text.append(buf, size_t(got));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw Error("the warm-cache child process failed: " + text);
  return Json::parse(text, "warm child");
}

void printText(Json report) {
  const DeviceInfo &device = Driver::get().deviceInfo(0);
  std::printf("device: %s (driver %d)\n", device.name.c_str(), device.driverVersion);
  if (Json *launch = report.find("launch")) {
    std::printf("launch overhead, %s, %lld launches x %lld trials (median):\n",
                (*launch)["kernel"].asString().c_str(),
                (long long)(*launch)["launches"].asInt(),
                (long long)(*launch)["trials"].asInt());
    std::printf("  %-14s %14s %16s %14s\n", "mode", "enqueue us", "with sync us",
                "vs bare us");
    for (Json::Member &m : (*launch)["modes"].asObject())
      std::printf("  %-14s %14.3f %16.3f %+14.3f\n", m.first.c_str(),
                  m.second["enqueue_us_per_launch"].asDouble(),
                  m.second["with_sync_us_per_launch"].asDouble(),
                  m.second["overhead_vs_bare_us"].asDouble());
  }
  for (const char *phase : {"tuning_cold", "tuning_warm"}) {
    Json *run = report.find(phase);
    if (!run)
      continue;
    std::printf("%s: %s [%s]: %s config %lld (%s), load-to-result %.1f ms, "
                "tuning %.1f ms, %lld timed launches\n",
                phase, (*run)["kernel"].asString().c_str(),
                (*run)["key"].asString().c_str(),
                (*run)["source"].asString().c_str(),
                (long long)(*run)["config"].asInt(),
                (*run)["config_text"].asString().c_str(),
                (*run)["load_to_result_ms"].asDouble(),
                (*run)["tuning_ms"].asDouble(),
                (long long)(*run)["timed_launches"].asInt());
  }
}
} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  try {
    if (o.phase == "warm") {
      if (o.package.empty())
        usageError("--phase warm needs --package");
      std::cout << tuningRun(o).dump() << std::endl;
      return 0;
    }
    Json report = Json::object();
    Driver &driver = Driver::get();
    const DeviceInfo &device = driver.deviceInfo(0);
    report.set("device", device.name);
    report.set("driver", device.driverVersion);
    report.set("launch", launchOverhead(o));
    if (!o.package.empty()) {
      Options cold = o;
      if (cold.cacheDir.empty()) {
        char pattern[] = "/tmp/tessel-launch-bench-XXXXXX";
        if (!::mkdtemp(pattern))
          throw Error("mkdtemp failed");
        cold.cacheDir = pattern;
      }
      report.set("tuning_cold", tuningRun(cold));
      report.set("tuning_warm", warmChild(argc, argv, cold.cacheDir));
    }
    if (o.json)
      std::cout << report.pretty() << std::endl;
    else
      printText(report);
  } catch (const std::exception &error) {
    std::cerr << "tessel-launch-bench: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
