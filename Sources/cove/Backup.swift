// `cove backup FILE COPY`: a compacted copy of a file's newest version in a new file, taken
// while other programs may go on writing (the library's writeCopy).
import ArgumentParser
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compacted copy of a Cove file's newest version to a new file, while other programs may keep writing.",
        discussion: """
        The copy of an encrypted file (its key in COVE_ENCRYPTION_KEY) is encrypted with the same key, \
        unless --copy-key-from names another variable holding the copy's key, or --decrypt asks for \
        a plain copy. A plain file's copy can be encrypted with --copy-key-from.
        """)

    @Argument(help: "The Cove file to copy.")
    var file: String

    @Argument(help: "The new file (it must not exist).")
    var copy: String

    @Option(help: ArgumentHelp("The environment variable holding the copy's key (128 hexadecimal digits).", valueName: "variable"))
    var copyKeyFrom: String?

    @Flag(help: "Write a plain copy of an encrypted file.")
    var decrypt = false

    @Option(help: "Print the result as \(OutputMode.names) (default: a line naming both files and their sizes in use).")
    var format: OutputMode?

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            if decrypt && copyKeyFrom != nil { throw CoveError(.invalidArgument, "--decrypt and --copy-key-from ask for different copies: give one") }
            var key = decrypt ? nil : try environmentKey()
            if let name = copyKeyFrom {
                guard let given = try environmentKey(name) else { throw CoveError(.invalidArgument, "--copy-key-from: \(name) is not set") }
                key = given
            }
            try realm.writeCopy(toFile: copy, encryptionKey: key)
            let from = try realm.fileSpace()
            let copied = try Realm(configuration: .init(path: copy, readOnly: true, encryptionKey: key))
            defer { copied.close() }
            let to = try copied.fileSpace()
            let text = "\(copy): a copy of \(file) at version \(try realm.version), \(to.usedBytes) bytes in use (\(file): \(from.usedBytes))"
            report(text, [JSONMember("file", .string(file)), JSONMember("copy", .string(copy)),
                          JSONMember("version", .int(Int64(try realm.version))),
                          JSONMember("used_bytes", .int(Int64(from.usedBytes))),
                          JSONMember("copy_used_bytes", .int(Int64(to.usedBytes)))], format)
        }
    }
}

/// `cove compact FILE`: the file compacted in place when no other program has it open.
struct Compact: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Compact a Cove file in place (a compacted copy renamed over it), when no other program has it open.")

    @Argument(help: "The Cove file to compact.")
    var file: String

    @Option(help: "Print the result as \(OutputMode.names) (default: a line with the sizes before and after).")
    var format: OutputMode?

    func run() throws {
        try reportingErrors {
            guard access(file, F_OK) == 0 else { throw CoveError(.notFound, "no file at '\(file)'") }
            var sizes: (UInt64, UInt64) = (0, 0)
            let compacted = try Realm.compactFile(atPath: file, encryptionKey: try environmentKey()) { total, used in
                sizes = (total, used)
                return true
            }
            guard compacted else {
                throw CoveError(.locked, "'\(file)' is open elsewhere: it can be compacted once no other program has it open")
            }
            var st = stat()
            let after = stat(file, &st) == 0 ? UInt64(st.st_size) : 0
            let text = "\(file): compacted from \(sizes.0) to \(after) bytes (\(sizes.1) bytes of data)"
            report(text, [JSONMember("file", .string(file)), JSONMember("bytes_before", .int(Int64(sizes.0))),
                          JSONMember("bytes_after", .int(Int64(after))), JSONMember("used_bytes", .int(Int64(sizes.1)))], format)
        }
    }
}
