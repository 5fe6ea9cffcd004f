#!/usr/bin/env bash
# Installs a build into a scratch prefix and builds examples/scale_shift against it, as
# another C++ project would consume Tessel (find_package(Tessel), tessel_add_kernels,
# Tessel::Runtime), then runs it (it launches only where there is a GPU).
#   bash tools/check-install.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: check-install.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
prefix=$build/install-check
example=$build/example-check
rm -rf "$prefix" "$example"
cmake --install "$build" --prefix "$prefix" > "$build/install-check.log"
if ! { cmake -S "$src/examples/scale_shift" -B "$example" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" &&
       cmake --build "$example"; } > "$build/example-check.log" 2>&1; then
  cat "$build/example-check.log"
  exit 1
fi
"$example/scale_shift"
