// `cove sync FILE`: where a synced file stands: its id at the server, its changesets made,
// uploaded and waiting, how far it has downloaded, its subscription set (version, state, each
// subscription) and, with --uploads, the changesets waiting for upload.
import ArgumentParser
import Cove
import FoundationEssentials

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Show where a synced Cove file stands: uploads, downloads and subscriptions.")

    @Argument(help: "The synced Cove file.")
    var file: String

    @Option(help: ArgumentHelp("Also print up to this many changesets waiting for upload, as JSON lines.", valueName: "count"))
    var uploads: Int = 0

    @Option(help: "\(OutputMode.names) (default: line, a 'name: value' line each).")
    var format: OutputMode = .line

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            if uploads < 0 { throw CoveError(.invalidArgument, "--uploads must be 0 or more, not \(uploads)") }
            guard let status = try realm.syncFileStatus() else {
                throw CoveError(.invalidArgument, "\(file) has never been opened with a sync configuration")
            }
            printOut(Table(record: syncInfo(status, try realm.pendingSyncUploads(limit: uploads))).rendered(format))
        }
    }
}

/// A state's name, as `cove sync` prints it.
func stateName(_ state: SyncSubscriptionState) -> String {
    switch state {
    case .pending: return "pending"
    case .bootstrapping: return "bootstrapping"
    case .complete: return "complete"
    case .error(let error): return "error: \(error.message)"
    case .superseded: return "superseded"
    }
}

func syncInfo(_ status: SyncFileStatus, _ uploads: [String]) -> [JSONMember] {
    var members = [
        JSONMember("client_file_id", .string(status.clientFileId)),
        JSONMember("local_version", .int(Int64(status.localVersion))),
        JSONMember("uploaded_version", .int(Int64(status.uploadedVersion))),
        JSONMember("waiting_uploads", .int(Int64(status.localVersion - status.uploadedVersion))),
        JSONMember("downloaded_version", .int(Int64(status.downloadedVersion))),
        JSONMember("subscriptions.version", .int(Int64(status.subscriptionVersion))),
        JSONMember("subscriptions.state", .string(status.subscriptionVersion == 0 ? "none: every change downloads" : stateName(status.subscriptionState))),
        JSONMember("subscriptions.count", .int(Int64(status.subscriptions.count))),
    ]
    for (i, s) in status.subscriptions.enumerated() {
        let arguments = s.arguments.map { a -> String in
            switch a {
            case .value(let v): return "\(v)"
            case .list(let vs): return "{" + vs.map { "\($0)" }.joined(separator: ", ") + "}"
            }
        }
        let query = s.queryString + (arguments.isEmpty ? "" : " with " + arguments.joined(separator: ", "))
        members.append(JSONMember("subscription.\(i + 1)", .string("\(s.name ?? "(unnamed)"): \(s.objectClassName) where \(query)")))
        members.append(JSONMember("subscription.\(i + 1).updated", .string(s.updatedAt.formatted(.iso8601))))
    }
    for (i, line) in uploads.enumerated() { members.append(JSONMember("upload.\(i + 1)", .string(line))) }
    return members
}
