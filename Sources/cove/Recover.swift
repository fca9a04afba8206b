// `cove recover DAMAGED OUT`: what can still be read of a damaged file copied into a new one
// (the library's Realm.salvage), and what was lost. Its exit status tells a complete salvage
// (0) from one that lost data (1) and from one that wrote nothing (2).
import ArgumentParser
import Cove
import FoundationEssentials

struct Recover: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Copy what can still be read of a damaged Cove file into a new file, and say what was lost.",
        discussion: """
        Exit status: 0 when nothing was lost; 1 when some data was lost (OUT holds the rest); 2 when \
        nothing was written (nothing could be salvaged, OUT exists, or another error). An encrypted \
        file's key comes from COVE_ENCRYPTION_KEY; OUT is encrypted with it too.
        """)

    @Argument(help: "The damaged Cove file (read, never written).") var damaged: String
    @Argument(help: "The new file (it must not exist).") var out: String
    @Option(help: "Print the report as \(OutputMode.names) (default: lines per class; json: the whole report on one line; the others: a row per class).")
    var format: OutputMode?

    func run() throws {
        let report: SalvageReport
        do throws(CoveError) {
            report = try Realm.salvage(fromFile: damaged, toFile: out, encryptionKey: try environmentKey())
        } catch {
            printError("cove: \(error.code.statusName): \(error.message)")
            throw ExitCode(2)
        }
        switch format {
        case nil:
            print("\(out): salvaged from \(damaged)\n\(report)")
        case .json?:
            guard case .object(let members) = report.json() else { break }
            print(JSONValue.object([JSONMember("file", .string(damaged)), JSONMember("out", .string(out))] + members).serialized())
        case let mode?:
            let columns = ["class", "objects_copied", "objects_lost", "collections_damaged", "values_lost", "links_dropped", "damaged_pages"]
            var table = Table(columns: columns)
            if case .array(let classes)? = report.json()["classes"] {
                table.rows = classes.map { c in columns.map { c[$0] ?? .null } }
            }
            printOut(table.rendered(mode))
        }
        if !report.isComplete {
            printError("cove: some data of '\(damaged)' could not be read: '\(out)' holds the rest")
            throw ExitCode(1)
        }
    }
}
