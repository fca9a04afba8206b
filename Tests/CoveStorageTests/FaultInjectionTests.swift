// The fault-injecting file layer against the commit protocol: (a) power loss at every write point
// of a scripted workload, with unflushed writes dropped, reordered or torn, each crash image then
// opened with the real file layer; (b) EIO and ENOSPC on the Nth write, flush or extend.
import XCTest
import Glibc
import Synchronization
@testable import CoveStorage
import CoveStorageTesting

/// A deterministic workload: commit `i` makes the same changes every run.
struct ScriptedWorkload {
    var model: [UInt64: [UInt8]] = [:]

    /// Applies commit `i`'s changes to `w` and the model.
    mutating func apply(_ i: Int, to w: WriteTransaction) throws(StorageError) {
        var x = UInt64(i + 1) &* 0x2545_F491_4F6C_DD1D
        func next() -> UInt64 {
            x ^= x >> 12
            x ^= x << 25
            x ^= x >> 27
            return x &* 0x2545_F491_4F6C_DD1D
        }
        let changes = 3 + Int(next() % 25)
        for _ in 0..<changes {
            let key = next() % 150
            if next() % 5 == 0 {
                try TestTables.remove(w, "t", key)
                model[key] = nil
            } else {
                // Now and then a value large enough for overflow pages (and file growth).
                let size = next() % 10 == 0 ? 3000 + Int(next() % 60000) : Int(next() % 200)
                let value = testValue(next(), size: size)
                try TestTables.put(w, "t", key, value)
                model[key] = value
            }
        }
        w.setHistoryRecord(Array("commit \(i)".utf8))
    }
}

/// Holds the fault-injecting file a factory made.
final class FileBox: Sendable {
    let files = Mutex<[FaultInjectingFile]>([])
    var last: FaultInjectingFile? { files.withLock { $0.last } }
    func add(_ f: FaultInjectingFile) { files.withLock { $0.append(f) } }
}

final class FaultInjectionTests: StorageTestCase {
    /// (a) Power loss at every write point: the reopened file verifies, and holds exactly the
    /// last flushed version or the one being committed.
    func testPowerLossAtEveryWritePoint() throws {
        try powerLossAtEveryWritePoint(key: nil)
    }

    /// (a) for an encrypted file: a torn page fails authentication where a plain one fails its
    /// checksum, and recovery falls back the same way.
    func testPowerLossAtEveryWritePointEncrypted() throws {
        try powerLossAtEveryWritePoint(key: testKey)
    }

