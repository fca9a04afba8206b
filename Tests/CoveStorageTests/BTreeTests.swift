// Randomized operation sequences on both key kinds against an in-memory model, with verify()
// after every step, commits through MemoryPageStore, old snapshots re-read after newer writes,
// and a page-accounting leak check. Seeds are fixed and appear in every failure message.
import XCTest
@testable import CoveStorage
import CoveStorageTesting

/// A byte-string key ordered as the tree orders them.
struct ByteKey: Hashable, Comparable, CustomStringConvertible {
    var bytes: [UInt8]
    static func < (a: ByteKey, b: ByteKey) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
    var description: String { "\(bytes.count) bytes \(bytes.prefix(12).map { String($0, radix: 16) }.joined(separator: " "))" }
}

/// What the tree should hold.
struct SortedModel<Key: Hashable & Comparable> {
    var keys: [Key] = []
    var values: [Key: [UInt8]] = [:]

    func lowerBound(_ key: Key) -> Int {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if keys[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    mutating func put(_ key: Key, _ value: [UInt8]) -> Bool {
        let isNew = values.updateValue(value, forKey: key) == nil
        if isNew { keys.insert(key, at: lowerBound(key)) }
        return isNew
    }

    mutating func remove(_ key: Key) -> Bool {
        guard values.removeValue(forKey: key) != nil else { return false }
        keys.remove(at: lowerBound(key))
        return true
    }

    /// Up to `limit` entries from `key` as the tree's scans define it.
    func scan(from key: Key?, reverse: Bool, limit: Int) -> [Key] {
        if reverse {
            var i = key.map { k in lowerBound(k) + (values[k] != nil ? 1 : 0) } ?? keys.count
            var out: [Key] = []
            while i > 0 && out.count < limit { i -= 1; out.append(keys[i]) }
            return out
        }
        var i = key.map(lowerBound) ?? 0
        var out: [Key] = []
        while i < keys.count && out.count < limit { out.append(keys[i]); i += 1 }
        return out
    }
}

/// The operations of one key kind, so one driver tests both.
protocol TreeOps {
    associatedtype Key: Hashable & Comparable & CustomStringConvertible
    static var kind: BTreeKeyKind { get }
    static func key(_ index: Int) -> Key
    static func put(_ tree: inout BTree<MemoryPageStore>, _ key: Key, _ value: [UInt8]) throws -> Bool
    static func get(_ tree: BTree<MemoryPageStore>, _ key: Key) throws -> [UInt8]?
    static func remove(_ tree: inout BTree<MemoryPageStore>, _ key: Key) throws -> Bool
    static func rank(_ tree: BTree<MemoryPageStore>, _ key: Key) throws -> UInt64
    static func scan(_ tree: BTree<MemoryPageStore>, from: Key?, reverse: Bool, limit: Int) throws -> [(Key, [UInt8])]
    static func decode(_ raw: [UInt8]) -> Key
}

enum U64Ops: TreeOps {
    static var kind: BTreeKeyKind { .u64 }
    static func key(_ index: Int) -> UInt64 {
        // Spread out, with a few extremes, so separators are not consecutive integers.
        switch index % 97 {
        case 0: return UInt64(index / 97)
        case 1: return UInt64.max - UInt64(index / 97)
        default: return UInt64(index) &* 0x9E37_79B9 >> 3
        }
    }
    static func put(_ tree: inout BTree<MemoryPageStore>, _ key: UInt64, _ value: [UInt8]) throws -> Bool { try tree.put(key, value) }
    static func get(_ tree: BTree<MemoryPageStore>, _ key: UInt64) throws -> [UInt8]? { try tree.get(key) }
    static func remove(_ tree: inout BTree<MemoryPageStore>, _ key: UInt64) throws -> Bool { try tree.remove(key) }
    static func rank(_ tree: BTree<MemoryPageStore>, _ key: UInt64) throws -> UInt64 { try tree.rank(of: key) }
    static func scan(_ tree: BTree<MemoryPageStore>, from: UInt64?, reverse: Bool, limit: Int) throws -> [(UInt64, [UInt8])] {
        var out: [(UInt64, [UInt8])] = []
        try tree.forEach(from: from, reverse: reverse) { k, v in
            out.append((k, Array(v)))
            return out.count < limit
        }
        return out
    }
    static func decode(_ raw: [UInt8]) -> UInt64 { raw.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) } }
}

