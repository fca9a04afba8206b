// Helpers shared by the Storage tests (no tests of its own): temporary directories, and a small "table" convention
// on top of the catalog (a catalog entry whose value is the TreeRoot of a u64-keyed tree), with
// the page walker verify() needs for it.
import XCTest
import Glibc
@testable import CoveStorage
import CoveStorageTesting

/// A fresh directory under the system's temporary directory, removed by `remove()`.
/// A test case with its own temporary directory, removed afterwards.
class StorageTestCase: XCTestCase {
    var dir: TemporaryDirectory!

    override func setUp() {
        dir = TemporaryDirectory()
    }

    override func tearDown() {
        dir.remove()
    }

    private final class ThreadBody: @unchecked Sendable {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    /// Opens `dir.file(name)` at full durability through a fault-injecting file (recording a
    /// trace of its writes with `recordTrace`), for tests that count or replay what reached it.
    func openWatched(_ name: String, recordTrace: Bool = false, key: [UInt8]? = nil) throws -> (Storage, FaultInjectingFile) {
        let box = FileBox()
        var options = TestTables.options(.full)
        options.encryptionKey = key
        options.fileFactory = FaultInjectingFile.factory(recordTrace: recordTrace, created: { box.add($0) })
        let s = try Storage.open(path: dir.file(name), options: options)
        return (s, try XCTUnwrap(box.last))
    }

    /// Removes a database file and its lock file.
    func removeFile(_ path: String) {
        unlink(path)
        unlink(path + ".lock")
    }

    /// Replaces the database at `path` (its lock file removed) with `bytes`, a crash image.
    func writeFile(_ path: String, _ bytes: [UInt8]) {
        removeFile(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    /// Opens the crash image `image` written at `path` at full durability; the test fails
    /// (naming `context`) when the open fails or opens a version other than `synced` (the last
    /// flushed) or `inFlight` (the one being committed), and nil comes back for a failed open.
    func openCrashImage(_ image: [UInt8], at path: String, _ context: String, synced: UInt64, inFlight: UInt64?,
                        key: [UInt8]? = nil) -> Storage? {
        writeFile(path, image)
        let reopened: Storage
        do {
            var options = TestTables.options(.full)
            options.encryptionKey = key
            reopened = try Storage.open(path: path, options: options)
        } catch {
            XCTFail("\(context): open failed: \(error)")
            return nil
        }
        let v = reopened.latestVersion()
        XCTAssertTrue(v == synced || v == inFlight, "\(context): opened version \(v), expected \(synced) or \(String(describing: inFlight))")
        return reopened
    }

    /// Runs `body` on a new thread; join it with `pthread_join`.
    func spawn(_ body: @escaping () -> Void) -> pthread_t {
        var t = pthread_t()
        let ctx = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        pthread_create(&t, nil, { arg in
            Unmanaged<ThreadBody>.fromOpaque(arg!).takeRetainedValue().body()
            return nil
        }, ctx)
        return t
    }
}

struct TemporaryDirectory {
    let path: String

    init() {
        var base = "/tmp"
        if let t = getenv("TMPDIR"), t.pointee != 0 { base = String(cString: t) }
        var template = Array("\(base)/cove-storage-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func remove() {
        guard let dir = opendir(path) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." { continue }
            unlink("\(path)/\(name)")
        }
        closedir(dir)
        rmdir(path)
    }
}

/// The test convention for tables: catalog key = table name, value = the 24-byte TreeRoot of a
/// u64-keyed tree.
enum TestTables {
    /// Every page of the tables a snapshot's catalog names (the pages a pinned reader uses).
    static func tablePages(_ snapshot: Snapshot) throws -> Set<PageNumber> {
        var pages = Set<PageNumber>()
        try BTree(store: snapshot, root: snapshot.catalog, keyKind: .bytes).forEach(from: nil as UnsafeRawBufferPointer?, reverse: false) {
            _, value throws(StorageError) -> Bool in
            try BTree(store: snapshot, root: try root(value), keyKind: .u64).forEachPage { pages.insert($0) }
            return true
        }
        return pages
    }

    static func root(_ value: UnsafeRawBufferPointer) throws(StorageError) -> TreeRoot {
        guard value.count == TreeRoot.encodedSize else { throw .corrupt("a test catalog value is \(value.count) bytes") }
        return TreeRoot.decode(from: value.baseAddress!)
    }

    static func root(_ bytes: [UInt8]) throws(StorageError) -> TreeRoot {
        guard bytes.count == TreeRoot.encodedSize else { throw .corrupt("a test catalog value is \(bytes.count) bytes") }
        return bytes.withUnsafeBytes { TreeRoot.decode(from: $0.baseAddress!) }
    }

    static func encode(_ root: TreeRoot) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: TreeRoot.encodedSize)
        bytes.withUnsafeMutableBytes { root.encode(into: $0.baseAddress!) }
        return bytes
    }

    /// verify() support: the pages of each table tree.
    static let walker: CatalogPageWalker = { snapshot, _, value, page throws(StorageError) in
        let tree = BTree(store: snapshot, root: try root(value), keyKind: .u64)
        try tree.verify()
        try tree.forEachPage(page)
    }

    /// Options for tests: the walker installed, plus what the caller sets.
    static func options(_ durability: Durability = .full) -> StorageOptions {
        var o = StorageOptions()
        o.durability = durability
        o.catalogPages = walker
        o.maxFileSize = 1 << 30
        return o
    }

