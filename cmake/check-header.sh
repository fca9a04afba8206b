#!/bin/sh
# Checks that include/cove.h compiles alone as C99 and as C++ with every warning an error, that
# its COVE_CDEF form preprocesses, and that every function it declares is in the exports list
# (the Swift side implements each with @c @implementation, so the compiler checks its signature).
# Usage: check-header.sh HEADER EXPORTS_LIST
set -eu
header=$1; list=$2
dir=$(dirname "$header")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '#include "cove.h"\nint main(void) { return cove_version_number() > 0 ? 0 : 1; }\n' > "$tmp/c.c"
cc -std=c99 -Wall -Wextra -pedantic -Werror -I"$dir" -fsyntax-only "$tmp/c.c"
cp "$tmp/c.c" "$tmp/cxx.cpp"
c++ -std=c++11 -Wall -Wextra -pedantic -Werror -I"$dir" -fsyntax-only "$tmp/cxx.cpp"
cc -E -P -DCOVE_CDEF "$header" > "$tmp/cdef.h"
if grep -q '#include' "$tmp/cdef.h"; then echo "FAIL: COVE_CDEF output still includes headers"; exit 1; fi
# Every function the header declares must be exported.
grep -oE '\bcove_[a-z0-9_]+\(' "$tmp/cdef.h" | tr -d '(' | sort -u > "$tmp/declared"
grep -E '^cove_' "$list" | sort -u > "$tmp/exported"
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
if [ -n "$missing" ] || [ -n "$extra" ]; then
  echo "FAIL: header and exports list disagree"
  [ -n "$missing" ] && echo "declared but not exported: $missing"
  [ -n "$extra" ] && echo "exported but not declared: $extra"
  exit 1
fi
echo "ok: header compiles as C99 and C++, declares exactly the $(wc -l < "$tmp/declared") exported functions"
