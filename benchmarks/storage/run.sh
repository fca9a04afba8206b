#!/usr/bin/env bash
# Builds and runs the storage benchmark: Cove's storage engine, LMDB and SQLite, one workload,
# one Markdown table on stdout (progress on stderr), then the disk-probe.c tables (what the
# disk charges for scattered pages per flush, for a commit written in two places against one,
# and for writes into large folios). Needs root or sudo only to install liblmdb-dev /
# libsqlite3-dev (and strace, optional) when they are missing.
#   BENCH_KEYS (1000000), BENCH_COMMITS (10000), BENCH_PAIRS (1000000) change the sizes.
#   BENCH_STRACE=0 skips counting system calls per durable commit.
set -euo pipefail
cd "$(dirname "$0")"

need=()
for pkg in liblmdb-dev libsqlite3-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${BENCH_STRACE:-1}" != 0 ] && ! command -v strace >/dev/null; then need+=(strace); fi
if [ ${#need[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    echo "installing ${need[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >&2
fi

swift build -c release --scratch-path .build-bench >&2
bin=.build-bench/release/storage-bench

# System calls per durable commit: N commits on a fresh file minus a run of 0 commits (opening
# and closing), divided by N, under strace -f -c.
if [ "${BENCH_STRACE:-1}" != 0 ] && command -v strace >/dev/null; then
    n=2000
    tmp=$(mktemp -d)
    count() { # engine commits syscall-regex -> calls
        strace -f -c -o "$tmp/out" -e trace=fsync,fdatasync,msync,sync_file_range,write,pwrite64,pwritev,pwritev2 \
            "$bin" commits "$1" "$2" >/dev/null
        awk -v re="$3" '$NF ~ re && $4 ~ /^[0-9]+$/ { s += $4 } END { print s + 0 }' "$tmp/out"
    }
    per() { # engine regex
        local a b
        a=$(count "$1" "$n" "$2"); b=$(count "$1" 0 "$2")
        awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.2f", (a - b) / n }'
    }
    flushes="" writes=""
    for e in cove lmdb sqlite; do
        flushes+="$e=$(per $e '^(fsync|fdatasync|msync|sync_file_range)$'),"
        writes+="$e=$(per $e '^(write|pwrite64|pwritev|pwritev2)$'),"
    done
    rm -rf "$tmp"
    export BENCH_FLUSHES="$flushes" BENCH_WRITES="$writes"
    echo "per commit: flushes $flushes writes $writes" >&2
fi

"$bin"

# The disk's own costs behind the commit layout (one run of pages against scattered pages per
# flush; one-page writes into large page-cache folios), and the first write of new memory with
# and without huge pages (behind PageBuffers), measured in the same run.
probe_dir=$(mktemp -d)
cc -O2 -o "$probe_dir/disk-probe" disk-probe.c
echo
"$probe_dir/disk-probe" "${TMPDIR:-/tmp}"
rm -rf "$probe_dir"
