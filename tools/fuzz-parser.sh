#!/usr/bin/env bash
# Builds the libFuzzer target for the Tessel parser and runs it.
#   tools/fuzz-parser.sh [SECONDS] [extra libFuzzer flags...]
# SECONDS defaults to 300. The seed corpus is kernels/*.tsl and the lit inputs;
# the growing corpus is kept in build-fuzz/corpus, crashes in build-fuzz/crashes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-300}"
shift || true
build="${TESSEL_FUZZ_BUILD:-$root/build-fuzz}"
cxx="${CXX:-clang++-22}"
cc="${CC:-clang-22}"

CC="$cc" CXX="$cxx" cmake -G Ninja -S "$root/frontend/fuzz" -B "$build" >/dev/null
ninja -C "$build" tessel-parser-fuzzer

mkdir -p "$build/corpus" "$build/seeds" "$build/crashes"
find "$root/kernels" "$root/test/lit/frontend" "$root/test/lit/tesselc" "$root/test/lit/Inputs" \
  -name '*.tsl' -exec cp {} "$build/seeds/" \; 2>/dev/null || true

cd "$build"
status=0
"$build/tessel-parser-fuzzer" "$build/corpus" "$build/seeds" \
  -max_total_time="$seconds" -jobs=1 -workers=1 -timeout=10 -rss_limit_mb=2048 \
  -max_len=8192 -print_final_stats=1 -artifact_prefix="$build/crashes/" "$@" || status=$?
# With -jobs, libFuzzer logs to fuzz-N.log.
[ -f fuzz-0.log ] && tail -n 15 fuzz-0.log
echo "crashes: $(ls "$build/crashes" | wc -l) (in $build/crashes)"
exit $status
