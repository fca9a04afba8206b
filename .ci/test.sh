#!/usr/bin/env bash
# Builds and runs every test of Cove: the CMake build of libcove.so with its checks and the C
# tests (ctest), the Python package built on that same libcove with its pytest suite and a typed
# example checked by mypy --strict, the Swift tests, and the sync server (a package of its own,
# SyncServer/) against a PostgreSQL its tests start. The Swift sources compile once for libcove;
# C and Python reuse that build. The sync server is built first: one instance of it
# (.ci/sync-server.sh) serves the sync clients' tests, and its own tests reuse the build.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
# The cove tool's shell links libedit (Debian's libedit-dev), encrypted files libcrypto
# (libssl-dev), and libcove's sync client libcurl (libcurl4-openssl-dev): installed when missing.
missing=""
for package in libedit-dev libssl-dev libcurl4-openssl-dev; do
  dpkg -s $package >/dev/null 2>&1 || missing="$missing $package"
done
if [ -n "$missing" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >&2
fi
cd "$COVE_ROOT"
start=$SECONDS

echo "== documentation links"
python3 .ci/check-links.py

echo "== a sync server for the sync clients' tests (the server's tests reuse this build)"
(cd SyncServer && swift build --build-tests)
# One cove-sync-server on a free loopback port, on a PostgreSQL of its own, stopped at exit; the
# tests below find it through COVE_SYNC_TEST_URL, COVE_SYNC_TEST_TOKEN (user alice) and
# COVE_SYNC_TEST_TOKEN_OTHER (user bob).
sync_dir=$(mktemp -d)
trap 'bash "$COVE_ROOT/.ci/sync-server.sh" stop "$sync_dir"' EXIT
sync_env=$(bash .ci/sync-server.sh start "$sync_dir")
eval "$sync_env"
echo "sync server at $COVE_SYNC_TEST_URL"

echo "== libcove.so (CMake, Ninja) and its checks and C tests"
cmake -S . -B build/cmake -G Ninja -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build/cmake
ctest --test-dir build/cmake --output-on-failure

echo "== Python package on the same libcove, and pytest"
COVE_LIBRARY=$COVE_ROOT/build/cmake/libcove.so python -m pip install --quiet --disable-pip-version-check \
  --no-build-isolation --force-reinstall --no-deps ./bindings/python
(cd build && python -m pytest -q "$COVE_ROOT/bindings/python/tests")

echo "== the typed Python example: mypy --strict, then run"
python -m mypy --strict --no-incremental --cache-dir build/mypy-cache bindings/python/examples/typed_todo.py
python bindings/python/examples/typed_todo.py

echo "== Swift tests"
swift build --build-tests
swift test --skip-build

echo "== the sync server's tests, against a PostgreSQL they start (installed from Debian when missing)"
(cd SyncServer && swift test --skip-build)

echo "== file-parser fuzzer: replay of the corpus, then a short libFuzzer run"
.build/debug/cove-fuzz-file Tests/Corpus/file/* | tail -n 1
swift build -c release --scratch-path .build-fuzz --product cove-fuzz-file \
  -Xswiftc -sanitize=fuzzer -Xswiftc -parse-as-library -Xswiftc -DCOVE_LIBFUZZER
fuzz_corpus=$(mktemp -d)
cp Tests/Corpus/file/* "$fuzz_corpus"/
.build-fuzz/release/cove-fuzz-file -max_total_time="${COVE_FUZZ_SECONDS:-20}" -timeout=5 \
  -print_final_stats=1 "$fuzz_corpus" 2>&1 | grep -E "stat::number_of_executed_units|Done"
rm -rf "$fuzz_corpus"

echo "all tests passed in $((SECONDS - start)) s"
