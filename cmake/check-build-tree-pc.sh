#!/bin/sh
# Checks that the build tree's cove.pc works before installation: a C program compiles and links
# through `pkg-config --cflags --libs cove` with PKG_CONFIG_PATH set to the build directory, and
# runs against the library there.
# Usage: check-build-tree-pc.sh BUILD_DIR C_SOURCE
set -eu
build=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PKG_CONFIG_PATH="$build"
cflags=$(pkg-config --cflags cove)
libs=$(pkg-config --libs cove)
libdir=$(pkg-config --variable=libdir cove)
[ -f "$libdir/libcove.so" ] || { echo "FAIL: cove.pc's libdir $libdir has no libcove.so"; exit 1; }
cc -std=c99 -Wall -Wextra -pedantic -Werror $cflags "$src" -o "$tmp/program" $libs -Wl,-rpath,"$libdir"
(cd "$tmp" && ./program "$tmp/check.cove")
echo "build-tree cove.pc: compiled, linked and ran $(basename "$src")"
