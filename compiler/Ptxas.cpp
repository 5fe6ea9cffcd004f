//===- compiler/Ptxas.cpp - PTX to machine code with the toolkit's ptxas --===//
#include "compiler/Ptxas.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

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

/// Reads a whole file; empty when it cannot be read.
static std::string readFile(const llvm::Twine &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

bool assembleCubin(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                   std::string &cubin, std::string &error) {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("tesselc-ptxas", dir)) {
    error = "cannot create a temporary directory for ptxas: " + ec.message();
    return false;
  }
  llvm::SmallString<128> input(dir), output(dir), log(dir);
  llvm::sys::path::append(input, "kernel.ptx");
  llvm::sys::path::append(output, "kernel.cubin");
  llvm::sys::path::append(log, "ptxas.log");
  bool ok = false;
  {
    std::error_code ec;
    llvm::raw_fd_ostream file(input, ec);
    if (!ec) {
      file << ptx;
      file.close();
      ec = file.error();
    }
    if (ec) {
      error = "cannot write ptxas's input: " + ec.message();
    } else {
      std::string message, archFlag = "-arch=" + arch;
      llvm::StringRef args[] = {ptxas, archFlag, "-O3", input, "-o", output};
      std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
      int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                         /*SecondsToWait=*/0, /*MemoryLimit=*/0, &message);
      if (rc != 0) {
        std::string logText = readFile(log);
        error = rc < 0 ? "could not run " + ptxas + ": " + message
                       : ptxas + " failed (exit " + std::to_string(rc) + ")" +
                             (logText.empty() ? "" : ":\n" + logText);
      } else {
        cubin = readFile(output);
        ok = !cubin.empty();
        if (!ok)
          error = ptxas + " wrote no machine code";
      }
    }
  }
  llvm::sys::fs::remove_directories(dir);
  return ok;
}

} // namespace tessel::compiler
