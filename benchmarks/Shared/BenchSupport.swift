// What every benchmark program needs: a monotonic clock, sizes from the environment, a fresh
// temporary folder. Each benchmark package links this file into its program
// (Sources/*-bench/BenchSupport.swift), and the tests' generator (SeededRandom.swift) beside it,
// so that every engine sees the same order of keys.
import Glibc

struct BenchError: Error, CustomStringConvertible {
    var description: String
}

/// The monotonic clock in nanoseconds.
func now() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// Nanoseconds taken by `body`.
func timed(_ body: () throws -> Void) rethrows -> UInt64 {
    let start = now()
    try body()
    return now() - start
}

/// The integer in environment variable `name`, or `fallback`.
func envInt(_ name: String, _ fallback: Int) -> Int {
    guard let p = getenv(name), let v = Int(String(cString: p)) else { return fallback }
    return v
}

/// A fresh empty directory under $TMPDIR (or /tmp).
func freshDirectory(_ tag: String) throws -> String {
    var base = "/tmp"
    if let t = getenv("TMPDIR"), t.pointee != 0 { base = String(cString: t) }
    var template = Array("\(base)/cove-bench-\(tag)-XXXXXX".utf8CString)
    guard let p = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw BenchError(description: "mkdtemp failed under \(base)")
    }
    return String(cString: p)
}

/// Runs `total` operations for each of `parties` engines in turns: `rounds` rounds (ten unless
/// said otherwise) of an equal share each, every engine once a round, the one going first
/// rotating, so that all of them see the same moments of a machine whose speed drifts over
/// seconds (with `rounds: total`, one operation of each at a time). `body(party, first, count)`
/// runs operations `first ..< first + count` for one engine and returns what it measured; the
/// result holds, for each engine, the measure of each round.
func inTurns(total: Int, parties: Int, rounds wanted: Int = 10,
             _ body: (_ party: Int, _ first: Int, _ count: Int) throws -> UInt64) rethrows -> [[UInt64]] {
    var measures = [[UInt64]](repeating: [], count: parties)
    let rounds = min(wanted, max(1, total))
    var next = 0
    for round in 0..<rounds {
        let count = total / rounds + (round < total % rounds ? 1 : 0)
        for k in 0..<parties {
            let party = (round + k) % parties
            measures[party].append(try body(party, next, count))
        }
        next += count
    }
    return measures
}
