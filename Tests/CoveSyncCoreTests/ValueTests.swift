// Values: the checks their parts get, their text forms, and an equality and order that are total
// (NaN equals itself, 0.0 and -0.0 differ, types order before values).
import XCTest
import CoveSyncCore

final class ValueTests: XCTestCase {
    func testScalarsCheckTheirInput() throws {
        XCTAssertNoThrow(try SyncDate(seconds: -5, nanoseconds: -3))
        XCTAssertNoThrow(try SyncDate(seconds: 0, nanoseconds: -3))
        XCTAssertThrowsError(try SyncDate(seconds: 5, nanoseconds: -3))
        XCTAssertThrowsError(try SyncDate(seconds: 5, nanoseconds: 1_000_000_000))
        let oid = try SyncObjectId(hex: "5F1B2C3D4E5F60718293A4B5")
        XCTAssertEqual(oid.hex, "5f1b2c3d4e5f60718293a4b5")
        XCTAssertEqual(try SyncObjectId(bytes: oid.bytes), oid)
        XCTAssertThrowsError(try SyncObjectId(hex: "5f1b2c3d4e5f60718293a4b"))
        XCTAssertThrowsError(try SyncObjectId(hex: "5f1b2c3d4e5f60718293a4bz"))
        let uuid = try SyncUUID(text: "12345678-9ABC-def0-1234-56789abcdef0")
        XCTAssertEqual(uuid.text, "12345678-9abc-def0-1234-56789abcdef0")
        XCTAssertEqual(try SyncUUID(bytes: uuid.bytes), uuid)
        XCTAssertThrowsError(try SyncUUID(text: "12345678-9abc-def0-1234_56789abcdef0"))
        for good in ["1", "-1.5", ".5", "1e10", "+2.5E-3", "NaN", "-Inf"] {
            XCTAssertNoThrow(try SyncDecimal128(good), good)
        }
        for bad in ["", "e5", "1e", "--1", "1.2.3", "nan", "1 "] {
            XCTAssertThrowsError(try SyncDecimal128(bad), bad)
        }
        XCTAssertTrue(SyncName.isValid("Dog_2"))
        for bad in ["", "2dog", "dög", "a-b", String(repeating: "a", count: 64)] {
            XCTAssertFalse(SyncName.isValid(bad), bad)
            XCTAssertThrowsError(try SyncObjectRef(className: bad, key: .int(1)))
        }
    }

    func testEqualityIsAnEquivalence() {
        XCTAssertEqual(SyncValue.double(.nan), .double(-Double.nan))
        XCTAssertEqual(Set<SyncValue>([.double(.nan), .double(Double(nan: 7, signaling: false))]).count, 1)
        XCTAssertNotEqual(SyncValue.double(0.0), .double(-0.0))
        XCTAssertNotEqual(SyncValue.int(1), .double(1))
        // Canonically equivalent strings with other bytes are different values.
        XCTAssertNotEqual(SyncValue.string("\u{E9}"), .string("e\u{301}"))
        XCTAssertEqual(Set<SyncValue>([.string("\u{E9}"), .string("e\u{301}")]).count, 2)
    }

    func testOrderIsTotal() throws {
        let values: [SyncValue] = [
            .link(try SyncObjectRef(className: "Dog", key: .int(1))), .decimal128(try SyncDecimal128("1")),
            .uuid(try SyncUUID(bytes: [UInt8](repeating: 1, count: 16))), .objectId(try SyncObjectId(bytes: [UInt8](repeating: 1, count: 12))),
            .date(try SyncDate(seconds: 1, nanoseconds: 0)), .data([1]), .data([]), .string("b"), .string("a"),
            .double(.nan), .double(.infinity), .double(0), .double(-0.0), .double(-.infinity), .int(5), .int(-5),
            .bool(true), .bool(false), .null,
        ]
        let sorted = values.sorted()
        XCTAssertEqual(sorted, values.reversed())
        for a in values {
            for b in values {
                // Exactly one of <, ==, > holds.
                XCTAssertEqual([a < b, a == b, b < a].filter { $0 }.count, 1, "\(a) \(b)")
            }
        }
    }
}
