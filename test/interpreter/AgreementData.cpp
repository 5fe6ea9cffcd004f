//===- AgreementData.cpp - the interpreter's outputs for the GPU to compare ---===//
//
//   tessel-agreement-data PACKAGE_DIR OUT_DIR
//
// Runs every case of test/gpu/agreement/AgreementCases.h through Kernel::launch with
// TESSEL_INTERPRET on (the CPU interpreter, on host memory) and writes each output to
// OUT_DIR/<case>.out. The GPU test runs the same launches and compares.
//
//===----------------------------------------------------------------------===//
#include "interpreter/Interpreter.h"
#include "runtime/Interpret.h"
#include "test/gpu/agreement/AgreementCases.h"

#include <filesystem>
#include <iostream>
#include <memory>

using namespace tessel;
using namespace tessel::gputest;

int main(int argc, char **argv) {
  if (argc != 3 || std::string(argv[1]) == "--help") {
    std::cerr << "usage: tessel-agreement-data PACKAGE_DIR OUT_DIR\n";
    return argc == 2 ? 0 : 2;
  }
  std::string packages = argv[1], outDir = argv[2];
  setInterpretMode(true);
  interp::installRuntimeHook();
  std::filesystem::create_directories(outDir);
  try {
    for (const AgreementCase &c : agreementCases()) {
      Package package = Package::load(packages + "/" + c.package + ".tslpkg");
      Kernel kernel = Kernel::load(package, c.kernel);
      std::vector<HostArray> arrays;
      arrays.emplace_back(c.storage, c.rows * c.cols);
      arrays[0].poison();
      for (int i = 0; i < agreementInputs(c); ++i)
        arrays.push_back(agreementInput(c, 1 + i));
      std::vector<std::unique_ptr<ScopedHostBuffer>> registered;
      for (size_t i = 0; i < arrays.size(); ++i)
        registered.push_back(std::make_unique<ScopedHostBuffer>(
            arrays[i].bytes.data(), arrays[i].bytes.size(), "arg" + std::to_string(i)));
      launchAgreementCase(kernel, c, [&](int i) { return static_cast<void *>(arrays[i].bytes.data()); });
      const HostArray &out = arrays[0];
      writeFileAtomic(outDir + "/" + c.name + ".out",
                      std::string_view(reinterpret_cast<const char *>(out.bytes.data()),
                                       out.bytes.size()));
      std::cout << c.name << ": " << out.size << " elements\n";
    }
  } catch (const std::exception &e) {
    std::cerr << "tessel-agreement-data: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
