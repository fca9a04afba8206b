#!/usr/bin/env bash
# Builds and runs the object benchmark: Cove's object layer and SQLite's C API on the same
# Person objects, one Markdown table on stdout (progress on stderr), then single calls of the C
# API (run-c.sh), durable single-object commits through the C API (run-c.sh commits), then creates
# through Python (create_many against sqlite3's executemany).
# Needs root or sudo only to install libsqlite3-dev when it is missing.
#   BENCH_OBJECTS (1000000), BENCH_LOOKUPS (1000000), BENCH_COMMITS (10000) change the sizes;
#   BENCH_PASSES=1 runs each engine's workload once instead of twice (Cove, SQLite, SQLite, Cove).
set -euo pipefail
cd "$(dirname "$0")"
if ! dpkg -s libsqlite3-dev >/dev/null 2>&1; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libsqlite3-dev >&2
fi
swift build -c release --scratch-path .build-bench >&2
.build-bench/release/objects-bench
./run-c.sh
./run-c.sh commits
if [ -f python_bench.py ]; then
    python=${PYTHON:-../../build/venv/bin/python}
    "$python" python_bench.py
fi
