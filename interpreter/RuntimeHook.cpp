//===- interpreter/RuntimeHook.cpp - the runtime's TESSEL_INTERPRET path --===//
//
// The runtime (no MLIR) calls this through a function pointer: the launch's
// variant carries its tessel IR, compiled once per distinct text and cached;
// the memory map is the runtime's table of registered host buffers.
//
//===----------------------------------------------------------------------===//
#include "interpreter/Interpreter.h"

#include "runtime/Interpret.h"

#include <map>
#include <memory>
#include <mutex>

namespace tessel::interp {

namespace {

llvm::Expected<std::shared_ptr<const CompiledKernel>> cachedKernel(const std::string &name,
                                                                  const std::string &ir) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::shared_ptr<const CompiledKernel>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_pair(name, ir);
  if (auto it = cache.find(key); it != cache.end())
    return it->second;
  llvm::Expected<CompiledKernel> compiled = compileIR(ir, name);
  if (!compiled)
    return compiled.takeError();
  auto kernel = std::make_shared<const CompiledKernel>(std::move(*compiled));
  cache.emplace(std::move(key), kernel);
  return kernel;
}

std::string runLaunch(const InterpretLaunch &launch) {
  const KernelInfo &info = *launch.kernel;
  const Variant &variant = *launch.variant;
  std::string where = info.name + " (" + info.configs[size_t(variant.config)].text() + ")";
  if (variant.tesselIR.empty())
    return where + ": the package has no \"tessel_ir\" for this variant, so it cannot be "
                   "interpreted (rebuild the package with a tesselc that writes it)";
  auto kernel = cachedKernel(info.name, variant.tesselIR);
  if (!kernel)
    return where + ": " + llvm::toString(kernel.takeError());
  MemoryMap memory;
  for (const HostBufferInfo &b : hostBuffers())
    memory.add(b.base, b.bytes, b.name);
  LaunchGrid grid{launch.grid[0], launch.grid[1], launch.grid[2]};
  llvm::Error e = (*kernel)->run(grid, llvm::ArrayRef<Arg>(launch.args, launch.count), memory);
  if (!e)
    return "";
  std::string message = llvm::toString(std::move(e));
  if (memory.buffers().empty())
    message += "\n(no host buffer is registered: register the launch's buffers with "
               "tessel::ScopedHostBuffer)";
  return message;
}

} // namespace

void installRuntimeHook() { setInterpretHook(&runLaunch); }

} // namespace tessel::interp
