// The error of Cove's Swift API. Its codes are the statuses of include/cove.h, so the C layer and
// the Python binding translate it without a table of their own.
import CoveStorage

/// An error from Cove: a code (the same numbers as the C API's statuses) and a message that names
/// the problem.
public struct CoveError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of failure this is. Raw values are the C API's `COVE_ERR_` numbers.
    public enum Code: Int32, Sendable, CaseIterable {
        case invalidArgument = 1
        case wrongType = 2
        case notFound = 3
        case outOfRange = 4
        case notInWrite = 5
        case alreadyInWrite = 6
        case inWrite = 7
        case invalidated = 8
        case frozen = 9
        case readOnly = 10
        case closed = 11
        case schema = 12
        case migrationRequired = 13
        case duplicateKey = 14
        case querySyntax = 15
        case io = 16
        case noSpace = 17
        case corrupt = 18
        case locked = 19
        case tooManyVersions = 20
        case callback = 21
        case format = 22
        case `internal` = 23
        case wrongThread = 24
        case decryption = 25
        case sync = 26
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The storage layer's error, with its message kept whole.
    public init(_ error: StorageError) {
        switch error {
        case .io(let m): self.init(.io, m)
        case .noSpace(let m): self.init(.noSpace, m)
        case .corrupt(let m): self.init(.corrupt, m)
        case .format(let m): self.init(.format, m)
        case .locked(let m): self.init(.locked, m)
        case .tooManyVersions(let m): self.init(.tooManyVersions, m)
        case .closed(let m): self.init(.closed, m)
        case .invalidArgument(let m): self.init(.invalidArgument, m)
        case .readOnly(let m): self.init(.readOnly, m)
        case .decryption(let m): self.init(.decryption, m)
        case .internal(let m): self.init(.internal, m)
        }
    }
}

extension CoveError.Code {
    /// The C API's name of this status, e.g. "COVE_ERR_CORRUPT".
    public var statusName: String {
        var name = "COVE_ERR_"
        for c in "\(self)" {
            if c.isUppercase { name += "_" }
            name += c.uppercased()
        }
        return name
    }
}
