// The `cove` command-line tool: opens, checks, dumps, imports and demonstrates Cove database
// files.
// Every failure prints a message naming the problem and exits non-zero.
import ArgumentParser
import Cove

@main
struct CoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cove",
        abstract: "Cove: an embedded object database with live queries.",
        version: CoveVersion.string,
        subcommands: [Demo.self, Check.self, Info.self, SchemaCommand.self, Dump.self, Import.self, QueryCommand.self, Watch.self])
}

/// Opens `file` read-only, runs `body` on it and closes it; a Cove error is reported as
/// `exitWith` does (other errors, such as an exit code, pass through).
func withReadOnlyRealm(_ file: String, _ body: (Realm) throws -> Void) throws {
    do {
        let realm = try Realm(configuration: .init(path: file, readOnly: true))
        defer { realm.close() }
        try body(realm)
    } catch let error as CoveError {
        throw exitWith(error)
    }
}

/// Prints a Cove error the way every subcommand reports one, and exits with status 1.
func exitWith(_ error: CoveError) -> ExitCode {
    printError("cove: \(error.code.statusName): \(error.message)")
    return ExitCode(1)
}

func printError(_ message: String, newline: Bool = true) {
    let line = newline ? message + "\n" : message
    _ = line.withCString { write(2, $0, strlen($0)) }
}

#if canImport(Glibc)
import Glibc
#endif
