#!/usr/bin/env bash
# Builds libcove (CMake, release) and enc_bench.c, then measures what encrypted files cost: Cove
# plain and encrypted, SQLite and SQLCipher in one process, one Markdown table on stdout
# (progress on stderr). Needs root or sudo only to install libsqlite3-dev and libsqlcipher-dev
# when they are missing; without SQLCipher its column stays empty.
#   BENCH_ROWS (100000), BENCH_LOOKUPS (200000), BENCH_COMMITS (2000), BENCH_ROUNDS (4) change the
#   sizes; BENCH_CIPHER_PAGE_SIZE (4096; 0 keeps SQLCipher's default); BENCH_BUILD=0 takes the
#   library already in build/cmake instead of building it.
set -euo pipefail
need=()
for pkg in libsqlite3-dev libsqlcipher-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing ${need[*]}" >&2
    $sudo apt-get update -qq || true
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libsqlite3-dev >&2
    # SQLCipher is optional: the benchmark runs without it.
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libsqlcipher-dev >&2 \
        || echo "libsqlcipher-dev did not install: SQLCipher left out" >&2
fi
source "$(dirname "$0")/../../.ci/env.sh"
cd "$COVE_ROOT"
if [ "${BENCH_BUILD:-1}" != 0 ] || [ ! -e build/cmake/libcove.so ]; then
    cmake -S . -B build/cmake -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
    cmake --build build/cmake >&2
fi
# Neither SQLite library is linked: the program loads both with dlopen (they share symbol names).
cc -O2 -o build/enc-bench benchmarks/encryption/enc_bench.c -Iinclude -Lbuild/cmake -lcove -ldl
LD_LIBRARY_PATH=build/cmake build/enc-bench "$@"
