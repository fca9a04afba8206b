// What every benchmark program needs: a monotonic clock, sizes from the environment, one
// deterministic order of keys for every engine, a fresh temporary folder. Each benchmark
// package links this file into its program (Sources/*-bench/BenchSupport.swift).
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

/// A small deterministic generator (SplitMix64), so every engine sees the same order.
struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
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
