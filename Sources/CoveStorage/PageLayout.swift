// The layout every page shares (docs/FORMAT.md is the byte-by-byte reference), and the reference
// by which one page points at another. A reference carries the version that wrote the page, so
// recovery can walk exactly the pages of the last commit and check them (see Storage commit).

/// A page's number: its byte offset in the file divided by `pageSize`. Pages 0 and 8 are the meta
/// slots (0 and 1 in files made before format 5); 0 is never a valid reference to a tree page and
/// marks "no page".
public typealias PageNumber = UInt64

/// The fixed page size of every Cove file.
public let pageSize = 4096

/// The longest value a tree or a table column stores (4 GiB - 1): an overflow chain's length
/// limit.
@usableFromInline let maxStoredValueLength = Int(UInt32.max)

/// The header at the start of every page but the meta slots.
///
///     offset size field
///     0      4    CRC32C of bytes [4, pageSize)
///     4      1    page type (PageType)
///     5      1    flags (per type; B+tree pages keep their level here, 0 = leaf)
///     6      2    entry count (per type)
///     8      8    version: the commit version that wrote this page
///     16     ...  body
public enum PageHeader {
    public static let checksumOffset = 0
    public static let typeOffset = 4
    public static let flagsOffset = 5
    public static let countOffset = 6
    public static let versionOffset = 8
    public static let size = 16

    /// The checksum a page should carry: CRC32C of everything after the checksum field.
    @inlinable
    public static func computeChecksum(_ page: UnsafeRawPointer) -> UInt32 {
        crc32c(UnsafeRawBufferPointer(start: page + 4, count: pageSize - 4))
    }

    /// Stamps the version and checksum of a page about to be written.
    @inlinable
    public static func seal(_ page: UnsafeMutableRawPointer, version: UInt64) {
        page.storeBytes(of: version.littleEndian, toByteOffset: versionOffset, as: UInt64.self)
        let crc = computeChecksum(UnsafeRawPointer(page))
        page.storeBytes(of: crc.littleEndian, toByteOffset: checksumOffset, as: UInt32.self)
    }

    @inlinable
    public static func storedChecksum(_ page: UnsafeRawPointer) -> UInt32 {
        UInt32(littleEndian: page.loadUnaligned(fromByteOffset: checksumOffset, as: UInt32.self))
    }

    @inlinable
    public static func type(_ page: UnsafeRawPointer) -> UInt8 {
        page.load(fromByteOffset: typeOffset, as: UInt8.self)
    }

    @inlinable
    public static func version(_ page: UnsafeRawPointer) -> UInt64 {
        UInt64(littleEndian: page.loadUnaligned(fromByteOffset: versionOffset, as: UInt64.self))
    }
}

/// What a page holds. Numbers are part of the file format: never reuse one.
public enum PageType: UInt8, Sendable {
    case meta = 1
    case branch = 2          // B+tree interior page: separator keys, child references, subtree counts
    case leaf = 3            // B+tree leaf page: keys and values (or overflow references)
    case overflow = 4        // continuation of a large value
    case clusterLeaf = 5     // a table's leaf: object keys and one packed column per property
}

/// A reference to a page: its number and the version that wrote it. Stored in parents and in the
/// meta slot's roots. `pgno == 0` means "no page" (an empty tree).
public struct PageRef: Hashable, Sendable {
    public var pgno: PageNumber
    public var version: UInt64

    @inlinable
    public init(pgno: PageNumber, version: UInt64) {
        self.pgno = pgno
        self.version = version
    }

    public static let none = PageRef(pgno: 0, version: 0)
    public var isNone: Bool { pgno == 0 }
}

/// The root of a B+tree as its owner records it: the root page and the number of entries.
/// 24 bytes on disk: pgno, version, count, each a little-endian u64.
public struct TreeRoot: Hashable, Sendable {
    public var page: PageRef
    public var count: UInt64

    @inlinable
    public init(page: PageRef, count: UInt64) {
        self.page = page
        self.count = count
    }

    public static let empty = TreeRoot(page: .none, count: 0)
    public static let encodedSize = 24

    public func encode(into p: UnsafeMutableRawPointer) {
        p.storeBytes(of: page.pgno.littleEndian, toByteOffset: 0, as: UInt64.self)
        p.storeBytes(of: page.version.littleEndian, toByteOffset: 8, as: UInt64.self)
        p.storeBytes(of: count.littleEndian, toByteOffset: 16, as: UInt64.self)
    }

    public static func decode(from p: UnsafeRawPointer) -> TreeRoot {
        TreeRoot(page: PageRef(pgno: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
                               version: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))),
                 count: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
    }
}
