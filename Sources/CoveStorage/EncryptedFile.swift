// Encryption at rest: a `FileIO` that shows the engine the same file of 4096-byte pages it
// always sees, and keeps each page on the disk sealed with AES-256-GCM in a physical page of
// 4160 bytes (the cipher text, then a clear trailer). docs/FORMAT.md ("Encrypted files") is the
// byte-by-byte reference; PageFile reads encrypted pages through a decrypted copy of its own.
import CCoveCrypto
import Glibc
import Synchronization

/// The size of one page on the disk of an encrypted file: the 4096 bytes of cipher text, then
/// the 64-byte trailer.
let encryptedPageSize = 4160

/// The layout of the trailer after each page's cipher text, in the clear:
///
///     offset size field
///     0      8    magic "CoveEnc1"
///     8      8    key check: the first 8 bytes of HMAC-SHA-256(key, "cove key check 1")
///     16     8    the page's version (its header's version field, bytes 8..<16 of the plain page)
///     24     12   nonce (random, new at every write)
///     36     16   GCM tag over the cipher text, with the page number (8 bytes, little-endian)
///                 and bytes 0..<24 of the trailer as associated data
///     52     12   zero
enum EncryptedTrailer {
    static let magicOffset = 0
    static let keyCheckOffset = 8
    static let versionOffset = 16
    static let nonceOffset = 24
    static let tagOffset = 36
    static let size = 64
    /// "CoveEnc1" read as a little-endian u64.
    static let magic: UInt64 = 0x3163_6E45_6576_6F43
}

/// The key of an encrypted file as the cipher uses it: derived from the user's 64 bytes.
public struct EncryptionKey: Sendable, Equatable {
    /// The AES-256 key for pages.
    let pageKey: [UInt8]
    /// What every page's trailer carries, so that a wrong key is told from a damaged page.
    let check: UInt64

    /// The number of bytes a user's key has (as Realm's).
    public static let byteCount = 64

    /// Derives the keys from the user's `bytes`.
    /// - Throws: `.invalidArgument` unless there are exactly 64 bytes; `.internal` if
    ///   libcrypto fails.
    public init(_ bytes: [UInt8]) throws(StorageError) {
        guard bytes.count == EncryptionKey.byteCount else {
            throw .invalidArgument("an encryption key has \(EncryptionKey.byteCount) bytes, not \(bytes.count)")
        }
        func mac(_ label: String) throws(StorageError) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            let data = Array(label.utf8)
            let ok = bytes.withUnsafeBufferPointer { k in
                data.withUnsafeBufferPointer { d in
                    out.withUnsafeMutableBufferPointer { o in
                        cove_hmac_sha256(k.baseAddress, Int32(k.count), d.baseAddress, d.count, o.baseAddress)
                    }
                }
            }
            guard ok == 1 else { throw .internal("libcrypto could not derive the page key (HMAC-SHA-256)") }
            return out
        }
        pageKey = try mac("cove page key 1")
        let c = try mac("cove key check 1")
        check = c.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
    }
}

/// The pages whose trailers tell an encrypted file: the two meta slots'.
let encryptedProbePages: [UInt64] = [0, MetaSlot.spreadSecondSlot]

/// The trailer's magic and key check of the first of the meta slots' physical pages that has
/// the magic, or nil when neither has (not an encrypted file). Reads the raw file.
func encryptedTrailerCheck(_ io: any FileIO) throws(StorageError) -> UInt64? {
    for pgno in encryptedProbePages {
        let bytes = try Storage.readBytes(io, count: 16, at: EncryptedFile.physical(pgno) + UInt64(pageSize))
        guard bytes.count == 16 else { continue }
        let (magic, check) = bytes.withUnsafeBytes {
            (UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)), UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        if magic == EncryptedTrailer.magic { return check }
    }
    return nil
}

/// A data file whose pages are sealed on the disk: what `Storage` opens when a key is given.
///
/// Offsets and sizes are those of the plain file (page `n` at `n * 4096`); on the disk page `n`
/// is at `n * 4160`. Reads and writes are of whole pages (a read may take part of one). A
/// physical page of zeros (space the file was extended by and never written) reads as a page
/// of zeros, as in a plain file.
///
/// `@unchecked Sendable`: the inner file is Sendable, the keys are immutable, and the writer's
/// scratch memory is behind a mutex.
public final class EncryptedFile: FileIO, @unchecked Sendable {
    /// The file on the disk.
    let inner: any FileIO
    let key: EncryptionKey
    /// The writer's cipher context and buffer of sealed pages.
    private let writeState: Mutex<WriteState>

    /// `@unchecked Sendable`: the pointers are this file's own, used under the mutex only.
    private struct WriteState: @unchecked Sendable {
        var context: UnsafeMutableRawPointer?
        var buffer: UnsafeMutableRawPointer
        var capacity: Int
    }

    public var path: String { inner.path }
    public var descriptor: Int32 { inner.descriptor }

