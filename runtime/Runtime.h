//===- runtime/Runtime.h - The Tessel runtime in one include ----*- C++ -*-===//
//
//   #include "runtime/Runtime.h"
//   tessel::Package package = tessel::Package::load("softmax.tslpkg");
//   tessel::Kernel softmax = tessel::Kernel::load(package, "softmax");
//   softmax.launch(nRows, {out, inp, stride, nCols}, stream);
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_RUNTIME_H
#define TESSEL_RUNTIME_RUNTIME_H

#include "runtime/Args.h"
#include "runtime/Autotuner.h"
#include "package/ConfigExpr.h"
#include "package/DType.h"
#include "runtime/Driver.h"
#include "package/Error.h"
#include "package/FileUtil.h"
#include "package/Json.h"
#include "runtime/Kernel.h"
#include "package/Package.h"
#include "runtime/TuningCache.h"

#endif // TESSEL_RUNTIME_RUNTIME_H
