// The one error type of the storage layer. Each case maps onto one status of the C API
// (include/cove.h), so the layers above translate it without losing the message.

/// An error raised by the storage engine. The message names the file, page or operation.
public enum StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A read, write, flush or extend failed (COVE_ERR_IO).
    case io(String)
    /// The device is full (COVE_ERR_NO_SPACE).
    case noSpace(String)
    /// The file is not a Cove file, or a checksum, offset or structure does not hold (COVE_ERR_CORRUPT).
    case corrupt(String)
    /// The file was written by a newer format version (COVE_ERR_FORMAT).
    case format(String)
    /// The write lock could not be taken in the configured time (COVE_ERR_LOCKED).
    case locked(String)
    /// More versions are pinned than the configured maximum (COVE_ERR_TOO_MANY_VERSIONS).
    case tooManyVersions(String)
    /// The handle was closed, or poisoned by an earlier I/O failure (COVE_ERR_CLOSED).
    case closed(String)
    /// A caller's mistake: a write outside a write transaction, a second writer on one handle...
    case invalidArgument(String)
    /// The file is opened read-only (COVE_ERR_READ_ONLY).
    case readOnly(String)
    /// An encrypted file opened without its key or with another one, or a plain file opened
    /// with a key (COVE_ERR_DECRYPTION).
    case decryption(String)
    /// A broken internal invariant; never expected (COVE_ERR_INTERNAL).
    case `internal`(String)

    public var message: String {
        switch self {
        case .io(let m), .noSpace(let m), .corrupt(let m), .format(let m), .locked(let m),
             .tooManyVersions(let m), .closed(let m), .invalidArgument(let m), .readOnly(let m),
             .decryption(let m), .internal(let m):
            return m
        }
    }

    public var description: String { message }
}
