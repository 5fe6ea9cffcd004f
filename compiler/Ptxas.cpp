//===- compiler/Ptxas.cpp - PTX to machine code with the toolkit's ptxas --===//
#include "compiler/Ptxas.h"

#include "package/Error.h"
#include "package/FileUtil.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <optional>

namespace tessel::compiler {

std::string findPtxas(const std::string &requested, std::string &error) {
  if (!requested.empty()) {
    if (llvm::sys::fs::can_execute(requested))
      return requested;
    error = "ptxas '" + requested + "' is not an executable file";
    return "";
  }
  std::vector<std::string> candidates;
  if (const char *home = std::getenv("CUDA_HOME"))
    candidates.push_back(std::string(home) + "/bin/ptxas");
  candidates.push_back("/usr/local/cuda/bin/ptxas");
  for (const std::string &path : candidates)
    if (llvm::sys::fs::can_execute(path))
      return path;
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("ptxas"))
    return *onPath;
  error = "no ptxas found ($CUDA_HOME/bin, /usr/local/cuda/bin or PATH); install the CUDA "
          "toolkit or pass --ptxas PATH";
  return "";
}

bool assembleCubin(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                   std::string &cubin, std::string &error) {
  error.clear();
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tesselc-ptxas", dir)) {
    error = "cannot create a temporary directory for ptxas: " + ec.message();
    return false;
  }
  std::string input = (dir + "/kernel.ptx").str(), output = (dir + "/kernel.cubin").str(),
              log = (dir + "/ptxas.log").str();
  try {
    writeFileAtomic(input, ptx);
    std::string message, archFlag = "-arch=" + arch;
    llvm::StringRef args[] = {ptxas, archFlag, "-O3", input, "-o", output};
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                  llvm::StringRef(log)};
    int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                       /*SecondsToWait=*/0, /*MemoryLimit=*/0, &message);
    if (rc < 0) {
      error = "could not run " + ptxas + ": " + message;
    } else if (rc > 0) {
      std::string logText = readFile(log);
      error = ptxas + " failed (exit " + std::to_string(rc) + ")" +
              (logText.empty() ? "" : ":\n" + logText);
    } else {
      cubin = readFile(output);
      if (cubin.empty())
        error = ptxas + " wrote no machine code";
    }
  } catch (const Error &e) {
    error = e.what();
  }
  llvm::sys::fs::remove_directories(dir);
  return error.empty();
}

} // namespace tessel::compiler
