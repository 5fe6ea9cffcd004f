//===- package/FileUtil.h - Whole-file reads and atomic writes --*- C++ -*-===//
//
// Packages and the autotune cache are written atomically (temporary file in
// the same directory, fsync, rename) so that a reader never sees a partly
// written file and concurrent writers never interleave: the last rename wins
// and every version on disk is complete.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_FILEUTIL_H
#define TESSEL_PACKAGE_FILEUTIL_H

#include <string>
#include <string_view>

namespace tessel {

/// Reads a whole file; throws tessel::Error naming the path and errno text.
std::string readFile(const std::string &path);

/// Replaces `path` with `content` atomically: writes a uniquely named
/// temporary file next to it, fsyncs it, renames it over `path` and fsyncs
/// the directory. On failure the temporary file is removed and
/// tessel::Error is thrown; `path` is left as it was.
void writeFileAtomic(const std::string &path, std::string_view content);

} // namespace tessel

#endif // TESSEL_PACKAGE_FILEUTIL_H
