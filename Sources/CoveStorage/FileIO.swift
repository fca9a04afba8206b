// The one protocol through which the storage engine reaches the operating system for its data
// file: positioned reads and writes, flush, extend, size, close. `PosixFile` is the real thing;
// `FaultInjectingFile` wraps it to simulate power loss and failing devices in the tests.

import Glibc

/// How the storage asks for its data file.
public enum FileOpenMode: Sendable, Equatable {
    /// Read and write, creating the file (empty) if it does not exist.
    case readWrite
    /// Read only; the file must exist.
    case readOnly
    /// A new anonymous file in the directory `path`, removed from the directory at once so that
    /// it disappears when closed (memory-only databases).
    case temporary
}

/// A data file as the storage engine uses it.
///
/// All writes of a commit go through `write`, then one `sync`; the engine maps the file
/// read-only through `descriptor`, so an implementation must write to that same descriptor's
/// file (the page cache keeps the mapping and `write` coherent). Implementations are called
/// from one writer at a time, but `size` may be called from any thread.
public protocol FileIO: AnyObject, Sendable {
    /// The path the file was opened with (for messages).
    var path: String { get }

    /// The descriptor the engine maps read-only.
    var descriptor: Int32 { get }

    /// Reads up to `buffer.count` bytes at `offset`.
    /// - Returns: the number of bytes read, short only at the end of the file.
    /// - Throws: `.io` naming the file and the system's reason.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int

    /// Writes all of `bytes` at `offset`, extending the file if needed.
    /// - Throws: `.noSpace` when the device is full, `.io` otherwise.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError)

    /// Writes `pages`, each `pageSize` bytes, one after another from `offset`: a commit's run
    /// of consecutive pages, from where each lies in memory.
    /// - Throws: as `write`.
    func writePages(_ pages: UnsafeBufferPointer<UnsafeRawPointer>, at offset: UInt64) throws(StorageError)

    /// Makes every completed write durable (`fdatasync`).
    /// - Throws: `.io`; after a failed sync nothing written since the previous sync is known
    ///   to be durable.
    func sync() throws(StorageError)

    /// Grows the file to at least `size` bytes with space allocated on the device, so that the
    /// writes that follow cannot fail for lack of space (`PosixFile` also writes the new range
    /// with zeros, so that those writes change no file-system metadata).
    /// - Throws: `.noSpace` when the device is full, `.io` otherwise.
    func extend(to size: UInt64) throws(StorageError)

    /// The current size of the file in bytes.
    func size() throws(StorageError) -> UInt64

    /// Shortens the file to `size` bytes (pages past the last one in use, given back once the
    /// commit that stopped using them is durable).
    /// - Throws: `.io` naming the file and the system's reason.
    func truncate(to size: UInt64) throws(StorageError)

    /// Called once when the storage closes. The descriptor itself may stay open until the object
    /// is released: the mapping or a thread finishing a snapshot can still refer to it.
    func close()
}

/// Opens the data file for a `Storage`; `StorageOptions.fileFactory` replaces the default
/// (`PosixFile.open`) in tests. For `.temporary`, `path` is the directory to create it in.
public typealias FileIOFactory = @Sendable (_ path: String, _ mode: FileOpenMode) throws(StorageError) -> any FileIO

extension FileIO {
    /// One `write` per page.
    public func writePages(_ pages: UnsafeBufferPointer<UnsafeRawPointer>, at offset: UInt64) throws(StorageError) {
        try writePages(pages, from: 0, at: offset)
    }

    /// Writes what is left of `pages` after the first `done` bytes, one `write` per page.
    func writePages(_ pages: UnsafeBufferPointer<UnsafeRawPointer>, from done: Int, at offset: UInt64) throws(StorageError) {
        for (i, page) in pages.enumerated() {
            let start = i * pageSize
            if start + pageSize <= done { continue }
            let skip = max(0, done - start)
            try write(UnsafeRawBufferPointer(start: page + skip, count: pageSize - skip), at: offset + UInt64(start + skip))
        }
    }
}

/// The text of an `errno` value ("No such file or directory").
@usableFromInline
func errnoText(_ code: Int32) -> String {
    guard let s = strerror(code) else { return "errno \(code)" }
    return String(cString: s)
}

/// The storage error for a failed system call: `.noSpace` for ENOSPC and EDQUOT, `.io` otherwise.
func systemError(_ code: Int32, _ what: String) -> StorageError {
    if code == ENOSPC || code == EDQUOT {
        return .noSpace("\(what): \(errnoText(code))")
    }
    return .io("\(what): \(errnoText(code))")
}

