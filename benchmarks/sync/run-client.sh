#!/usr/bin/env bash
# Cove Sync with real clients (client_bench.c): builds libcove (CMake, release) and
# cove-sync-server (release), starts a PostgreSQL and one server on loopback
# (.ci/sync-server.sh), runs the bootstrap and latency measurements, and stops them. One
# Markdown table on stdout, progress on stderr. Sizes through the environment: BENCH_OBJECTS
# (100000), BENCH_CLIENTS (200), BENCH_ROUNDS (40), BENCH_INTERVAL_MS (50); `run-client.sh latency` or
# `run-client.sh bootstrap` runs one.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
source .ci/env.sh
cmake -S . -B build/cmake -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/cmake >&2
(cd SyncServer && swift build -c release --product cove-sync-server >&2)
work=$(mktemp -d)
chmod 755 "$work"
cc -O2 -o "$work/client-bench" benchmarks/sync/client_bench.c -Iinclude -Lbuild/cmake -lcove -lpthread \
  -Wl,-rpath,"$root/build/cmake"
trap 'bash .ci/sync-server.sh stop "$work/server" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
# Each client holds two connections and its realm's files; the default limit of 1024 open
# files is too few for 200.
ulimit -n 8192 2>/dev/null || true
# Each measurement on a server of its own: a file that does not subscribe downloads all a
# server holds, so the latency's clients must not start with the bootstrap's objects.
first=1
for what in ${1:-latency bootstrap}; do
  eval "$(COVE_SYNC_SERVER=$root/SyncServer/.build/release/cove-sync-server bash .ci/sync-server.sh start "$work/server")"
  SYNC_URL=$COVE_SYNC_TEST_URL SYNC_TOKEN=$COVE_SYNC_TEST_TOKEN BENCH_HEADER=$first "$work/client-bench" "$what"
  bash .ci/sync-server.sh stop "$work/server" >/dev/null
  first=0
done
