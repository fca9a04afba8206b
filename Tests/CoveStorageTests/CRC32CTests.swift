// CRC32C against the standard check value and chaining.
import XCTest
@testable import CoveStorage

final class CRC32CTests: XCTestCase {
    func testCheckValue() {
        let bytes = Array("123456789".utf8)
        XCTAssertEqual(bytes.withUnsafeBytes { crc32c($0) }, 0xE306_9283)
    }

    func testChainingEqualsWhole() {
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let whole = bytes.withUnsafeBytes { crc32c($0) }
        let first = bytes[0..<333].withUnsafeBytes { crc32c($0) }
        let chained = bytes[333...].withUnsafeBytes { crc32c($0, seed: first) }
        XCTAssertEqual(whole, chained)
    }
}
