#!/usr/bin/env bash
# Configures and builds Tessel (compiler, runtime, harness, tests) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
# Lets ccache reuse objects between checkouts in different folders.
export CCACHE_BASEDIR=$PWD
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release > "$build.configure.log" 2>&1 ||
    { tail -n 40 "$build.configure.log"; exit 1; }
fi
ninja -C "$build" -j"${JOBS:-$(nproc)}"
