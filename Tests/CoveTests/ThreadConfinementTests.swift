// A live realm belongs to the thread that opened it, as in realm-swift: its use from another
// thread fails with `.wrongThread` (reads, writes, its objects and results), frozen copies are
// read anywhere, and the bindings' move of an idle realm to the calling thread.
import Dispatch
import Synchronization
import XCTest
@_spi(CoveBindings) @testable import Cove
@testable import CoveCore

final class ThreadConfinementTests: CoveTestCase {
    private func open() throws -> Realm {
        let schema = try Schema(jsonText: #"{"Dog": {"properties": {"name": "string", "age": "int"}}}"#)
        return try Realm(configuration: .init(path: "\(folder)/t.cove", durability: .noSync, schema: schema, schemaVersion: 1))
    }

    /// Runs `body` on a thread of its own and waits for it.
    private func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue(label: "other").async {
            body()
            done.signal()
        }
        done.wait()
    }

    private static func code(_ body: () throws -> Void) -> CoveError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? CoveError)?.code
        }
    }

    func testALiveRealmRefusesOtherThreads() throws {
        let realm = try open()
        defer { realm.close() }
        var rex: DynamicObject!
        try realm.write { rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex")), ("age", .int(3))]) }
        let results = try realm.objects("Dog")
        let frozen = try results.checkedFreeze()
        let seen = Handoff(value: (realm, rex!, results, frozen))
        let codes = Mutex<[CoveError.Code?]>([])
        let frozenNames = Mutex<[Value]>([])
        onAnotherThread {
            let (realm, rex, results, frozen) = seen.value
            let got = [
                Self.code { _ = try realm.objects("Dog") },
                Self.code { try realm.beginWrite() },
                Self.code { try realm.refresh() },
                Self.code { _ = try rex.value(forKey: "name") },
                Self.code { _ = try results.checkedCount() },
            ]
            codes.withLock { $0 = got }
            frozenNames.withLock { $0 = (try? frozen.elements().map { try $0.value(forKey: "name") }) ?? [] }
        }
        XCTAssertEqual(codes.withLock { $0 }, Array(repeating: .wrongThread, count: 5))
        XCTAssertEqual(frozenNames.withLock { $0 }, [.string("Rex")], "a frozen copy is read on any thread")
        // The realm's own thread goes on as before.
        XCTAssertEqual(try results.checkedCount(), 1)
        XCTAssertEqual(try rex.value(forKey: "age"), .int(3))
    }

    func testAnIdleRealmMovesToAnotherThreadAndAWritingOneDoesNot() throws {
        let realm = try open()
        defer { realm.close() }
        let handoff = Handoff(value: realm)
        try realm.beginWrite()
        let during = Mutex<CoveError.Code?>(nil)
        onAnotherThread {
            during.withLock { $0 = Self.code { try handoff.value.moveToCurrentThread() } }
        }
        XCTAssertEqual(during.withLock { $0 }, .wrongThread, "a realm in a write stays with its thread")
        try realm.dynamicCreate("Dog", values: [("name", .string("Max"))])
        try realm.commitWrite()

        let count = Mutex<UInt64?>(nil)
        onAnotherThread {
            count.withLock { $0 = try? {
                try handoff.value.moveToCurrentThread()
                return try handoff.value.objectCount("Dog")
            }() }
        }
        XCTAssertEqual(count.withLock { $0 }, 1, "an idle realm moved and was read there")
        XCTAssertEqual(Self.code { _ = try realm.objectCount("Dog") }, .wrongThread, "it belongs to the other thread now")
        try realm.moveToCurrentThread()
        XCTAssertEqual(try realm.objectCount("Dog"), 1)
    }

    func testAnotherThreadMayCloseTheRealm() throws {
        let realm = try open()
        let handoff = Handoff(value: realm)
        onAnotherThread { handoff.value.close() }
        XCTAssertTrue(realm.isClosed)
        XCTAssertEqual(Self.code { _ = try realm.objects("Dog") }, .closed)
    }
}