    private func powerLossAtEveryWritePoint(key: [UInt8]?) throws {
        let (s, file) = try openWatched("traced", recordTrace: true, key: key)
        var workload = ScriptedWorkload()
        // Per version: the trace length before its commit began and after it returned, and
        // the table it holds.
        var commits: [(before: Int, after: Int, version: UInt64, model: [UInt64: [UInt8]])] = []
        let created = file.trace.count
        commits.append((0, created, 1, [:]))
        for i in 0..<14 {
            let before = file.trace.count
            let w = try s.beginWrite()
            try workload.apply(i, to: w)
            let v = try w.commit()
            commits.append((before, file.trace.count, v, workload.model))
        }
        s.close()
        let trace = file.trace
        let models = Dictionary(uniqueKeysWithValues: commits.map { ($0.version, $0.model) })

        let crash = dir.file("crash")
        var rng = SystemRandomNumberGenerator()
        var seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        func next() -> UInt64 {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return seed >> 29
        }
        var outcomes: [String: Int] = [:]
        var images = 0
        for point in created...trace.count {
            let synced = commits.last { $0.after <= point }!.version
            let inFlight = commits.first { $0.before < point && point < $0.after }?.version
            for variant in 0..<2 {
                let image = FaultInjectingFile.crashImage(trace: trace, at: point, fate: { _, _ in
                    switch next() % 8 {
                    case 0, 1: return .lost
                    case 2: return .torn(sectorMask: next() << 32 | next())
                    default: return .kept
                    }
                }, order: { $0.shuffled() })
                images += 1
                let context = "point \(point) of \(trace.count), variant \(variant), seed \(seed)"
                guard let reopened = openCrashImage(image, at: crash, context, synced: synced, inFlight: inFlight, key: key) else { continue }
                let v = reopened.latestVersion()
                outcomes[v == synced ? "last flushed" : "in flight", default: 0] += 1
                do {
                    _ = try reopened.verify()
                    let r = try reopened.beginRead()
                    XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), models[v] ?? [:], context)
                    if v > 1 { XCTAssertEqual(try r.historyRecord(v), Array("commit \(v - 2)".utf8), context) }
                    r.end()
                    if variant == 1 && point % 3 == 0 {
                        // Commit on top of the recovered version, and reopen.
                        let w = try reopened.beginWrite()
                        try TestTables.put(w, "t", 1_000_000, [42])
                        try w.commit()
                        _ = try reopened.verify()
                        reopened.close()
                        var options = TestTables.options(.full)
                        options.encryptionKey = key
                        let again = try Storage.open(path: crash, options: options)
                        XCTAssertEqual(again.latestVersion(), v + 1, context)
                        _ = try again.verify()
                        again.close()
                    }
                } catch {
                    XCTFail("\(context): \(error)")
                }
                reopened.close()
            }
        }
        print("power loss: \(images) crash images over \(trace.count) trace entries: \(outcomes)")
        XCTAssertGreaterThan(outcomes["in flight"] ?? 0, 0)
        XCTAssertGreaterThan(outcomes["last flushed"] ?? 0, 0)
    }

    /// A commit whose pages fit in the file does not ask for its size: on file systems with
    /// fine-grained timestamps an `fstat` before the writes makes the flush write the inode
    /// too, which cost a third of a durable commit. The file is still grown when it must be.
    func testCommitsAskForTheFileSizeOnlyToGrowIt() throws {
        let (s, file) = try openWatched("sizes")
        defer { s.close() }
        var workload = ScriptedWorkload()
        for i in 0..<40 {
            let w = try s.beginWrite()
            try workload.apply(i, to: w)
            try w.commit()
        }
        let counts = file.counts
        XCTAssertGreaterThan(counts.extends, 1, "the workload grows the file")
        // Opening asks a few times, and each growth twice (to extend, then to map): not once
        // per commit.
        XCTAssertLessThan(file.sizeQueries, 20, "\(file.sizeQueries) size queries for 40 commits and \(counts.extends) extends")
        _ = try s.verify()
    }

    /// (b) EIO or ENOSPC on the Nth write, flush or extend: the commit fails with that error,
    /// the handle is poisoned, and the reopened file holds the last good version intact.
    func testFailuresOnTheNthWriteFlushOrExtend() throws {
        // How many calls of each kind the workload makes.
        let reference = dir.file("reference")
        let box = FileBox()
        var options = TestTables.options(.full)
        options.fileFactory = FaultInjectingFile.factory(created: { box.add($0) })
        do {
            let s = try Storage.open(path: reference, options: options)
            var workload = ScriptedWorkload()
            for i in 0..<10 {
                let w = try s.beginWrite()
                try workload.apply(i, to: w)
                try w.commit()
            }
            s.close()
        }
        let counts = try XCTUnwrap(box.last).counts
        XCTAssertGreaterThan(counts.extends, 1)
        var cases = 0
        for (op, total) in [(FaultInjectingFile.Operation.write, counts.writes), (.sync, counts.syncs), (.extend, counts.extends)] {
            let stride = max(1, total / 40)
            for n in Swift.stride(from: 1, through: total, by: stride) {
                cases += 1
                let path = dir.file("faulty")
                removeFile(path)
                let error: StorageError = n % 2 == 0 ? .io("injected EIO") : .noSpace("injected ENOSPC")
                var o = TestTables.options(.full)
                // A full device fails every extend (a one-off ENOSPC is retried with the exact size).
                let persistent = op == .extend || n % 3 == 0
                o.fileFactory = FaultInjectingFile.factory(faults: [.init(operation: op, nth: n, error: error, persistent: persistent)])
                let context = "\(op) #\(n)"
                var good: (version: UInt64, model: [UInt64: [UInt8]]) = (1, [:])
                var failed = false
                do {
                    let s: Storage
                    do {
                        s = try Storage.open(path: path, options: o)
                    } catch {
                        // The fault hit the creation of the file.
                        XCTAssertEqual(error, error == .io("injected EIO") ? .io("injected EIO") : .noSpace("injected ENOSPC"), context)
                        continue
                    }
                    var workload = ScriptedWorkload()
                    for i in 0..<10 {
                        let w = try s.beginWrite()
                        try workload.apply(i, to: w)
                        do {
                            let v = try w.commit()
                            good = (v, workload.model)
                        } catch {
                            XCTAssertEqual(error, error == .io("injected EIO") ? .io("injected EIO") : .noSpace("injected ENOSPC"), context)
                            failed = true
                            assertStorageError({ () throws(StorageError) in _ = try s.beginWrite() }) {
                                if case .closed(let m) = $0 { return m.contains("failed commit") } else { return false }
                            }
                            assertStorageError({ () throws(StorageError) in _ = try s.beginRead() }) {
                                if case .closed = $0 { return true } else { return false }
                            }
                            break
                        }
                    }
                    s.close()
                } catch {
                    XCTFail("\(context): \(error)")
                }
                XCTAssertTrue(failed, "\(context): no commit failed")
                do {
                    let s = try Storage.open(path: path, options: TestTables.options(.full))
                    XCTAssertEqual(s.latestVersion(), good.version, context)
                    _ = try s.verify()
                    let r = try s.beginRead()
                    XCTAssertEqual(try TestTables.contents(r, catalog: r.catalog, "t"), good.model, context)
                    r.end()
                    s.close()
                } catch {
                    XCTFail("\(context): reopen: \(error)")
                }
            }
        }
        print("fault injection: \(cases) cases (\(counts.writes) writes, \(counts.syncs) flushes, \(counts.extends) extends per run)")
    }
}
