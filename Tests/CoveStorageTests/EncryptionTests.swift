// Encrypted files: the data round-trips through the key and nothing of it is on the disk in
// the clear; a wrong key, a missing key and a key for a plain file are refused by name; a
// changed byte or a page moved elsewhere is a clean error, never other data; two handles
// (each with its own decrypted pages) see each other's commits as pages are reused.
import XCTest
import Glibc
@testable import CoveStorage
import CoveStorageTesting

let testKey: [UInt8] = (0..<64).map { UInt8(($0 * 37 + 11) & 0xff) }
let otherKey: [UInt8] = (0..<64).map { UInt8(($0 * 91 + 3) & 0xff) }

final class EncryptionTests: StorageTestCase {
    private func options(_ key: [UInt8]?, _ durability: Durability = .full) -> StorageOptions {
        var o = TestTables.options(durability)
        o.encryptionKey = key
        return o
    }

    private func bytes(_ path: String) -> [UInt8] {
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var st = stat()
        fstat(fd, &st)
        var out = [UInt8](repeating: 0, count: Int(st.st_size))
        _ = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return out
    }

    private func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for i in 0...(haystack.count - needle.count) where haystack[i] == needle[0] {
            if Array(haystack[i..<i + needle.count]) == needle { return true }
        }
        return false
    }

    /// A table of `n` keys holding a marker text, written in several commits (some pages
    /// rewritten, some freed and reused).
    private func fill(_ s: Storage, _ n: UInt64) throws -> [UInt64: [UInt8]] {
        var model: [UInt64: [UInt8]] = [:]
        for round in 0..<4 as Range<UInt64> {
            let w = try s.beginWrite()
            for k in 0..<n where (k + round) % 3 != 0 {
                let value = Array("secret marker \(k) round \(round)".utf8) + testValue(k &+ round, size: Int(k % 300))
                try TestTables.put(w, "t", k, value)
                model[k] = value
            }
            try w.commit()
        }
        return model
    }

    func testDataRoundTripsAndNothingIsInTheClear() throws {
        let path = dir.file("sealed")
        let s = try Storage.open(path: path, options: options(testKey))
        let model = try fill(s, 2000)
        _ = try s.verify()
        s.close()

        let raw = bytes(path)
        XCTAssertEqual(raw.count % encryptedPageSize, 0, "whole physical pages")
        XCTAssertFalse(contains(raw, Array("secret marker".utf8)), "no value in the clear")
        XCTAssertFalse(contains(raw, Array("COVEDB".utf8)), "no meta slot in the clear")

        let reopened = try Storage.open(path: path, options: options(testKey))
        defer { reopened.close() }
        _ = try reopened.verify()
        let r = try reopened.beginRead()
        XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), model)
        r.end()
        // Written again after reopening, and read back by a third open.
        let w = try reopened.beginWrite()
        try TestTables.put(w, "t", 5, [1, 2, 3])
        try w.commit()
        let third = try Storage.open(path: path, options: options(testKey, .noSync))
        defer { third.close() }
        let r3 = try third.beginRead()
        XCTAssertEqual(try TestTables.get(r3, catalog: r3.catalog, "t", 5), [1, 2, 3])
        r3.end()
    }

    func testWrongMissingAndUnexpectedKeysAreRefusedByName() throws {
        let sealed = dir.file("sealed")
        let s = try Storage.open(path: sealed, options: options(testKey))
        _ = try fill(s, 50)
        s.close()
        let plain = dir.file("plain")
        let p = try Storage.open(path: plain, options: options(nil))
        _ = try fill(p, 50)
        p.close()

        _ = assertStorageError({ () throws(StorageError) in _ = try Storage.open(path: sealed, options: options(otherKey)) }) {
            if case .decryption(let m) = $0 { return m.contains("does not open") } else { return false }
        }
        _ = assertStorageError({ () throws(StorageError) in _ = try Storage.open(path: sealed, options: options(nil)) }) {
            if case .decryption(let m) = $0 { return m.contains("is encrypted") } else { return false }
        }
        _ = assertStorageError({ () throws(StorageError) in _ = try Storage.open(path: plain, options: options(testKey)) }) {
            if case .decryption(let m) = $0 { return m.contains("not encrypted") } else { return false }
        }
        _ = assertStorageError({ () throws(StorageError) in _ = try Storage.open(path: sealed, options: options(Array(testKey.prefix(32)))) }) {
            if case .invalidArgument(let m) = $0 { return m.contains("64 bytes") } else { return false }
        }
        // Read-only and salvage opens ask the same.
        var ro = options(otherKey)
        ro.readOnly = true
        _ = assertStorageError({ () throws(StorageError) in _ = try Storage.open(path: sealed, options: ro) }) {
            if case .decryption = $0 { return true } else { return false }
        }
        _ = assertStorageError({ () throws(StorageError) in _ = try Storage.openForSalvage(path: sealed) }) {
            if case .decryption = $0 { return true } else { return false }
        }
        // Nothing was changed by the refusals: the right key still opens every version.
        let again = try Storage.open(path: sealed, options: options(testKey))
        _ = try again.verify()
        again.close()
        let (salvage, versions) = try Storage.openForSalvage(path: sealed, encryptionKey: testKey)
        XCTAssertFalse(versions.isEmpty)
        salvage.close()
    }

    /// Bytes changed all over the file: the open, a read of every value and verify() either
    /// fail with a storage error, or open the version before (the change hit a page the last
    /// commit wrote), or give exactly the data written (a free page, a trailer's unused end).
    /// A change to a page the last version reaches is never passed over.
    func testAChangedByteIsACleanError() throws {
        let path = dir.file("sealed")
        let s = try Storage.open(path: path, options: options(testKey))
        let model = try fill(s, 600)
        let r0 = try s.beginRead()
        let live = try TestTables.tablePages(r0).sorted()
        r0.end()
        s.close()
        let original = bytes(path)
        var x: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            x = x &* 6364136223846793005 &+ 1442695040888963407
            return x >> 20
        }
        // (position, whether it must be detected)
        var positions: [(Int, Bool)] = []
        for _ in 0..<80 {
            positions.append((Int(next() % UInt64(original.count)), false))
            // A byte of a page of the table, outside the trailer's unused end.
            let page = Int(live[Int(next() % UInt64(live.count))])
            positions.append((page * encryptedPageSize + Int(next() % UInt64(pageSize + EncryptedTrailer.tagOffset + 16)), true))
        }
        for page in [0, 8] {
            for field in [0, 8, 16, 24, 36, 51] { positions.append((page * encryptedPageSize + pageSize + field, false)) }
        }
        var refused = 0
        var olderVersion = 0
        var same = 0
        let crash = dir.file("changed")
        for (at, mustDetect) in positions {
            var image = original
            image[at] ^= 0x5a
            writeFile(crash, image)
            do throws(StorageError) {
                let t = try Storage.open(path: crash, options: options(testKey, .noSync))
                defer { t.close() }
                let r = try t.beginRead()
                defer { r.end() }
                let got = try TestTables.contents(r, catalog: r.catalog, "t")
                _ = try t.verify()
                if t.latestVersion() == 5 {
                    XCTAssertEqual(got, model, "byte \(at) changed, yet the data read")
                    XCTAssertFalse(mustDetect, "byte \(at) of a page in use changed and nothing noticed")
                    same += 1
                } else {
                    // A damaged meta slot names no version to report, in a plain file too.
                    let slotPage = at / encryptedPageSize == 0 || at / encryptedPageSize == 8
                    XCTAssertTrue(t.recovery != nil || slotPage, "byte \(at): an older version opened without a report")
                    olderVersion += 1
                }
            } catch {
                switch error {
                case .corrupt, .decryption: refused += 1
                default: XCTFail("byte \(at): \(error)")
                }
            }
        }
        print("changed bytes: \(refused) refused, \(olderVersion) opened the version before, \(same) read the data written")
        XCTAssertGreaterThan(refused + olderVersion, positions.count / 3)
    }

    /// A page copied over another (both genuine, sealed with the right key) is refused: the page
    /// number is bound in.
    func testAPageMovedToAnotherNumberIsRefused() throws {
        let path = dir.file("sealed")
        let s = try Storage.open(path: path, options: options(testKey))
        _ = try fill(s, 2000)
        let r = try s.beginRead()
        let pages = try TestTables.tablePages(r).sorted()
        r.end()
        // A last commit that writes none of the table's pages: the open checks the pages the
        // last commit wrote, the read the others.
        let w = try s.beginWrite()
        try TestTables.put(w, "u", 1, [1])
        try w.commit()
        s.close()
        XCTAssertGreaterThan(pages.count, 4)
        var image = bytes(path)
        let from = Int(pages[1]) * encryptedPageSize
        let to = Int(pages[2]) * encryptedPageSize
        image.replaceSubrange(to..<to + encryptedPageSize, with: image[from..<from + encryptedPageSize])
        let moved = dir.file("moved")
        writeFile(moved, image)
        let t = try Storage.open(path: moved, options: options(testKey))
        defer { t.close() }
        let error = assertStorageError({ () throws(StorageError) in
            let r = try t.beginRead()
            defer { r.end() }
            _ = try TestTables.contents(r, catalog: r.catalog, "t")
        }) { if case .corrupt = $0 { return true } else { return false } }
        XCTAssertTrue(error?.message.contains("page \(pages[2]) fails authentication") ?? false, "\(String(describing: error))")
    }

    /// Two handles on one file, each decrypting into memory of its own: every commit of one
    /// is read right by the other, while pages are freed and reused under the same numbers.
    func testTwoHandlesReadEachOthersCommits() throws {
        let path = dir.file("shared")
        let a = try Storage.open(path: path, options: options(testKey, .noSync))
        defer { a.close() }
        let b = try Storage.open(path: path, options: options(testKey, .noSync))
        defer { b.close() }
        var model: [UInt64: [UInt8]] = [:]
        for round in 0..<30 as Range<UInt64> {
            let writer = round % 2 == 0 ? a : b
            let reader = round % 2 == 0 ? b : a
            let w = try writer.beginWrite()
            for k in stride(from: round % 7, to: 700, by: 5) {
                let value = testValue(k &* 31 &+ round, size: Int((k + round) % 500))
                try TestTables.put(w, "t", k, value)
                model[k] = value
            }
            try w.commit()
            let r = try reader.beginRead()
            XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), model, "round \(round)")
            r.end()
        }
        _ = try a.verify()
        _ = try b.verify()
    }

    func testAMemoryOnlyDatabaseWithAKey() throws {
        var o = options(testKey, .memoryOnly)
        o.maxFileSize = 1 << 28
        let s = try Storage.open(path: nil, options: o)
        defer { s.close() }
        let model = try fill(s, 300)
        let r = try s.beginRead()
        XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), model)
        r.end()
    }
}
