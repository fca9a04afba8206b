#!/bin/sh
# Checks that a shared library exports exactly the symbols of the exports list: nothing missing,
# and no Swift (or any other) symbol leaking. Usage: check-exports.sh LIBRARY EXPORTS_LIST
set -eu
lib=$1; list=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
grep -E '^cove_' "$list" | sort > "$tmp/expected"
# _end, _edata and __bss_start are defined by the linker in every ELF shared object. Local
# symbols (a lower-case type, e.g. the thread-local `b __dispatch_tsd` that the statically linked
# libdispatch keeps in the dynamic table for its TLS relocations) cannot be bound from outside.
nm -D --defined-only "$lib" | awk '$2 !~ /^[bdrt]$/ {print $3}' | sed 's/@.*//' \
  | grep -vxE '_end|_edata|__bss_start|COVE_0' | sort > "$tmp/actual"
if ! diff -u "$tmp/expected" "$tmp/actual"; then
  echo "FAIL: the exported symbols of $lib differ from $list (- missing, + unexpected)"
  exit 1
fi
echo "ok: $(wc -l < "$tmp/actual") symbols exported, exactly the list"
