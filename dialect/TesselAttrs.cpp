//===- TesselAttrs.cpp - layout encodings: syntax and verification --------===//
#include "dialect/TesselDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tessel;

#define GET_ATTRDEF_CLASSES
#include "dialect/TesselAttrs.cpp.inc"

void TesselDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialect/TesselAttrs.cpp.inc"
      >();
}

namespace {
/// Reads `name = [a, b, ...]` from a parsed dictionary into `out`.
LogicalResult readUnsignedArray(AsmParser &parser, DictionaryAttr dict, StringRef name,
                                SmallVectorImpl<unsigned> &out) {
  auto array = dyn_cast_or_null<ArrayAttr>(dict.get(name));
  if (!array)
    return parser.emitError(parser.getNameLoc(), "expected '") << name << " = [...]'";
  for (Attribute element : array) {
    auto integer = dyn_cast<IntegerAttr>(element);
    if (!integer || integer.getInt() < 0)
      return parser.emitError(parser.getNameLoc(), "expected non-negative integers in '")
             << name << "'";
    out.push_back(static_cast<unsigned>(integer.getInt()));
  }
  return success();
}

void printArray(AsmPrinter &printer, StringRef name, ArrayRef<unsigned> values) {
  printer << name << " = [";
  llvm::interleaveComma(values, printer);
  printer << "]";
}

bool isPowerOfTwo(unsigned v) { return v && !(v & (v - 1)); }
} // namespace

Attribute BlockedEncodingAttr::parse(AsmParser &parser, Type) {
  DictionaryAttr dict;
  if (parser.parseLess() || parser.parseAttribute(dict) || parser.parseGreater())
    return {};
  SmallVector<unsigned> spt, tpw, wpc, order;
  if (failed(readUnsignedArray(parser, dict, "sizePerThread", spt)) ||
      failed(readUnsignedArray(parser, dict, "threadsPerWarp", tpw)) ||
      failed(readUnsignedArray(parser, dict, "warpsPerCTA", wpc)) ||
      failed(readUnsignedArray(parser, dict, "order", order)))
    return {};
  return parser.getChecked<BlockedEncodingAttr>(parser.getContext(), spt, tpw, wpc, order);
}

void BlockedEncodingAttr::print(AsmPrinter &printer) const {
  printer << "<{";
  printArray(printer, "sizePerThread", getSizePerThread());
  printer << ", ";
  printArray(printer, "threadsPerWarp", getThreadsPerWarp());
  printer << ", ";
  printArray(printer, "warpsPerCTA", getWarpsPerCTA());
  printer << ", ";
  printArray(printer, "order", getOrder());
  printer << "}>";
}

LogicalResult BlockedEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                          ArrayRef<unsigned> sizePerThread,
                                          ArrayRef<unsigned> threadsPerWarp,
                                          ArrayRef<unsigned> warpsPerCTA,
                                          ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (rank == 0 || threadsPerWarp.size() != rank || warpsPerCTA.size() != rank ||
      order.size() != rank)
    return emitError() << "blocked layout: sizePerThread, threadsPerWarp, warpsPerCTA and "
                          "order must have the same non-zero rank";
  unsigned lanes = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (!isPowerOfTwo(sizePerThread[d]) || !isPowerOfTwo(threadsPerWarp[d]) ||
        !isPowerOfTwo(warpsPerCTA[d]))
      return emitError() << "blocked layout: every entry must be a power of two";
    lanes *= threadsPerWarp[d];
  }
  if (lanes != 32)
    return emitError() << "blocked layout: threadsPerWarp must multiply to 32, got " << lanes;
  SmallVector<bool> seen(rank, false);
  for (unsigned d : order) {
    if (d >= rank || seen[d])
      return emitError() << "blocked layout: order must be a permutation of 0.." << rank - 1;
    seen[d] = true;
  }
  return success();
}

unsigned BlockedEncodingAttr::getNumWarps() const {
  unsigned warps = 1;
  for (unsigned w : getWarpsPerCTA())
    warps *= w;
  return warps;
}

Attribute SliceEncodingAttr::parse(AsmParser &parser, Type) {
  DictionaryAttr dict;
  if (parser.parseLess() || parser.parseAttribute(dict) || parser.parseGreater())
    return {};
  auto dim = dyn_cast_or_null<IntegerAttr>(dict.get("dim"));
  Attribute parent = dict.get("parent");
  if (!dim || !parent) {
    parser.emitError(parser.getNameLoc(), "expected '{dim = N, parent = #layout}'");
    return {};
  }
  return parser.getChecked<SliceEncodingAttr>(parser.getContext(),
                                              static_cast<unsigned>(dim.getInt()), parent);
}

void SliceEncodingAttr::print(AsmPrinter &printer) const {
  printer << "<{dim = " << getDim() << ", parent = ";
  printer.printAttribute(getParent());
  printer << "}>";
}

LogicalResult SliceEncodingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                        unsigned dim, Attribute parent) {
  unsigned parentRank = 0;
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(parent))
    parentRank = blocked.getOrder().size();
  else if (auto slice = dyn_cast<SliceEncodingAttr>(parent))
    parentRank = slice.getRank();
  else
    return emitError() << "slice layout: parent must be a tessel layout";
  if (dim >= parentRank)
    return emitError() << "slice layout: dim " << dim << " out of range for a rank-"
                       << parentRank << " parent";
  return success();
}

unsigned SliceEncodingAttr::getRank() const {
  if (auto blocked = dyn_cast<BlockedEncodingAttr>(getParent()))
    return blocked.getOrder().size() - 1;
  return cast<SliceEncodingAttr>(getParent()).getRank() - 1;
}
