// The data file as readers see it: one address range reserved at open, into which the file is
// mapped read-only (MAP_SHARED) as it grows, so a pointer into it stays valid for as long as the
// file is open. Also the per-process record of which pages have had their checksum verified.
// An encrypted file is mapped as it lies on the disk in a second range, and its pages are
// decrypted into the first (memory of this process) the first time they are read at a version.
import CCoveCrypto
import Glibc
import Synchronization

/// The data file mapped read-only at a fixed address, plus the file it was mapped from.
///
/// `@unchecked Sendable`: the mutable state is `mappedBytes` (an atomic, only ever raised, under
/// `growLock`), `knownFileSize` (an atomic, only ever raised) and the `checked` cache (atomics). `base` and the reservation never change after
/// init, and the mapping is read-only, so any thread may read through it; a range is mapped
/// before `mappedBytes` publishes it (release/acquire), and it stays mapped until deinit.
final class PageFile: @unchecked Sendable {
    /// The file the mapping reads and every write goes through.
    let io: any FileIO
    /// The same file when it is encrypted: then `base` is memory of this process holding the
    /// pages decrypted (a page decrypted at the version its trailer names is recorded in
    /// `checked`), and `sealedBase` maps the file as it lies on the disk.
    let crypto: EncryptedFile?
    /// The start of the mapping of an encrypted file's physical pages (nil for a plain file).
    private let sealedBase: UnsafeMutableRawPointer?
    private let sealedReserved: Int
    /// The cipher context and buffer of the decryptions of pages (one at a time per file).
    private let decryption: Mutex<CipherContext>
    /// The start of the reserved range; page `n` is at `base + n * pageSize` once mapped.
    let base: UnsafeMutableRawPointer
    /// The size of the reserved range: the file can never grow beyond it.
    let reservedBytes: Int
    /// How many bytes of the file are mapped at `base`.
    private let mappedBytes = Atomic<Int>(0)
    private let growLock = Mutex<Void>(())
    /// A size the file is known to have at least (0: not asked yet). The file never shrinks
    /// while open, so a commit whose pages fit needs no `fstat`: on file systems with
    /// fine-grained timestamps, asking for the size before every write made each durable
    /// commit's flush also write the inode.
    private let knownFileSize = Atomic<UInt64>(0)
    /// Per page, the low 32 bits of the version whose checksum this process last verified (0:
    /// never). A page is rewritten only under a new version, so a changed header version means
    /// "check again"; a page that never changes is checked once per process.
    private let checked: UnsafeMutablePointer<Atomic<UInt32>>
    private let checkedBytes: Int
    private let systemPageSize: Int

    /// The largest number of pages the reservation can hold.
    var maxPages: UInt64 { UInt64(reservedBytes / pageSize) }
    /// The page of the second meta slot (`MetaSlot.secondSlot`): set once, when the file's
    /// layout is known, before the file is shared.
    var secondSlot: PageNumber = MetaSlot.spreadSecondSlot

    /// The page of meta slot `slot` (0 or 1).
    @inline(__always)
    func slotPage(_ slot: Int) -> PageNumber { slot == 0 ? 0 : secondSlot }

