#!/usr/bin/env bash
# Builds libcove (CMake, release) and c_bench.c, then measures small lists, sets and maps through
# Cove's C API beside the same data in SQLite (a parent and a child table) in one run: one
# Markdown table on stdout. Needs root or sudo only to install libsqlite3-dev when it is missing.
#   BENCH_SMALL_OBJECTS (5000), BENCH_PRODUCTS (25000), BENCH_THINGS (20000) and BENCH_BIG_LIST
#   (10000) change the sizes; an argument `cove` or `sqlite` runs one engine alone.
set -euo pipefail
if ! dpkg -s libsqlite3-dev >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libsqlite3-dev >&2
fi
source "$(dirname "$0")/../../.ci/env.sh"
cd "$COVE_ROOT"
cmake -S . -B build/cmake -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/cmake >&2
cc -O2 -o build/collections-bench benchmarks/collections/c_bench.c -Iinclude -Lbuild/cmake -lcove -lsqlite3
LD_LIBRARY_PATH=build/cmake build/collections-bench "$@"