enum BytesOps: TreeOps {
    static var kind: BTreeKeyKind { .bytes }
    /// Keys in eight groups sharing prefixes of 0 to 1000 bytes, then a short tail over a
    /// three-letter alphabet: separators keep the long prefixes, so branches hold few children
    /// and trees get deep with few entries. Lengths run from 0 to 1024.
    static func key(_ index: Int) -> ByteKey {
        var rng = SeededRandom(seed: UInt64(index) &* 0x2545_F491_4F6C_DD1D)
        let group = index % 8
        let prefix = [0, 3, 40, 200, 500, 800, 1000, 1010][group]
        let tail = rng.below(group == 7 ? 15 : 24)
        return ByteKey(bytes: [UInt8](repeating: UInt8(0x61 + group % 3), count: prefix) + (0..<tail).map { _ in UInt8(0x61 + rng.below(3)) })
    }
    static func put(_ tree: inout BTree<MemoryPageStore>, _ key: ByteKey, _ value: [UInt8]) throws -> Bool { try tree.put(key.bytes, value) }
    static func get(_ tree: BTree<MemoryPageStore>, _ key: ByteKey) throws -> [UInt8]? { try tree.get(key.bytes) }
    static func remove(_ tree: inout BTree<MemoryPageStore>, _ key: ByteKey) throws -> Bool { try tree.remove(key.bytes) }
    static func rank(_ tree: BTree<MemoryPageStore>, _ key: ByteKey) throws -> UInt64 { try tree.rank(of: key.bytes) }
    static func scan(_ tree: BTree<MemoryPageStore>, from: ByteKey?, reverse: Bool, limit: Int) throws -> [(ByteKey, [UInt8])] {
        var out: [(ByteKey, [UInt8])] = []
        let body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> Bool = { k, v in
            out.append((ByteKey(bytes: Array(k)), Array(v)))
            return out.count < limit
        }
        if let from { try tree.forEach(from: from.bytes, reverse: reverse, body) } else { try tree.forEach(from: nil, reverse: reverse, body) }
        if let from {
            // The keys-only scan visits the same keys.
            var keys: [[UInt8]] = []
            try tree.forEachKey(from: from.bytes, reverse: reverse) { k in
                keys.append(Array(k))
                return keys.count < limit
            }
            if keys != out.map(\.0.bytes) { throw StorageError.corrupt("forEachKey from a key of \(from.bytes.count) bytes disagrees with forEach") }
        }
        return out
    }
    static func decode(_ raw: [UInt8]) -> ByteKey { ByteKey(bytes: raw) }
}

/// Every page the tree reaches plus every page the store holds free must be every page.
func assertNoLeak(_ tree: BTree<MemoryPageStore>, _ context: @autoclosure () -> String,
                  file: StaticString = #filePath, line: UInt = #line) throws {
    var reachable = 0
    try tree.forEachPage { _ in reachable += 1 }
    XCTAssertEqual(reachable + tree.store.freePageCount, tree.store.pageCount,
                   "page accounting: \(reachable) reachable + \(tree.store.freePageCount) free != \(tree.store.pageCount) (\(context()))",
                   file: file, line: line)
}

final class BTreeTests: XCTestCase {
    /// A value size: small, filling a good part of a leaf, or long enough for overflow pages.
    /// `wide` favours values of 500 to 1000 bytes, a few per leaf, so that UInt64 trees (whose
    /// branches hold over a hundred children) get deep with few entries.
    static func valueSize(_ rng: inout SeededRandom, wide: Bool) -> Int {
        switch rng.below(100) {
        case 0..<(wide ? 20 : 55): return rng.below(40)
        case 0..<(wide ? 30 : 90): return 40 + rng.below(960)
        case 0..<90: return 700 + rng.below(300)
        case 90..<98: return 1000 + rng.below(5000)
        default: return 6000 + rng.below(14000)
        }
    }

