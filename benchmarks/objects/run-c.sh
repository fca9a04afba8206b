#!/usr/bin/env bash
# Builds libcove (CMake, release) and c_bench.c, then times single calls of Cove's C API beside
# SQLite's C API in one run: one Markdown table on stdout. Needs libsqlite3-dev (run.sh installs
# it). BENCH_C_OBJECTS (200000) and BENCH_C_LOOKUPS (200000) change the sizes; an argument 0-3
# runs one row alone, `commits` the durable commits instead, and a second one, `cove` or
# `sqlite`, one engine alone (for a profiler). BENCH_C_COMMITS (2000) sets the commits of each kind.
set -euo pipefail
source "$(dirname "$0")/../../.ci/env.sh"
cd "$COVE_ROOT"
cmake -S . -B build/cmake -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/cmake >&2
cc -O2 -o build/c-bench benchmarks/objects/c_bench.c -Iinclude -Lbuild/cmake -lcove -lsqlite3
LD_LIBRARY_PATH=build/cmake build/c-bench "$@"
