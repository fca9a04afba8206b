// Fractional list positions: keys always fall strictly between their neighbours, two nodes never
// make the same key, keys stay short when inserting at either end, and malformed keys are refused.
import XCTest
import CoveSyncCore

final class ListPositionTests: XCTestCase {
    func testRandomInsertsStayStrictlyBetweenNeighbours() throws {
        var random = SeededRandom(seed: 11)
        var keys: [ListPosition] = []
        for _ in 0..<2000 {
            let at = random.int(0...keys.count)
            let before = at > 0 ? keys[at - 1] : nil
            let after = at < keys.count ? keys[at] : nil
            let p = try ListPosition.between(before, after, node: UInt64(random.int(0...5)) &* 0x1234_5678_9ABC)
            if let before { XCTAssertLessThan(before, p) }
            if let after { XCTAssertLessThan(p, after) }
            XCTAssertEqual(try ListPosition(p.key), p)
            keys.insert(p, at: at)
        }
        XCTAssertEqual(Set(keys).count, keys.count)
        XCTAssertEqual(keys, keys.sorted())
        XCTAssertLessThan(keys.map(\.key.count).max() ?? 0, 200)
    }

    func testKeysStayShortAtEitherEnd() throws {
        var last: ListPosition? = nil
        var first: ListPosition? = nil
        for _ in 0..<1000 {
            let appended = try ListPosition.between(last, nil, node: 9)
            if let last { XCTAssertLessThan(last, appended) }
            last = appended
            let prepended = try ListPosition.between(nil, first, node: 9)
            if let first { XCTAssertLessThan(prepended, first) }
            first = prepended
        }
        XCTAssertLessThan(last?.key.count ?? 0, 40)
        XCTAssertLessThan(first?.key.count ?? 0, 40)
    }

    func testConcurrentInsertsAtOnePlaceDifferAndOrderByNode() throws {
        let a = position("V"), b = position("W")
        let p1 = try ListPosition.between(a, b, node: 1)
        let p2 = try ListPosition.between(a, b, node: 2)
        XCTAssertNotEqual(p1, p2)
        XCTAssertLessThan(p1, p2)
        XCTAssertEqual(try ListPosition.between(a, b, node: 1), p1)
        // Room remains between the two for a later insert.
        let p3 = try ListPosition.between(p1, p2, node: 1)
        XCTAssertLessThan(p1, p3)
        XCTAssertLessThan(p3, p2)
    }

    func testMalformedKeysAndOrderAreRefused() {
        for bad in ["", "V0", "a-b", "é", String(repeating: "V", count: ListPosition.maxLength + 1)] {
            XCTAssertThrowsError(try ListPosition(bad), bad)
        }
        XCTAssertThrowsError(try ListPosition.between(position("W"), position("V"), node: 1))
        XCTAssertThrowsError(try ListPosition.between(position("W"), position("W"), node: 1))
        // Keys at the length limit have no room left for a suffix.
        let long = position(String(repeating: "z", count: ListPosition.maxLength))
        XCTAssertThrowsError(try ListPosition.between(long, nil, node: 1)) { error in
            XCTAssertEqual((error as? SyncError)?.code, .invalidValue)
        }
    }
}
