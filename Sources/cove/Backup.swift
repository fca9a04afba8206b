// `cove backup FILE COPY`: a compacted copy of a file's newest version in a new file, taken
// while other programs may go on writing (the library's writeCopy).
import ArgumentParser
import Cove
#if canImport(Glibc)
import Glibc
#endif

struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a compacted copy of a Cove file's newest version to a new file, while other programs may keep writing.")

    @Argument(help: "The Cove file to copy.")
    var file: String

    @Argument(help: "The new file (it must not exist).")
    var copy: String

    @Option(help: "Print the result as \(OutputMode.names) (default: a line naming both files and their sizes in use).")
    var format: OutputMode?

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            try realm.writeCopy(toFile: copy)
            let from = try realm.fileSpace()
            let copied = try Realm(configuration: .init(path: copy, readOnly: true))
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
