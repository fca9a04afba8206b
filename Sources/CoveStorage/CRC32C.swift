// CRC32C (Castagnoli), the checksum of every page and meta slot. With the processor's CRC32C
// instruction (SSE 4.2) when it has one, eight bytes an instruction, three streams at once over
// a page: a 4 KiB page in about a fifth of a microsecond. Otherwise slicing-by-8 in software, about 1-2 GB/s. Both give the same value.
import CCoveCPU

/// Whether this processor's CRC32C instruction is used (checked once).
@usableFromInline
let crc32cInHardware: Bool = cove_crc32c_available() != 0

/// CRC32C of a byte range, continuing from `seed` (pass the previous result to chain ranges).
@inlinable
public func crc32c(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
    guard let base = bytes.baseAddress else { return seed }
    if crc32cInHardware {
        if bytes.count >= 3 * Int(COVE_CRC32C_BLOCK) {
            return ~cove_crc32c_update_3way(~seed, base, bytes.count, crc32cShiftTable)
        }
        return ~cove_crc32c_update(~seed, base, bytes.count)
    }
    return crc32cSoftware(bytes, seed: seed)
}

/// For `cove_crc32c_update_3way`: the CRC32C register after COVE_CRC32C_BLOCK zero bytes, for
/// each value of each of its four bytes (4 x 256 entries). Built once, the first time a long
/// range is checksummed by the instruction, from the 32 registers of a single bit each (the
/// update is linear); never freed.
@usableFromInline
nonisolated(unsafe) let crc32cShiftTable: UnsafePointer<UInt32> = {
    let table = UnsafeMutablePointer<UInt32>.allocate(capacity: 4 * 256)
    let zeros = [UInt8](repeating: 0, count: Int(COVE_CRC32C_BLOCK))
    let bits: [UInt32] = (0..<32).map { bit in
        zeros.withUnsafeBytes { z in cove_crc32c_update(1 << UInt32(bit), z.baseAddress!, z.count) }
    }
    for k in 0..<4 {
        for v in 0..<256 {
            var x: UInt32 = 0
            for j in 0..<8 where v & (1 << j) != 0 { x ^= bits[8 * k + j] }
            table[k * 256 + v] = x
        }
    }
    return UnsafePointer(table)
}()

/// CRC32C of a byte range by slicing-by-8, the fallback (and the tests' reference).
@inlinable
func crc32cSoftware(_ bytes: UnsafeRawBufferPointer, seed: UInt32 = 0) -> UInt32 {
    var crc = ~seed
    var i = 0
    let n = bytes.count
    guard let base = bytes.baseAddress else { return seed }
    let t = CRC32CTable.shared
    while n - i >= 8 {
        let lo = base.loadUnaligned(fromByteOffset: i, as: UInt32.self).littleEndian ^ crc
        let hi = base.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self).littleEndian
        crc = t[7 * 256 + Int(lo & 0xff)] ^ t[6 * 256 + Int((lo >> 8) & 0xff)]
            ^ t[5 * 256 + Int((lo >> 16) & 0xff)] ^ t[4 * 256 + Int(lo >> 24)]
            ^ t[3 * 256 + Int(hi & 0xff)] ^ t[2 * 256 + Int((hi >> 8) & 0xff)]
            ^ t[1 * 256 + Int((hi >> 16) & 0xff)] ^ t[Int(hi >> 24)]
        i += 8
    }
    while i < n {
        crc = t[Int((crc ^ UInt32(base.load(fromByteOffset: i, as: UInt8.self))) & 0xff)] ^ (crc >> 8)
        i += 1
    }
    return ~crc
}

/// The eight 256-entry tables of slicing-by-8, built once.
@usableFromInline
enum CRC32CTable {
    @usableFromInline
    static let shared: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = (c & 1) != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            table[i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 {
                let prev = table[(k - 1) * 256 + i]
                table[k * 256 + i] = table[Int(prev & 0xff)] ^ (prev >> 8)
            }
        }
        return table
    }()
}
