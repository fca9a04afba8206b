#!/bin/sh
# Checks that libcove.so needs no Swift runtime library (the standard library is linked in
# statically) and stays near its expected size. Usage: check-dependencies.sh LIBRARY
set -eu
lib=$1
deps=$(ldd "$lib")
echo "$deps"
if echo "$deps" | grep -qi swift; then
  echo "FAIL: $lib depends on a Swift runtime library"
  exit 1
fi
if echo "$deps" | grep -q "not found"; then
  echo "FAIL: $lib has an unresolved dependency"
  exit 1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
if [ "$soname" != "libcove.so.0" ]; then
  echo "FAIL: SONAME is '$soname', expected libcove.so.0"
  exit 1
fi
size=$(stat -L -c %s "$lib")
# The library with the standard library and FoundationEssentials linked in is about 24 MiB; the
# whole of Foundation would bring its ICU data with it (tens of MiB more), which this catches.
limit=$((32 * 1024 * 1024))
if [ "$size" -gt "$limit" ]; then
  echo "FAIL: $lib is $size bytes, more than $limit (is full Foundation linked in?)"
  exit 1
fi
echo "ok: no Swift runtime dependency, SONAME $soname, $size bytes"