    /// Compares the whole tree (and its count) with the model, forwards and backwards.
    func assertMatches<Ops: TreeOps>(_: Ops.Type, _ tree: BTree<MemoryPageStore>, _ model: SortedModel<Ops.Key>,
                                     _ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(tree.count, UInt64(model.keys.count), "count (\(context))", file: file, line: line)
        let forward = try Ops.scan(tree, from: nil, reverse: false, limit: Int.max)
        XCTAssertEqual(forward.map(\.0), model.keys, "forward scan (\(context))", file: file, line: line)
        for (k, v) in forward where model.values[k] != v {
            XCTFail("value of \(k) differs (\(context))", file: file, line: line)
            break
        }
        let backward = try Ops.scan(tree, from: nil, reverse: true, limit: Int.max)
        XCTAssertEqual(backward.map(\.0), model.keys.reversed(), "backward scan (\(context))", file: file, line: line)
    }

    /// The randomized driver: `steps` operations over a universe of `universe` keys, verify()
    /// after each, a commit every `commitEvery` steps, snapshots pinned and re-read later.
    func runRandomized<Ops: TreeOps>(_ ops: Ops.Type, seed: UInt64, steps: Int, universe: Int, commitEvery: Int,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        var rng = SeededRandom(seed: seed)
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: Ops.kind)
        var model = SortedModel<Ops.Key>()
        var snapshots: [(version: UInt64, root: TreeRoot, model: SortedModel<Ops.Key>)] = []
        var maxHeight = 0

        for step in 0..<steps {
            let context = "\(Ops.kind) seed \(seed) step \(step)"
            // Grow first, churn, then shrink, so trees get deep and then empty out.
            let (growth, shrink) = step < steps * 2 / 5 ? (75, 10) : step < steps * 7 / 10 ? (45, 25) : (30, 45)
            let roll = rng.below(100)
            do {
                if roll < growth {
                    let key = Ops.key(rng.below(universe))
                    let value = rng.bytes(Self.valueSize(&rng, wide: Ops.kind == .u64))
                    let isNew = try Ops.put(&tree, key, value)
                    XCTAssertEqual(isNew, model.put(key, value), "put \(key) new? (\(context))", file: file, line: line)
                } else if roll < growth + shrink {
                    let key = model.keys.isEmpty || rng.below(4) == 0
                        ? Ops.key(rng.below(universe)) : model.keys[rng.below(model.keys.count)]
                    XCTAssertEqual(try Ops.remove(&tree, key), model.remove(key), "remove \(key) (\(context))", file: file, line: line)
                } else {
                    switch rng.below(4) {
                    case 0:
                        let key = Ops.key(rng.below(universe))
                        XCTAssertEqual(try Ops.get(tree, key), model.values[key], "get \(key) (\(context))", file: file, line: line)
                    case 1:
                        let from = rng.below(8) == 0 ? nil : Ops.key(rng.below(universe))
                        let reverse = rng.below(2) == 0
                        let got = try Ops.scan(tree, from: from, reverse: reverse, limit: 12)
                        XCTAssertEqual(got.map(\.0), model.scan(from: from, reverse: reverse, limit: 12),
                                       "scan from \(from.map { "\($0)" } ?? "start") reverse \(reverse) (\(context))", file: file, line: line)
                        for (k, v) in got where model.values[k] != v {
                            XCTFail("scanned value of \(k) differs (\(context))", file: file, line: line)
                        }
                    case 2:
                        if !model.keys.isEmpty {
                            let i = rng.below(model.keys.count)
                            let entry = try tree.entry(at: UInt64(i))
                            XCTAssertEqual(Ops.decode(entry.key), model.keys[i], "entry(at: \(i)) (\(context))", file: file, line: line)
                            XCTAssertEqual(entry.value, model.values[model.keys[i]], "entry(at: \(i)) value (\(context))", file: file, line: line)
                            let reverse = rng.below(2) == 0
                            var keys: [Ops.Key] = []
                            try tree.forEach(fromPosition: UInt64(i), reverse: reverse) { key, value in
                                keys.append(Ops.decode(Array(key)))
                                XCTAssertEqual(Array(value), model.values[keys.last!], "value at position (\(context))", file: file, line: line)
                                return keys.count < 5
                            }
                            let expected = reverse ? Array(model.keys[max(0, i - 4)...i].reversed()) : Array(model.keys[i..<min(model.keys.count, i + 5)])
                            XCTAssertEqual(keys, expected, "forEach(fromPosition: \(i), reverse: \(reverse)) (\(context))", file: file, line: line)
                        }
                    default:
                        let key = Ops.key(rng.below(universe))
                        XCTAssertEqual(try Ops.rank(tree, key), UInt64(model.lowerBound(key)), "rank of \(key) (\(context))", file: file, line: line)
                    }
                }
                try tree.verify()
            } catch {
                XCTFail("\(error) (\(context))", file: file, line: line)
                return
            }
            if !tree.isEmpty {
                let rootPage = try store.page(tree.root.page.pgno)
                maxHeight = max(maxHeight, Int(rootPage.load(fromByteOffset: PageHeader.flagsOffset, as: UInt8.self)) + 1)
            }

            if step % commitEvery == commitEvery - 1 {
                store.commit()
                try assertNoLeak(tree, context, file: file, line: line)
                // Keep up to three snapshots; check and release the oldest now and then.
                if snapshots.count < 3 && rng.below(3) == 0 {
                    store.pin(store.committedVersion)
                    snapshots.append((store.committedVersion, tree.root, model))
                } else if !snapshots.isEmpty && rng.below(2) == 0 {
                    let old = snapshots.removeFirst()
                    let reader = BTree(store: store, root: old.root, keyKind: Ops.kind)
                    do {
                        try reader.verify()
                        try assertMatches(Ops.self, reader, old.model, "snapshot of version \(old.version), \(context)", file: file, line: line)
                    } catch {
                        XCTFail("snapshot of version \(old.version): \(error) (\(context))", file: file, line: line)
                    }
                    store.unpin(old.version)
                }
            }
            if step % 97 == 0 {
                try assertMatches(Ops.self, tree, model, context, file: file, line: line)
            }
        }
        XCTAssertGreaterThanOrEqual(maxHeight, 3, "trees should get at least three levels deep (seed \(seed))", file: file, line: line)
        try assertMatches(Ops.self, tree, model, "\(Ops.kind) seed \(seed) end", file: file, line: line)

