#!/bin/sh
# Builds every C test and example against an installed Cove through pkg-config alone (plus an
# rpath to the installed library) and runs each under `env -i`, as a user's program would run,
# given only the sync server the test command started, if any (COVE_SYNC_TEST_URL,
# COVE_SYNC_TEST_TOKEN, COVE_SYNC_TEST_TOKEN_OTHER; a URL and tokens hold no spaces).
# Usage: run-tests.sh INSTALL_PREFIX BUILD_DIR
set -eu
prefix=$1; out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
pcdir=$(dirname "$(find "$prefix" -name cove.pc | head -n 1)")
cflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags cove)
libs=$(PKG_CONFIG_PATH=$pcdir pkg-config --libs cove)
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir cove)
failed=0; passed=0
for src in "$here"/tests/*.c "$here"/examples/*.c; do
  name=$(basename "$src" .c)
  cc -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$src" -o "$out/$name" $libs -Wl,-rpath,"$libdir"
  work=$(mktemp -d)
  # A realm of format 4 (meta slots at pages 0 and 1), for the tests of older files.
  cp "$here/../../Tests/Corpus/file/realm-every-kind-format4.cove" "$work/format4.cove"
  # The exported functions, one a line, for the test that calls each on a closed realm.
  cp "$here/../../Sources/CoveC/cove.exports" "$work/cove.exports"
  if (cd "$work" && env -i ${COVE_SYNC_TEST_URL:+COVE_SYNC_TEST_URL=$COVE_SYNC_TEST_URL} \
      ${COVE_SYNC_TEST_TOKEN:+COVE_SYNC_TEST_TOKEN=$COVE_SYNC_TEST_TOKEN} \
      ${COVE_SYNC_TEST_TOKEN_OTHER:+COVE_SYNC_TEST_TOKEN_OTHER=$COVE_SYNC_TEST_TOKEN_OTHER} "$out/$name"); then
    passed=$((passed + 1)); echo "PASS $name"
  else
    failed=$((failed + 1)); echo "FAIL $name"
  fi
  rm -rf "$work"
done
echo "c: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
