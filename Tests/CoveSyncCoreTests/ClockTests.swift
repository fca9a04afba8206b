// Hybrid logical clocks: the order of readings, their text and byte forms, monotonic readings
// when the wall clock steps back, receipts that move the clock past a peer's, and the drift limit.
import XCTest
import CoveSyncCore

final class ClockTests: XCTestCase {
    func testOrderIsWallThenCounterThenNode() {
        XCTAssertLessThan(clock(1, 9, 9), clock(2, 0, 0))
        XCTAssertLessThan(clock(2, 0, 9), clock(2, 1, 0))
        XCTAssertLessThan(clock(2, 1, 3), clock(2, 1, 4))
        XCTAssertEqual(clock(2, 1, 4), clock(2, 1, 4))
    }

    func testTextAndBytesRoundTripAndSortAsClocks() throws {
        var random = SeededRandom(seed: 1)
        var clocks: [SyncClock] = [.zero, try SyncClock(wall: SyncClock.maxWall, counter: .max, node: .max)]
        for _ in 0..<200 {
            clocks.append(try SyncClock(wall: UInt64.random(in: 0...SyncClock.maxWall, using: &random),
                                        counter: random.chance(50) ? 0 : UInt32.random(in: 0...UInt32.max, using: &random),
                                        node: random.next()))
        }
        for c in clocks {
            XCTAssertEqual(c.text.utf8.count, SyncClock.textLength)
            XCTAssertEqual(try SyncClock(text: c.text), c)
            XCTAssertEqual(try SyncClock(text: c.text.uppercased()), c)
            XCTAssertEqual(c.bytes.count, SyncClock.byteCount)
            XCTAssertEqual(try SyncClock(bytes: c.bytes), c)
        }
        for (a, b) in zip(clocks, clocks.dropFirst()) {
            XCTAssertEqual(a < b, a.text < b.text, "\(a) \(b)")
            XCTAssertEqual(a < b, a.bytes.lexicographicallyPrecedes(b.bytes), "\(a) \(b)")
        }
        XCTAssertEqual(clock(0x18b_cf2a_1c00, 3, 42).text, "018bcf2a1c00-00000003-000000000000002a")
    }

    func testMalformedTextAndBytesAreRefused() {
        for text in ["", "018bcf2a1c00-00000003-000000000000002", "018bcf2a1c00_00000003_000000000000002a",
                     "018bcf2a1c0g-00000003-000000000000002a", " 18bcf2a1c00-00000003-000000000000002a",
                     "018bcf2a1c00-00000003-000000000000002a0", "+18bcf2a1c00-00000003-000000000000002a"] {
            XCTAssertThrowsError(try SyncClock(text: text)) { error in
                XCTAssertEqual((error as? SyncError)?.code, .invalidClock, text)
            }
        }
        XCTAssertThrowsError(try SyncClock(bytes: [UInt8](repeating: 0, count: 17)))
        XCTAssertThrowsError(try SyncClock(wall: SyncClock.maxWall + 1, counter: 0, node: 0))
    }

    func testNowIsMonotonicWhenTheWallClockStepsBack() throws {
        let source = SyncClockSource(node: 7)
        let a = try source.now(wall: 1000)
        XCTAssertEqual(a, clock(1000, 0, 7))
        let b = try source.now(wall: 1000)
        XCTAssertEqual(b, clock(1000, 1, 7))
        let c = try source.now(wall: 400)  // the wall clock stepped back
        XCTAssertEqual(c, clock(1000, 2, 7))
        let d = try source.now(wall: 1001)
        XCTAssertEqual(d, clock(1001, 0, 7))
        XCTAssertEqual(source.latest, d)
    }

    func testReceiveMovesPastTheRemoteClock() throws {
        let source = SyncClockSource(node: 1)
        _ = try source.now(wall: 1000)
        // A remote clock ahead in wall time (within the drift) pulls the local one forward.
        let r = try source.receive(clock(1500, 4, 2), wall: 1200)
        XCTAssertEqual(r, clock(1500, 5, 1))
        XCTAssertGreaterThan(try source.now(wall: 1200), clock(1500, 4, 2))
        // Equal walls: past both counters.
        let s = try source.receive(clock(1500, 9, 3), wall: 1200)
        XCTAssertEqual(s, clock(1500, 10, 1))
        // The local wall clock ahead of everything: counter restarts.
        XCTAssertEqual(try source.receive(clock(1600, 9, 3), wall: 2000), clock(2000, 0, 1))
    }

    func testRemoteClockTooFarAheadIsRefused() throws {
        let source = SyncClockSource(node: 1, maxDrift: 1000)
        _ = try source.now(wall: 5000)
        XCTAssertNoThrow(try source.receive(clock(6000, 0, 2), wall: 5000))
        let before = source.latest
        XCTAssertThrowsError(try source.receive(clock(6002, 0, 2), wall: 5001)) { error in
            XCTAssertEqual((error as? SyncError)?.code, .clockDrift)
            XCTAssertTrue("\(error)".contains("1001 ms ahead"), "\(error)")
        }
        XCTAssertEqual(source.latest, before)
    }

    func testCounterExhaustionMovesToTheNextMillisecond() throws {
        let source = SyncClockSource(node: 1, after: clock(10, .max, 1))
        XCTAssertEqual(try source.now(wall: 5), clock(11, 0, 1))
        let last = SyncClockSource(node: 1, after: try SyncClock(wall: SyncClock.maxWall, counter: .max, node: 1))
        XCTAssertThrowsError(try last.now(wall: 5))
        XCTAssertThrowsError(try SyncClockSource(node: 1).now(wall: SyncClock.maxWall + 1))
    }

    func testSystemWallIsPlausible() {
        // After 2020-01-01 and before the limit.
        XCTAssertGreaterThan(SyncClockSource.systemWall(), 1_577_836_800_000)
        XCTAssertLessThan(SyncClockSource.systemWall(), SyncClock.maxWall)
    }

    func testConcurrentReadingsAreDistinct() async throws {
        let source = SyncClockSource(node: 3)
        let readings = try await withThrowingTaskGroup(of: [SyncClock].self) { group in
            for _ in 0..<4 {
                group.addTask { try (0..<500).map { _ in try source.now(wall: 77) } }
            }
            var all: [SyncClock] = []
            for try await part in group { all += part }
            return all
        }
        XCTAssertEqual(Set(readings).count, 2000)
    }
}
