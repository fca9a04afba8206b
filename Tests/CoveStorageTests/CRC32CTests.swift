// CRC32C against the standard check value and chaining, and the instruction against the tables.
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

    /// The instruction (when this processor has it) and the software tables agree on every
    /// length and alignment, chained or not.
    func testHardwareAndSoftwareAgree() {
        var rng = SeededRandom(seed: 5)
        let bytes = (0..<9000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        bytes.withUnsafeBytes { all in
            for start in 0..<9 {
                for count in [0, 1, 7, 8, 9, 15, 16, 63, 4079, 4080, 4081, 4092, 4096, 8160, 8991 - start] {
                    let range = UnsafeRawBufferPointer(rebasing: all[start..<(start + count)])
                    XCTAssertEqual(crc32c(range), crc32cSoftware(range), "start \(start) count \(count)")
                    XCTAssertEqual(crc32c(range, seed: 0xDEAD_BEEF), crc32cSoftware(range, seed: 0xDEAD_BEEF))
                }
            }
        }
        XCTAssertEqual(Array("123456789".utf8).withUnsafeBytes { crc32cSoftware($0) }, 0xE306_9283)
        print("CRC32C by \(crc32cInHardware ? "the SSE 4.2 instruction" : "software tables")")
    }
}