/// A data file reached through POSIX calls.
public final class PosixFile: FileIO {
    public let path: String
    public let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Opens (or creates) the file at `path`; see `FileOpenMode`.
    /// - Throws: `.io` naming the path and the system's reason (a missing directory, no permission).
    public static func open(path: String, mode: FileOpenMode) throws(StorageError) -> any FileIO {
        switch mode {
        case .readWrite:
            let fd = retryOnInterrupt { Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
            if fd < 0 { throw systemError(errno, "cannot open '\(path)'") }
            return PosixFile(path: path, descriptor: fd)
        case .readOnly:
            let fd = retryOnInterrupt { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
            if fd < 0 { throw systemError(errno, "cannot open '\(path)'") }
            return PosixFile(path: path, descriptor: fd)
        case .temporary:
            var template = Array("\(path)/cove-memory-XXXXXX".utf8CString)
            let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            if fd < 0 { throw systemError(errno, "cannot create a temporary file in '\(path)'") }
            let name = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            unlink(name)
            return PosixFile(path: "(memory-only, in \(path))", descriptor: fd)
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw systemError(errno, "cannot read '\(path)' at offset \(offset)")
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        var done = 0
        while done < bytes.count {
            let n = pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw systemError(errno, "cannot write '\(path)' at offset \(offset + UInt64(done))")
            }
            done += n
        }
    }

    /// One `pwritev` (the rest page by page if it comes back short).
    public func writePages(_ pages: UnsafeBufferPointer<UnsafeRawPointer>, at offset: UInt64) throws(StorageError) {
        // A commit's runs are at most 16 pages, far below the system's limit on vectors; their
        // vectors live on the stack.
        let n = withUnsafeTemporaryAllocation(of: iovec.self, capacity: pages.count) { vectors in
            for (i, page) in pages.enumerated() {
                vectors[i] = iovec(iov_base: UnsafeMutableRawPointer(mutating: page), iov_len: pageSize)
            }
            return pwritev(descriptor, vectors.baseAddress, Int32(pages.count), off_t(offset))
        }
        if n < 0 && errno != EINTR {
            throw systemError(errno, "cannot write '\(path)' at offset \(offset)")
        }
        if n == pages.count * pageSize { return }
        try writePages(pages, from: max(n, 0), at: offset)
    }

    public func sync() throws(StorageError) {
        if retryOnInterrupt({ fdatasync(descriptor) }) != 0 {
            throw systemError(errno, "cannot flush '\(path)'")
        }
    }

    /// Grows the file to `size` bytes, its new blocks allocated and written with zeros: a
    /// block the file system allocated but never wrote (an unwritten extent) changes the file's
    /// metadata at its first write, which the next `fdatasync` then writes and waits for apart
    /// from the data (on ext4 about 100 µs more for each commit into fresh space; a commit
    /// updating random objects of a freshly loaded file took 270-320 µs instead of 170-180).
    public func extend(to size: UInt64) throws(StorageError) {
        let current = try self.size()
        if current >= size { return }
        // posix_fallocate allocates the blocks, so later writes into the range cannot fail for
        // lack of space. It returns the error instead of setting errno.
        var rc = posix_fallocate(descriptor, off_t(current), off_t(size - current))
        while rc == EINTR { rc = posix_fallocate(descriptor, off_t(current), off_t(size - current)) }
        // A file system without fallocate: the zeros written below extend the file and
        // allocate its blocks. Either way a full device surfaces as ENOSPC here or from a write
        // at commit (writes go through pwrite, never through the mapping), never as SIGBUS.
        if rc != 0 && rc != EOPNOTSUPP && rc != EINVAL {
            throw systemError(rc, "cannot extend '\(path)' to \(size) bytes")
        }
        try writeZeros(from: current, to: size)
    }

    /// Writes zeros over `[from, to)`, a megabyte at a time.
    private func writeZeros(from: UInt64, to: UInt64) throws(StorageError) {
        guard to > from else { return }
        let zeros = UnsafeMutableRawBufferPointer.allocate(byteCount: Int(min(to - from, 1 << 20)), alignment: pageSize)
        zeros.initializeMemory(as: UInt8.self, repeating: 0)
        defer { zeros.deallocate() }
        var at = from
        while at < to {
            let n = Int(min(UInt64(zeros.count), to - at))
            try write(UnsafeRawBufferPointer(rebasing: zeros[0..<n]), at: at)
            at += UInt64(n)
        }
    }

    public func size() throws(StorageError) -> UInt64 {
        var st = stat()
        if fstat(descriptor, &st) != 0 { throw systemError(errno, "cannot stat '\(path)'") }
        return UInt64(st.st_size)
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        if retryOnInterrupt({ ftruncate(descriptor, off_t(size)) }) != 0 {
            throw systemError(errno, "cannot shorten '\(path)' to \(size) bytes")
        }
    }

    public func close() {
        // The descriptor is closed in deinit: the mapping and other threads may still hold this
        // object, and a closed number could be reused by an unrelated open meanwhile.
    }
}

/// Runs a system call again while it fails with EINTR.
@inline(__always)
func retryOnInterrupt(_ call: () -> Int32) -> Int32 {
    while true {
        let rc = call()
        if rc >= 0 || errno != EINTR { return rc }
    }
}