    /// Wraps `inner` (a new file, or an encrypted one).
    /// - Throws: `.decryption` when the file's pages carry another key's check; `.internal`
    ///   if libcrypto cannot make a context.
    public init(wrapping inner: any FileIO, key: EncryptionKey) throws(StorageError) {
        self.inner = inner
        self.key = key
        let capacity = 16 * encryptedPageSize
        writeState = Mutex(WriteState(context: nil, buffer: UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 64),
                                      capacity: capacity))
        if let check = try encryptedTrailerCheck(inner), check != key.check {
            throw wrongKey()
        }
    }

    deinit {
        writeState.withLock { s in
            if let c = s.context { cove_gcm_free(c) }
            s.buffer.deallocate()
        }
    }

    func wrongKey() -> StorageError {
        .decryption("the encryption key given does not open '\(path)' (it was encrypted with another key)")
    }

    /// The physical offset of logical page `pgno`.
    @inline(__always)
    static func physical(_ pgno: UInt64) -> UInt64 { pgno &* UInt64(encryptedPageSize) }

    public func size() throws(StorageError) -> UInt64 {
        try inner.size() / UInt64(encryptedPageSize) * UInt64(pageSize)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        guard buffer.count > 0 else { return 0 }
        let sealed = UnsafeMutableRawPointer.allocate(byteCount: encryptedPageSize, alignment: 64)
        let plain = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: 64)
        defer {
            sealed.deallocate()
            plain.deallocate()
        }
        let context = try newContext(sealing: false)
        defer { cove_gcm_free(context) }
        var done = 0
        while done < buffer.count {
            let at = offset + UInt64(done)
            let pgno = at / UInt64(pageSize)
            let within = Int(at % UInt64(pageSize))
            let n = try inner.read(into: UnsafeMutableRawBufferPointer(start: sealed, count: encryptedPageSize), at: EncryptedFile.physical(pgno))
            if n < encryptedPageSize { break }
            try open(sealed, pgno, into: plain, context: context)
            let take = min(pageSize - within, buffer.count - done)
            (buffer.baseAddress! + done).copyMemory(from: plain + within, byteCount: take)
            done += take
        }
        return done
    }

    /// A cipher context with the page key, for sealing or for opening pages, for one thread's
    /// use at a time.
    func newContext(sealing: Bool) throws(StorageError) -> UnsafeMutableRawPointer {
        let c = key.pageKey.withUnsafeBufferPointer { cove_gcm_new($0.baseAddress, sealing ? 1 : 0) }
        guard let c else { throw .internal("libcrypto could not make a cipher context") }
        return c
    }

    /// Decrypts physical page `pgno` at `sealed` into `plain`, checking its tag.
    /// - Throws: `.decryption` for another key's page, `.corrupt` for a page that is not an
    ///   encrypted page or whose bytes changed after they were written.
    func open(_ sealed: UnsafeRawPointer, _ pgno: UInt64, into plain: UnsafeMutableRawPointer,
              context: UnsafeMutableRawPointer) throws(StorageError) {
        let trailer = sealed + pageSize
        let magic = UInt64(littleEndian: trailer.loadUnaligned(fromByteOffset: EncryptedTrailer.magicOffset, as: UInt64.self))
        if magic != EncryptedTrailer.magic {
            if isZero(sealed, encryptedPageSize) {
                memset(plain, 0, pageSize)
                return
            }
            throw .corrupt("'\(path)': page \(pgno) is not an encrypted page (its trailer is damaged)")
        }
        let check = UInt64(littleEndian: trailer.loadUnaligned(fromByteOffset: EncryptedTrailer.keyCheckOffset, as: UInt64.self))
        guard check == key.check else {
            // Every page of a file carries the same check: one of another key means the key is
            // wrong, unless this page alone is damaged.
            throw .corrupt("'\(path)': page \(pgno) carries the check of another key (damaged, or written with another key)")
        }
        let t = trailer.assumingMemoryBound(to: UInt8.self)
        let ok = withAAD(pgno, trailer) { aad in
            cove_gcm_open(context, t + EncryptedTrailer.nonceOffset, aad, 32, sealed.assumingMemoryBound(to: UInt8.self),
                          plain.assumingMemoryBound(to: UInt8.self), Int32(pageSize), t + EncryptedTrailer.tagOffset)
        }
        guard ok == 1 else {
            throw .corrupt("'\(path)': page \(pgno) fails authentication (its bytes changed after they were written, or it was moved from another page)")
        }
        let version = trailer.loadUnaligned(fromByteOffset: EncryptedTrailer.versionOffset, as: UInt64.self)
        guard plain.loadUnaligned(fromByteOffset: PageHeader.versionOffset, as: UInt64.self) == version else {
            throw .corrupt("'\(path)': page \(pgno) holds another version than its trailer names")
        }
    }

    /// The associated data of page `pgno`: its number, then the trailer's first 24 bytes.
    @inline(__always)
    private func withAAD<R>(_ pgno: UInt64, _ trailer: UnsafeRawPointer, _ body: (UnsafePointer<UInt8>) -> R) -> R {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { aad in
            let p = UnsafeMutableRawPointer(aad.baseAddress!)
            p.storeBytes(of: pgno.littleEndian, as: UInt64.self)
            (p + 8).copyMemory(from: trailer, byteCount: 24)
            return body(UnsafePointer(aad.baseAddress!))
        }
    }

    /// Seals plain page `pgno` at `plain` into the physical page at `sealed`, with the 12 random
    /// bytes at `nonce`.
    private func seal(_ plain: UnsafeRawPointer, _ pgno: UInt64, into sealed: UnsafeMutableRawPointer,
                      nonce: UnsafeRawPointer, context: UnsafeMutableRawPointer) throws(StorageError) {
        let trailer = sealed + pageSize
        memset(trailer, 0, EncryptedTrailer.size)
        trailer.storeBytes(of: EncryptedTrailer.magic.littleEndian, toByteOffset: EncryptedTrailer.magicOffset, as: UInt64.self)
        trailer.storeBytes(of: key.check.littleEndian, toByteOffset: EncryptedTrailer.keyCheckOffset, as: UInt64.self)
        trailer.storeBytes(of: plain.loadUnaligned(fromByteOffset: PageHeader.versionOffset, as: UInt64.self),
                           toByteOffset: EncryptedTrailer.versionOffset, as: UInt64.self)
        let t = trailer.assumingMemoryBound(to: UInt8.self)
        (trailer + EncryptedTrailer.nonceOffset).copyMemory(from: nonce, byteCount: 12)
        let ok = withAAD(pgno, trailer) { aad in
            cove_gcm_seal(context, t + EncryptedTrailer.nonceOffset, aad, 32, plain.assumingMemoryBound(to: UInt8.self),
                          sealed.assumingMemoryBound(to: UInt8.self), Int32(pageSize), t + EncryptedTrailer.tagOffset)
        }
        guard ok == 1 else { throw .internal("libcrypto could not encrypt page \(pgno) of '\(path)'") }
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        guard offset % UInt64(pageSize) == 0, bytes.count % pageSize == 0 else {
            throw .internal("an encrypted file is written in whole pages (\(bytes.count) bytes at offset \(offset))")
        }
        let count = bytes.count / pageSize
        try withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: max(count, 1)) { pages throws(StorageError) in
            for i in 0..<count { pages[i] = bytes.baseAddress! + i * pageSize }
            try writePages(UnsafeBufferPointer(rebasing: pages[0..<count]), at: offset)
        }
    }

    /// Seals the pages into one buffer and writes it with one call (16 pages a call at most).
    public func writePages(_ pages: UnsafeBufferPointer<UnsafeRawPointer>, at offset: UInt64) throws(StorageError) {
        guard offset % UInt64(pageSize) == 0 else {
            throw .internal("an encrypted file is written in whole pages (offset \(offset))")
        }
        let first = offset / UInt64(pageSize)
        try writeState.withLock { s throws(StorageError) in
            if s.context == nil { s.context = try newContext(sealing: true) }
            var i = 0
            var nonces = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                          UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                          UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            while i < pages.count {
                let n = min(16, pages.count - i)
                // One call to the random source for the run's nonces (it costs about as much as
                // sealing half a page).
                try withUnsafeMutableBytes(of: &nonces) { r throws(StorageError) in
                    let bytes = r.baseAddress!.assumingMemoryBound(to: UInt8.self)
                    guard cove_random_bytes(bytes, Int32(12 * n)) == 1 else {
                        throw .internal("libcrypto could not give random bytes for nonces")
                    }
                    for k in 0..<n {
                        try seal(pages[i + k], first + UInt64(i + k), into: s.buffer + k * encryptedPageSize,
                                 nonce: r.baseAddress! + 12 * k, context: s.context.unsafelyUnwrapped)
                    }
                }
                try inner.write(UnsafeRawBufferPointer(start: s.buffer, count: n * encryptedPageSize),
                                at: EncryptedFile.physical(first + UInt64(i)))
                i += n
            }
        }
    }

    public func sync() throws(StorageError) { try inner.sync() }

    public func extend(to size: UInt64) throws(StorageError) {
        try inner.extend(to: EncryptedFile.physical((size + UInt64(pageSize) - 1) / UInt64(pageSize)))
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        try inner.truncate(to: EncryptedFile.physical((size + UInt64(pageSize) - 1) / UInt64(pageSize)))
    }

    public func close() { inner.close() }
}

/// Whether the `count` bytes at `p` are all zero.
func isZero(_ p: UnsafeRawPointer, _ count: Int) -> Bool {
    var i = 0
    while i + 8 <= count {
        if p.loadUnaligned(fromByteOffset: i, as: UInt64.self) != 0 { return false }
        i += 8
    }
    while i < count {
        if p.load(fromByteOffset: i, as: UInt8.self) != 0 { return false }
        i += 1
    }
    return true
}
