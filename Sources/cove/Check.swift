// `cove check FILE`: runs verify() over a file (or, with --quick, opens it and reads every
// class), and `cove info FILE`: what the library tells of a file.
import ArgumentParser
import Cove
#if canImport(Glibc)
import Glibc
#endif

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a Cove file: page checksums, tree order and counts, free space, indexes and backlinks.")

    @Argument(help: "The Cove file to check.")
    var file: String

    @Flag(help: "Only open the file (which checks its header and the pages of the last commit) and read the schema and every class's count.")
    var quick = false

    @Option(help: "Print the result as \(OutputMode.names) (default: the report and a last line '<file>: ok').")
    var format: OutputMode?

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            let result = try checkFile(realm, file, quick: quick)
            report(result.text, result.record, format)
        }
    }
}

/// Checks `realm`: the full verify(), or the quick check. A file whose open discarded its last
/// commit (a page it wrote no longer holds what it wrote) fails the check with the reason, even
/// though the version before it reads well: that commit's changes are lost.
func checkFile(_ realm: Realm, _ file: String, quick: Bool) throws(CoveError) -> (text: String, record: [JSONMember]) {
    if let recovery = realm.recovery {
        throw CoveError(.corrupt, "\(file): opening it discarded its last commit: \(recovery)")
    }
    let report: String
    if quick {
        var objects: UInt64 = 0
        for cls in realm.schema.classes { objects += try realm.objectCount(cls.className) }
        report = "quick check at version \(try realm.version): header and last commit read, \(realm.schema.classes.count) classes, \(objects) objects"
    } else {
        report = try realm.verify()
    }
    return ("\(report)\n\(file): ok", [JSONMember("file", .string(file)), JSONMember("check", .string(quick ? "quick" : "full")),
                                      JSONMember("ok", .bool(true)), JSONMember("report", .string(report))])
}

/// `cove info FILE`: the file's size, schema version, version, pinned versions, and objects per
/// class.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a Cove file holds: size, versions, and objects per class.")

    @Argument(help: "The Cove file.")
    var file: String

    @Option(help: "\(OutputMode.names) (default: line, a 'name: value' line each).")
    var format: OutputMode = .line

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            printOut(Table(record: try fileInfo(realm, file)).rendered(format))
        }
    }
}

/// What `cove info` and the shell's .info print: the file's size, format, whether it is
/// encrypted, the bytes its pages hold in use and free, versions, what recovery left out when
/// this process opened the file (null when nothing), for a synced file where its sync stands,
/// and objects per class.
func fileInfo(_ realm: Realm, _ file: String) throws(CoveError) -> [JSONMember] {
    let space = try realm.fileSpace()
    var st = stat()
    let size: JSONValue = stat(file, &st) == 0 ? .int(Int64(st.st_size)) : .null
    var members = [
        JSONMember("file", .string(file)),
        JSONMember("file_size", size),
        JSONMember("format_version", .int(Int64(space.formatVersion))),
        JSONMember("encrypted", .bool(realm.configuration.encryptionKey != nil)),
        JSONMember("used_bytes", .int(Int64(space.usedBytes))),
        JSONMember("free_bytes", .int(Int64(space.freeBytes))),
        JSONMember("schema_version", .int(Int64(try Realm.schemaVersion(at: file, encryptionKey: realm.configuration.encryptionKey)))),
        JSONMember("version", .int(Int64(try realm.version))),
        JSONMember("active_versions", .int(Int64(try realm.activeVersionCount()))),
        JSONMember("classes", .int(Int64(realm.schema.classes.count))),
        JSONMember("recovery", realm.recovery.map { .string($0.description) } ?? .null),
    ]
    // A synced file: its id at the server, the changesets waiting for upload, how far it has
    // downloaded.
    if let sync = try realm.syncFileStatus() {
        members.append(JSONMember("sync.client_file_id", .string(sync.clientFileId)))
        members.append(JSONMember("sync.waiting_uploads", .int(Int64(sync.localVersion - sync.uploadedVersion))))
        members.append(JSONMember("sync.uploaded_version", .int(Int64(sync.uploadedVersion))))
        members.append(JSONMember("sync.downloaded_version", .int(Int64(sync.downloadedVersion))))
    }
    for cls in realm.schema.classes {
        members.append(JSONMember("objects.\(cls.className)", .int(Int64(try realm.objectCount(cls.className)))))
    }
    return members
}