    /// Reserves `reservation` bytes of address space (rounded up to whole pages, and at least
    /// twice the current file size) without mapping anything yet. Where the process may not
    /// have that much address space (`ulimit -v`, a tool such as valgrind that keeps its own),
    /// it takes the largest half, quarter, ... of it that can be reserved, down to twice the
    /// file's size: the file then cannot grow beyond what was reserved (`maxPages`).
    /// - Throws: `.io` if not even twice the file's size can be reserved.
    init(io: any FileIO, reservation: UInt64) throws(StorageError) {
        self.io = io
        let crypto = io as? EncryptedFile
        self.crypto = crypto
        decryption = Mutex(CipherContext())
        let systemPageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        self.systemPageSize = systemPageSize
        let size = try io.size()
        let granule = UInt64(max(systemPageSize, pageSize))
        func rounded(_ n: UInt64) -> UInt64 { (n + granule - 1) / granule * granule }
        let floor = rounded(max(size * 2, UInt64(16 * pageSize)))
        var want = max(rounded(reservation), floor)
        guard want <= UInt64(Int.max / 2) else {
            throw .io("cannot reserve \(want) bytes of address space for '\(io.path)'")
        }
        while true {
            // PROT_NONE + MAP_NORESERVE claims address space only: no memory, no commit charge.
            // The page-check cache, one counter per page, is reserved the same way.
            let slots = Int(want) / pageSize
            let cacheBytes = (slots * MemoryLayout<UInt32>.stride + systemPageSize - 1) / systemPageSize * systemPageSize
            // An encrypted file's pages are decrypted into the range itself, so it is memory
            // (touched pages only), and its physical pages get a range of their own.
            let reserved = mmap(nil, Int(want), crypto == nil ? PROT_NONE : PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            var failure = errno
            if let reserved, reserved != MAP_FAILED {
                let sealedBytes = crypto == nil ? 0 : (slots * encryptedPageSize + systemPageSize - 1) / systemPageSize * systemPageSize
                var sealed: UnsafeMutableRawPointer? = nil
                if sealedBytes > 0 {
                    let s = mmap(nil, sealedBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                    failure = errno
                    if let s, s != MAP_FAILED { sealed = s }
                }
                if sealedBytes == 0 || sealed != nil {
                    let cache = mmap(nil, cacheBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                    failure = errno
                    if let cache, cache != MAP_FAILED {
                        base = reserved
                        reservedBytes = Int(want)
                        sealedBase = sealed
                        sealedReserved = sealedBytes
                        checkedBytes = cacheBytes
                        // Anonymous memory is zero, and a zero `Atomic<UInt32>` is the value 0.
                        checked = cache.bindMemory(to: Atomic<UInt32>.self, capacity: slots)
                        return
                    }
                    if let sealed { munmap(sealed, sealedBytes) }
                }
                munmap(reserved, Int(want))
            }
            guard want > floor, failure == ENOMEM || failure == EINVAL else {
                throw .io("cannot reserve \(want >> 20) MiB of address space for '\(io.path)': \(errnoText(failure))")
            }
            want = max(rounded(want / 2), floor)
        }
    }

    deinit {
        munmap(base, reservedBytes)
        if let sealedBase { munmap(sealedBase, sealedReserved) }
        decryption.withLock { c in if let p = c.pointer { cove_gcm_free(p) } }
        munmap(UnsafeMutableRawPointer(checked), checkedBytes)
    }

    /// Makes sure the first `pages` pages are mapped, mapping whatever the file has grown by.
    /// - Throws: `.corrupt` if the file is shorter than `pages` pages (a meta slot claims pages
    ///   the file does not have), `.noSpace` beyond the reservation, `.io` if mmap fails.
    @inline(__always)
    func ensureMapped(pages: UInt64) throws(StorageError) {
        if UInt64(mappedBytes.load(ordering: .acquiring)) >= pages &* UInt64(pageSize) { return }
        try grow(pages: pages)
    }

    /// What limits the file's size, for the errors that reach it.
    static let sizeLimit = "StorageOptions.maxFileSize, or less where the process's address space is limited"

    /// The error of a file that would need `need` bytes, more than the reservation maps.
    private func beyondReservation(_ need: UInt64) -> StorageError {
        .noSpace("'\(io.path)' would need \(need >> 20) MiB, beyond its mapping reservation of \(reservedBytes >> 20) MiB (\(PageFile.sizeLimit))")
    }

    @inline(never)
    private func grow(pages: UInt64) throws(StorageError) {
        let need = pages &* UInt64(pageSize)
        guard pages <= maxPages else {
            throw beyondReservation(need)
        }
        try growLock.withLock { _ throws(StorageError) in
            let mapped = mappedBytes.load(ordering: .acquiring)
            if UInt64(mapped) >= need { return }
            let fileSize = min(try io.size(), UInt64(reservedBytes))
            guard fileSize >= need else {
                throw .corrupt("'\(io.path)' has \(fileSize / UInt64(pageSize)) pages, fewer than the \(pages) its meta slot records")
            }
            if let sealedBase {
                // The physical pages, from the last whole system page already mapped (as below).
                let mappedEnd = mapped / pageSize * encryptedPageSize
                let start = mappedEnd / systemPageSize * systemPageSize
                let end = Int(fileSize) / pageSize * encryptedPageSize
                let p = mmap(sealedBase + start, end - start, PROT_READ, MAP_SHARED | MAP_FIXED, io.descriptor, off_t(start))
                if p == MAP_FAILED || p != sealedBase + start {
                    throw .io("cannot map '\(io.path)' (\(end) bytes): \(errnoText(errno))")
                }
                mappedBytes.store(Int(fileSize), ordering: .releasing)
                return
            }
            // Remap from the last whole system page already mapped: MAP_FIXED replaces that
            // range with the same file pages in one step, so a concurrent reader never sees it
            // unmapped. Only whole file pages are mapped: the file size is a multiple of 4 KiB.
            let start = mapped / systemPageSize * systemPageSize
            let length = Int(fileSize) - start
            let p = mmap(base + start, length, PROT_READ, MAP_SHARED | MAP_FIXED, io.descriptor, off_t(start))
            if p == MAP_FAILED || p != base + start {
                throw .io("cannot map '\(io.path)' (\(fileSize) bytes): \(errnoText(errno))")
            }
            mappedBytes.store(Int(fileSize), ordering: .releasing)
        }
    }

    /// Grows the file itself (not the mapping) to hold at least `pages` pages, in chunks of an
    /// eighth of its size (256 KiB to 64 MiB) with the space allocated on the device, so the
    /// writes of a commit cannot run out of space half way and no mapped page is ever a hole
    /// past the end of the file.
    /// - Throws: `.noSpace` (device full, or beyond the reservation), `.io`.
    func reserveFile(pages: UInt64) throws(StorageError) {
        let need = pages &* UInt64(pageSize)
        if knownFileSize.load(ordering: .relaxed) >= need { return }
        let size = try io.size()
        if size >= need {
            knownFileSize.store(size, ordering: .relaxed)
            return
        }
        guard pages <= maxPages else {
            throw beyondReservation(need)
        }
        let chunk = min(max(size / 8, 256 << 10), 64 << 20)
        var target = max(need, size + chunk)
        target = (target + UInt64(pageSize) - 1) / UInt64(pageSize) * UInt64(pageSize)
        target = min(target, UInt64(reservedBytes))
        do throws(StorageError) {
            try io.extend(to: target)
            knownFileSize.store(target, ordering: .relaxed)
        } catch .noSpace(_) where target > need {
            // The chunk does not fit but the pages this commit needs may.
            try io.extend(to: need)
            knownFileSize.store(need, ordering: .relaxed)
        }
    }

    /// Shortens the file to `pages` pages (the caller holds the write lock and has the file
    /// to itself). The mapping keeps its range: no reader reaches past the pages in use, and
    /// once the file grows again the range maps the new pages.
    func shorten(toPages pages: UInt64) throws(StorageError) {
        let size = pages &* UInt64(pageSize)
        guard try io.size() > size else { return }
        try io.truncate(to: size)
        knownFileSize.store(size, ordering: .relaxed)
    }

    /// The mapped page `pgno` (the caller knows it is mapped).
    @inline(__always)
    func pointer(_ pgno: PageNumber) -> UnsafeRawPointer {
        UnsafeRawPointer(base + Int(truncatingIfNeeded: pgno) &<< 12)
    }

    /// Starts loading the first `lines` cache lines of page `pgno` of a version whose file has
    /// `limit` pages (nothing for a number outside it).
    @inline(__always)
    func prefetch(_ pgno: PageNumber, lines: Int, limit: UInt64) {
        guard MetaSlot.holdsData(pgno, secondSlot: secondSlot, pageCount: limit) else { return }
        prefetchPage(pointer(pgno), lines: lines)
    }

    /// The mapped page `pgno` of a version whose file has `limit` pages, after checking that
    /// the number is in range and, the first time this process sees the page at this version,
    /// its checksum. `maxVersion` is the version being read: no reachable page can be newer.
    /// - Throws: `.corrupt` naming the page.
    /// An encrypted file's page is decrypted here the first time this process reads it at the
    /// version its trailer names (the trailer's clear version is what `checked` is compared with).
    @inline(__always)
    func checkedPage(_ pgno: PageNumber, limit: UInt64, maxVersion: UInt64) throws(StorageError) -> UnsafeRawPointer {
        guard MetaSlot.holdsData(pgno, secondSlot: secondSlot, pageCount: limit) else { throw outOfRange(pgno, limit: limit) }
        let p = pointer(pgno)
        let v = sealedBase == nil ? PageHeader.version(p) : sealedVersion(pgno)
        if checked[Int(truncatingIfNeeded: pgno)].load(ordering: .acquiring) == UInt32(truncatingIfNeeded: v),
           v <= maxVersion, v != 0 {
            return p
        }
        try checkSlow(p, pgno, maxVersion: maxVersion)
        return p
    }

    /// The version in the clear trailer of an encrypted file's page `pgno` (mapped).
    @inline(__always)
    private func sealedVersion(_ pgno: PageNumber) -> UInt64 {
        UInt64(littleEndian: sealedBase.unsafelyUnwrapped.loadUnaligned(
            fromByteOffset: Int(truncatingIfNeeded: pgno) &* encryptedPageSize &+ pageSize &+ EncryptedTrailer.versionOffset, as: UInt64.self))
    }

    /// Page `pgno` as the file holds it now, unchecked (recovery, verify() and the written-page
    /// list check it themselves); an encrypted file's page is decrypted when the copy in memory
    /// is not of the version on the disk, and not recorded as checked.
    /// - Throws: `.corrupt` for a page outside the mapping, or an encrypted page that does not
    ///   authenticate.
    func unverifiedPage(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        let p = pointer(pgno)
        guard let crypto else { return p }
        guard pgno < UInt64(mappedBytes.load(ordering: .acquiring) / pageSize) else {
            throw .corrupt("'\(io.path)': page \(pgno) is outside the file")
        }
        try decryption.withLock { context throws(StorageError) in
            _ = try decryptIfStale(pgno, into: p, crypto, &context)
        }
        return p
    }

    /// Decrypts physical page `pgno` from the mapping into `p` unless `p` holds it already at the
    /// version the trailer names (another thread has just decrypted it); returns that version.
    /// The decryption lock held. No thread reads the copy in memory while it is replaced: a page
    /// changes on the disk only once no version that reaches it is read any more.
    private func decryptIfStale(_ pgno: PageNumber, into p: UnsafeRawPointer, _ crypto: EncryptedFile,
                                _ context: inout CipherContext) throws(StorageError) -> UInt64 {
        let v = sealedVersion(pgno)
        let slot = Int(truncatingIfNeeded: pgno)
        if v != 0 && checked[slot].load(ordering: .acquiring) == UInt32(truncatingIfNeeded: v) { return v }
        checked[slot].store(0, ordering: .releasing)
        if context.pointer == nil { context.pointer = try crypto.newContext(sealing: false) }
        let sealed = UnsafeRawPointer(sealedBase.unsafelyUnwrapped + Int(truncatingIfNeeded: pgno) &* encryptedPageSize)
        try crypto.open(sealed, pgno, into: UnsafeMutableRawPointer(mutating: p), context: context.pointer.unsafelyUnwrapped)
        return v
    }

    /// Copies page `pgno` as the file holds it now into `buffer` (a meta slot, which changes
    /// under its number at every other commit): from the mapping, or decrypted from the disk.
    /// - Throws: `.corrupt` for an encrypted page that does not authenticate, `.io`.
    func copyPage(_ pgno: PageNumber, into buffer: UnsafeMutableRawPointer) throws(StorageError) {
        if crypto == nil {
            buffer.copyMemory(from: pointer(pgno), byteCount: pageSize)
            return
        }
        let n = try io.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: pageSize), at: pgno &* UInt64(pageSize))
        if n < pageSize { throw .corrupt("'\(io.path)': page \(pgno) is outside the file") }
    }

    @inline(never)
    private func outOfRange(_ pgno: PageNumber, limit: UInt64) -> StorageError {
        .corrupt("'\(io.path)': page \(pgno) is a meta slot or outside the file's \(limit) pages")
    }

    @inline(never)
    private func checkSlow(_ p: UnsafeRawPointer, _ pgno: PageNumber, maxVersion: UInt64) throws(StorageError) {
        let slot = Int(truncatingIfNeeded: pgno)
        guard let crypto else {
            try verifyPage(p, pgno, maxVersion: maxVersion)
            checked[slot].store(UInt32(truncatingIfNeeded: PageHeader.version(p)), ordering: .releasing)
            return
        }
        try decryption.withLock { context throws(StorageError) in
            let v = try decryptIfStale(pgno, into: p, crypto, &context)
            try verifyPage(p, pgno, maxVersion: maxVersion)
            checked[slot].store(UInt32(truncatingIfNeeded: v), ordering: .releasing)
        }
    }

    /// Checks a page's checksum and that its version is neither 0 nor newer than `maxVersion`,
    /// without consulting the cache (verify() and recovery use this).
    func verifyPage(_ p: UnsafeRawPointer, _ pgno: PageNumber, maxVersion: UInt64) throws(StorageError) {
        let stored = PageHeader.storedChecksum(p)
        let computed = PageHeader.computeChecksum(p)
        guard stored == computed else {
            throw .corrupt("'\(io.path)': page \(pgno) fails its checksum (stored \(hex(stored)), computed \(hex(computed)))")
        }
        let v = PageHeader.version(p)
        guard v != 0, v <= maxVersion else {
            throw .corrupt("'\(io.path)': page \(pgno) carries version \(v), not in 1...\(maxVersion)")
        }
    }

    /// Forgets that `pgno` was checked (its contents are about to be replaced by this process).
    @inline(__always)
    func forgetChecked(_ pgno: PageNumber) {
        checked[Int(truncatingIfNeeded: pgno)].store(0, ordering: .relaxed)
    }

    /// Records that this process wrote `pgno` at `version` itself, with the bytes at
    /// `contents`, so it need not check it (nor, when the file is encrypted, decrypt it: the
    /// bytes are copied to where the page is read from).
    @inline(__always)
    func markChecked(_ pgno: PageNumber, version: UInt64, contents: UnsafeRawPointer) {
        if crypto != nil {
            UnsafeMutableRawPointer(mutating: pointer(pgno)).copyMemory(from: contents, byteCount: pageSize)
        }
        checked[Int(truncatingIfNeeded: pgno)].store(UInt32(truncatingIfNeeded: version), ordering: .releasing)
    }
}

/// A libcrypto cipher context, made when first needed. `@unchecked Sendable`: used under a
/// mutex only.
struct CipherContext: @unchecked Sendable {
    var pointer: UnsafeMutableRawPointer?
}

/// `0x1234abcd`.
func hex(_ v: UInt32) -> String {
    let s = String(v, radix: 16)
    return "0x" + String(repeating: "0", count: max(0, 8 - s.count)) + s
}
