//===- tools/tesselc/Compile.h - the compilation driver --------------------===//
#ifndef TESSEL_TOOLS_TESSELC_COMPILE_H
#define TESSEL_TOOLS_TESSELC_COMPILE_H

#include "tools/tesselc/Options.h"

namespace tessel::tesselc {

/// Runs tesselc; returns the process exit code (0 on success).
int run(const Options &opts);

} // namespace tessel::tesselc

#endif // TESSEL_TOOLS_TESSELC_COMPILE_H