        // Empty the tree in random order; it must return to the empty root and free every page.
        var remaining = model.keys
        for i in stride(from: remaining.count - 1, to: 0, by: -1) { remaining.swapAt(i, rng.below(i + 1)) }
        for (n, key) in remaining.enumerated() {
            XCTAssertTrue(try Ops.remove(&tree, key), "draining \(key) (seed \(seed))", file: file, line: line)
            if n % 7 == 0 { try tree.verify() }
            if n % 200 == 0 { store.commit() }
        }
        XCTAssertEqual(tree.root, TreeRoot.empty, "drained tree (seed \(seed))", file: file, line: line)
        for old in snapshots { store.unpin(old.version) }
        store.commit()
        XCTAssertEqual(store.livePageCount, 0, "pages left after draining (seed \(seed))", file: file, line: line)
    }

    func testRandomizedU64() throws {
        for seed: UInt64 in [1, 2, 3] {
            try runRandomized(U64Ops.self, seed: seed, steps: 2500, universe: 1600, commitEvery: 37)
        }
    }

    func testRandomizedBytes() throws {
        for seed: UInt64 in [11, 12, 13] {
            try runRandomized(BytesOps.self, seed: seed, steps: 2000, universe: 1600, commitEvery: 41)
        }
    }

    /// Many small entries: wide pages, long runs of splits and merges without overflow values.
    func testRandomizedSmallU64Values() throws {
        var rng = SeededRandom(seed: 77)
        let store = MemoryPageStore()
        var tree = BTree(store: store, root: .empty, keyKind: .u64)
        var model = SortedModel<UInt64>()
        for step in 0..<12000 {
            let key = UInt64(rng.below(6000))
            if rng.below(3) < 2 {
                let value = [UInt8](repeating: UInt8(truncatingIfNeeded: step), count: rng.below(12))
                XCTAssertEqual(try tree.put(key, value), model.put(key, value), "seed 77 step \(step)")
            } else {
                XCTAssertEqual(try tree.remove(key), model.remove(key), "seed 77 step \(step)")
            }
            if step % 50 == 0 { try tree.verify() }
            if step % 500 == 0 { store.commit() }
        }
        try tree.verify()
        try assertMatches(U64Ops.self, tree, model, "seed 77")
        for i in stride(from: 0, to: model.keys.count, by: 13) {
            XCTAssertEqual(try tree.rank(of: model.keys[i]), UInt64(i))
            XCTAssertEqual(try tree.u64Key(at: UInt64(i)), model.keys[i])
        }
        try assertNoLeak(tree, "seed 77")
    }
}