    /// Puts key -> value into table `name` (created if missing).
    static func put(_ w: WriteTransaction, _ name: String, _ key: UInt64, _ value: [UInt8]) throws(StorageError) {
        var catalog = BTree(store: w, root: w.catalog, keyKind: .bytes)
        let nameBytes = Array(name.utf8)
        var current = TreeRoot.empty
        if let v = try catalog.get(nameBytes) { current = try root(v) }
        var table = BTree(store: w, root: current, keyKind: .u64)
        try table.put(key, value)
        try catalog.put(nameBytes, encode(table.root))
        w.catalog = catalog.root
    }

    /// Removes key from table `name`.
    static func remove(_ w: WriteTransaction, _ name: String, _ key: UInt64) throws(StorageError) {
        var catalog = BTree(store: w, root: w.catalog, keyKind: .bytes)
        let nameBytes = Array(name.utf8)
        guard let v = try catalog.get(nameBytes) else { return }
        var table = BTree(store: w, root: try root(v), keyKind: .u64)
        try table.remove(key)
        try catalog.put(nameBytes, encode(table.root))
        w.catalog = catalog.root
    }

    /// The value of key in table `name`, through any store.
    static func get<S: PageStore>(_ store: S, catalog: TreeRoot, _ name: String, _ key: UInt64) throws(StorageError) -> [UInt8]? {
        let c = BTree(store: store, root: catalog, keyKind: .bytes)
        guard let v = try c.get(Array(name.utf8)) else { return nil }
        return try BTree(store: store, root: try root(v), keyKind: .u64).get(key)
    }

    /// Every key -> value of table `name`.
    static func contents<S: PageStore>(_ store: S, catalog: TreeRoot, _ name: String) throws(StorageError) -> [UInt64: [UInt8]] {
        let c = BTree(store: store, root: catalog, keyKind: .bytes)
        guard let v = try c.get(Array(name.utf8)) else { return [:] }
        var out: [UInt64: [UInt8]] = [:]
        try BTree(store: store, root: try root(v), keyKind: .u64)
            .forEach(from: nil, reverse: false) { k, value throws(StorageError) -> Bool in
                out[k] = Array(value)
                return true
            }
        return out
    }
}

/// Asserts that `body` throws a StorageError matching `matches`, and returns it.
@discardableResult
func assertStorageError(_ body: () throws(StorageError) -> Void, file: StaticString = #filePath, line: UInt = #line,
                        _ matches: (StorageError) -> Bool) -> StorageError? {
    do {
        try body()
        XCTFail("expected an error", file: file, line: line)
        return nil
    } catch {
        XCTAssertTrue(matches(error), "unexpected error: \(error)", file: file, line: line)
        return error
    }
}

/// A value of `size` bytes derived from `seed`.
func testValue(_ seed: UInt64, size: Int) -> [UInt8] {
    var x = seed &* 0x9E37_79B9_7F4A_7C15 | 1
    return (0..<size).map { _ in
        x ^= x << 13
        x ^= x >> 7
        x ^= x << 17
        return UInt8(truncatingIfNeeded: x)
    }
}

/// Meta slots encoded, altered and decoded again, for the tests of what decoding refuses.
enum MetaSlotTesting {
    /// `meta` encoded into a zeroed page, `patch` applied (and the slot's checksum made right
    /// again), then decoded.
    static func decode(_ meta: MetaSlot, patch: ((UnsafeMutableRawPointer) -> Void)? = nil) -> MetaSlot.Decoded {
        let page = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 16)
        defer { page.deallocate() }
        memset(page, 0, pageSize)
        meta.encode(into: page)
        if let patch {
            patch(page)
            let crc = crc32c(UnsafeRawBufferPointer(start: page, count: MetaSlot.crcOffset))
            page.storeBytes(of: crc.littleEndian, toByteOffset: MetaSlot.crcOffset, as: UInt32.self)
        }
        return MetaSlot.decode(page)
    }

    /// Writes a new, empty file as builds before format 5 made it: two pages, the slots at
    /// pages 0 and 1, in format `format` (1 to 4; bytes 152.. zero, as those formats had them).
    static func writeLegacyFile(_ path: String, format: UInt32) throws {
        let fileId = UInt64.random(in: 1...UInt64.max)
        var bytes = [UInt8](repeating: 0, count: 2 * pageSize)
        bytes.withUnsafeMutableBytes { b in
            for version in 0..<2 {
                let p = b.baseAddress! + version * pageSize
                var meta = MetaSlot.empty(version: UInt64(version), fileId: fileId)
                meta.pageCount = 2
                meta.freePageCount = 0
                meta.recentFree = []
                meta.secondSlot = 1
                meta.encode(into: p)
                p.storeBytes(of: format.littleEndian, toByteOffset: 8, as: UInt32.self)
                p.storeBytes(of: UInt64(0), toByteOffset: 152, as: UInt64.self)
                let crc = crc32c(UnsafeRawBufferPointer(start: p, count: MetaSlot.crcOffset))
                p.storeBytes(of: crc.littleEndian, toByteOffset: MetaSlot.crcOffset, as: UInt32.self)
            }
        }
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        guard write(fd, bytes, bytes.count) == bytes.count else { throw POSIXError(.EIO) }
    }

    static func assertDamaged(_ d: MetaSlot.Decoded, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
        if case .damaged = d { return }
        XCTFail("\(why): \(d)", file: file, line: line)
    }
}
