#!/usr/bin/env python3
"""What one single-object commit executes, counted rather than timed: Cove against SQLite.

A durable commit waits for the disk, and on this kind of machine the wait leaves the caches
cold, so each commit's CPU time grows with how much code and memory it touches. Timing that is
at the mercy of the machine's drift; counting it is not. This runs `objects-bench commits`
under valgrind's callgrind, once for Cove (noSync) and once for SQLite (synchronous=OFF): the
flush is the same system call for both and is left out, the engine's own work is what differs.
Collection is switched on inside each engine's commit closure only and a profile is written
after every commit, so each profile is exactly one commit. For the commits after the first
WARMUP it reports the median of:

- instructions executed (valgrind counts a `rep stos`/`rep movs` once per element, so a
  memset of a page counts as thousands),
- distinct instructions executed, and the distinct 64-byte lines of code they lie in: the
  commit's code footprint, what a cold instruction cache must fetch.

With --functions N it also lists the N functions with the most code lines in one commit.

Usage: benchmarks/objects/footprint.py [--binary PATH] [--commits N] [--functions N]
Needs valgrind (Debian's package `valgrind`) and the release build of the benchmark
(`swift build -c release --scratch-path .build-bench` in benchmarks/objects).
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def closure_symbol(binary, prefix):
    """The mangled name of the commit closure of the committer whose name starts with prefix."""
    out = subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        name = line.split()[-1]
        if name.startswith(prefix) and name.endswith("KcfU_"):
            return name
    sys.exit(f"footprint: no commit closure {prefix}... in {binary}")


def profile(binary, row, symbol, commits, workdir):
    """Runs row `row` of `objects-bench commits` under callgrind; the profile file prefix."""
    out = os.path.join(workdir, f"row{row}.out")
    env = dict(os.environ, BENCH_ONLY=str(row), BENCH_COMMITS=str(commits), TMPDIR=workdir)
    subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes", "--collect-atstart=no",
                    f"--toggle-collect={symbol}", f"--dump-after={symbol}",
                    f"--callgrind-out-file={out}", binary, "commits"],
                   env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def read_dump(path):
    """(instructions, {function: set of code lines}) of one callgrind profile."""
    names = {}
    function = None
    lines = collections.defaultdict(set)
    address = 0
    total = 0
    with open(path) as f:
        for line in f:
            m = re.match(r"(c?fn)=\((\d+)\)(?: (.*))?", line)
            if m:
                kind, ident, name = m.groups()
                if name:
                    names[ident] = name.strip()
                if kind == "fn":
                    function = names.get(ident, ident)
                continue
            if line.startswith("summary:"):
                total = int(line.split()[1])
                continue
            token = line.split(maxsplit=1)[0] if line.strip() else ""
            if token.startswith("0x"):
                address = int(token, 16)
            elif token.startswith("+"):
                address += int(token[1:])
            elif token.startswith("-"):
                address -= int(token[1:])
            elif token != "*":
                continue
            lines[function].add(address >> 6)
    return total, lines


def summarize(label, prefix, commits, warmup, top):
    dumps = []
    for i in range(warmup + 1, commits + 1):
        path = f"{prefix}.{i}"
        if os.path.exists(path):
            dumps.append(read_dump(path))
    if not dumps:
        sys.exit(f"footprint: no profiles for {label}")
    instructions = statistics.median(t for t, _ in dumps)
    code = [set().union(*l.values()) for _, l in dumps]
    lines = statistics.median(len(c) for c in code)
    print(f"| {label} | {instructions:,.0f} | {lines:,.0f} | {lines * 64 / 1024:.1f} KiB |")
    if top:
        _, per = dumps[len(dumps) // 2]
        for name, s in sorted(per.items(), key=lambda kv: -len(kv[1]))[:top]:
            print(f"|   {name[:110]} | | {len(s)} | |")
    return instructions, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(HERE, ".build-bench/release/objects-bench"))
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=150)
    parser.add_argument("--functions", type=int, default=0)
    args = parser.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"footprint: build the benchmark first ({args.binary} is missing)")
    with tempfile.TemporaryDirectory(prefix="cove-footprint-") as work:
        cove = profile(args.binary, 3, closure_symbol(args.binary, "$s13objects_bench13coveCommitter"),
                       args.commits, work)
        sqlite = profile(args.binary, 4, closure_symbol(args.binary, "$s13objects_bench15sqliteCommitter"),
                         args.commits, work)
        print(f"One single-object commit, median of commits {args.warmup + 1}-{args.commits}:\n")
        print("| Engine | instructions | code lines (64 B) | code footprint |")
        print("|---|--:|--:|--:|")
        ci, cl = summarize("Cove, noSync", cove, args.commits, args.warmup, args.functions)
        si, sl = summarize("SQLite WAL, synchronous=OFF", sqlite, args.commits, args.warmup, args.functions)
        print(f"| Cove/SQLite | {ci / si:.2f}× | {cl / sl:.2f}× | |")


if __name__ == "__main__":
    main()
