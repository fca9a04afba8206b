// Object keys kept sorted for the change sets of collections: the keys of a differ's last rows,
// found again by their storage, and a fenced sorted array that finds a key in two cache misses.
import CoveCore
import CoveStorage
import Synchronization

/// The object keys of the rows a differ made last, found again by the identity of the rows'
/// storage: the next change set starts from those rows, and reading the keys out of every row
/// again would cost a pass over all of them. Holding the rows keeps their storage from being
/// reused, so the same storage and count mean the same rows.
final class RowKeysCache: Sendable {
    private let last = Mutex<(rows: [Value], keys: SortedKeys)?>(nil)

    private static func identity(_ rows: [Value]) -> UnsafeRawPointer? {
        rows.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    }

    /// The keys of `rows` if they are the rows last remembered.
    func keys(of rows: [Value]) -> SortedKeys? {
        guard !rows.isEmpty else { return nil }
        let id = Self.identity(rows)
        return last.withLock { entry in
            guard let entry, entry.rows.count == rows.count, Self.identity(entry.rows) == id else { return nil }
            return entry.keys
        }
    }

    /// Remembers that `keys` are the object keys of `rows`, in order.
    func remember(_ rows: [Value], _ keys: SortedKeys) {
        last.withLock { $0 = (rows, keys) }
    }
}

/// Object keys in ascending order, with every 32nd of them in a small fence: finding a key
/// reads the fence (a few KiB, which stays in cache between deliveries) and one block of 32
/// keys, where a binary search over all of them would miss the cache at nearly every step.
struct SortedKeys: Sendable {
    let keys: [Int64]
    private let fence: [Int64]
    private static let block = 32

    init(_ keys: [Int64]) {
        self.keys = keys
        var fence: [Int64] = []
        fence.reserveCapacity(keys.count / Self.block + 1)
        var i = 0
        while i < keys.count {
            fence.append(keys[i])
            i += Self.block
        }
        self.fence = fence
    }

    /// The index of `key`, or nil when it is not one of the keys.
    func position(of key: Int64) -> Int? {
        blockStart(of: key).flatMap { position(of: key, inBlockAt: $0) }
    }

    /// The indices of `wanted` (nil for a key not among them), as `position(of:)` finds them,
    /// but with the blocks the keys fall in fetched into the cache first, all at once: for
    /// scattered keys the misses then overlap instead of following one another.
    func positions(of wanted: [Int64]) -> [Int?] {
        let starts = wanted.map(blockStart(of:))
        keys.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            // A block of 32 keys spans at most five cache lines.
            for case let start? in starts { prefetchMemory(base + start * MemoryLayout<Int64>.stride, lines: 5) }
        }
        return zip(wanted, starts).map { key, start in start.flatMap { position(of: key, inBlockAt: $0) } }
    }

    /// Where the block that would hold `key` starts: the last block whose first key is at most
    /// `key` (nil when `key` is below every key).
    private func blockStart(of key: Int64) -> Int? {
        var lo = 0, hi = fence.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if fence[mid] <= key { lo = mid + 1 } else { hi = mid }
        }
        return lo > 0 ? (lo - 1) * Self.block : nil
    }

    private func position(of key: Int64, inBlockAt start: Int) -> Int? {
        let i = Self.lowerBound(of: key, in: keys, start..<Swift.min(start + Self.block, keys.count))
        return i < keys.count && keys[i] == key ? i : nil
    }

    /// The first index of `range` in ascending `keys` whose key is not below `key`
    /// (`range.upperBound` when there is none).
    static func lowerBound(of key: Int64, in keys: [Int64], _ range: Range<Int>) -> Int {
        var lo = range.lowerBound, hi = range.upperBound
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
