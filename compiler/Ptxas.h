//===- compiler/Ptxas.h - PTX to machine code with the toolkit's ptxas -*- C++ -*-===//
//
// tesselc --cubin stores, beside each variant's PTX, the cubin that the CUDA
// toolkit's ptxas makes of it, so a device of that arch loads machine code
// instead of JIT-compiling the PTX on first launch (runtime/Kernel.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_PTXAS_H
#define TESSEL_COMPILER_PTXAS_H

#include <string>

namespace tessel::compiler {

/// The ptxas to run: `requested` if given, else $CUDA_HOME/bin/ptxas,
/// /usr/local/cuda/bin/ptxas, or ptxas on PATH. Empty, with `error` set, when
/// there is none.
std::string findPtxas(const std::string &requested, std::string &error);

/// Assembles `ptx` for `arch` (sm_80, sm_90a, ...) at -O3. On failure returns
/// false with ptxas's message (or why it could not run) in `error`. ptxas reads
/// and writes files: a private temporary directory, removed before returning.
bool assembleCubin(const std::string &ptxas, const std::string &ptx, const std::string &arch,
                   std::string &cubin, std::string &error);

} // namespace tessel::compiler

#endif // TESSEL_COMPILER_PTXAS_H
