// The `cove` command-line tool: opens, checks and demonstrates Cove database files.
// Every failure prints a message naming the problem and exits non-zero.
import ArgumentParser
import Cove

@main
struct CoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cove",
        abstract: "Cove: an embedded object database with live queries.",
        version: CoveVersion.string,
        subcommands: [Demo.self, Check.self, Info.self])
}

/// Prints a Cove error the way every subcommand reports one, and exits with status 1.
func exitWith(_ error: CoveError) -> ExitCode {
    printError("cove: \(error.code.statusName): \(error.message)")
    return ExitCode(1)
}

func printError(_ message: String) {
    var stderr = StandardError()
    print(message, to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        fputsStderr(string)
    }
}

#if canImport(Glibc)
import Glibc
func fputsStderr(_ s: String) { fputs(s, Glibc.stderr) }
#endif
