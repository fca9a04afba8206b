// `cove shell FILE`: an interactive shell over a Cove file, after the sqlite3 shell: queries
// (`Person WHERE age > 30 SORT(name ASC)`), writes (create, set, delete) and dot-commands
// (.help lists them). On a terminal it edits lines and keeps a history through libedit;
// otherwise it reads commands from standard input (`cove shell app.cove < script`).
import ArgumentParser
@preconcurrency import CLibEdit
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Shell: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Query and change a Cove file interactively (.help in the shell lists the commands).",
        discussion: """
            On a terminal the shell edits lines and keeps a history in ~/.cove_history (or \
            $COVE_HISTORY; empty for none). When standard input is not a terminal it reads \
            commands from it, one a line, prints no prompt, and exits with status 1 if a \
            command failed: cove shell app.cove < script.
            """)

    @Argument(help: "The Cove file.")
    var file: String

    @Option(help: "The output mode to start in: \(OutputMode.names).")
    var format: OutputMode = .table

    @Flag(help: "Open the file read-only: writes are refused.")
    var readOnly = false

    @Option(help: "A schema in the JSON notation, to create the file or bring its schema up to it.")
    var schema: String?

    @Option(help: "The schema version that goes with --schema.")
    var schemaVersion: UInt64 = 1

    @Flag(help: "Stop at the first command that fails.")
    var bail = false

    @OptionGroup var arguments: ArgumentOptions
    @OptionGroup var wait: WriteOptions

    func run() throws {
        var succeeded = true
        try reportingErrors {
            let realm: Realm
            if readOnly {
                guard access(file, F_OK) == 0 else { throw CoveError(.notFound, "no file at '\(file)'") }
                realm = try Realm(configuration: .init(path: file, readOnly: true, encryptionKey: try environmentKey()))
            } else {
                var given: Schema?
                if let schema {
                    guard let text = readFile(schema) else { throw CoveError(.notFound, "cannot read \(schema): \(String(cString: strerror(errno)))") }
                    given = try Schema(jsonText: String(decoding: text, as: UTF8.self))
                }
                realm = try openForWriting(file, schema: given, schemaVersion: schemaVersion, create: given != nil, wait)
            }
            defer { realm.close() }
            let session = ShellSession(realm: realm, file: file, mode: format, arguments: arguments.values,
                                       wait: LockWait(file: file, timeout: wait.timeout), bail: bail)
            succeeded = isatty(0) == 1 ? session.interactive() : session.script()
        }
        if !succeeded { throw ExitCode(1) }
    }
}

/// The state of a shell: the open realm and the settings the dot-commands change.
final class ShellSession {
    let realm: Realm
    let file: String
    var mode: OutputMode
    var headers = true
    var timer = false
    var arguments: [String]
    var columns: [String]?
    let wait: LockWait
    let bail: Bool
    /// Whether a command failed.
    private(set) var failed = false
    /// Files being read by .read, to refuse reading one inside itself.
    private var reading: [String] = []

    init(realm: Realm, file: String, mode: OutputMode, arguments: [String], wait: LockWait, bail: Bool) {
        self.realm = realm
        self.file = file
        self.mode = mode
        self.arguments = arguments
        self.wait = wait
        self.bail = bail
    }

    /// Reads lines through libedit until end of input or .quit. A person saw each error as it
    /// came, so the exit status is 0, as sqlite3's is.
    func interactive() -> Bool {
        let history = getenv("COVE_HISTORY").map { String(cString: $0) }
            ?? getenv("HOME").map { String(cString: $0) + "/.cove_history" }
        let editor = LineEditor(historyFile: history?.isEmpty == false ? history : nil,
                                words: Self.dotCommands.map(\.name) + ["create", "set", "delete", "WHERE", "SORT(", "LIMIT("]
                                    + realm.schema.classes.filter { !$0.isEmbedded }.map(\.className))
        print("Cove \(CoveVersion.string) shell on \(file). Enter .help for the commands, .quit to leave.")
        while let line = editor.readLine(prompt: "cove> ") {
            if !execute(line, location: nil) { break }
        }
        return true
    }

    /// Reads standard input a line at a time until its end or .quit; false when a command
    /// failed.
    func script() -> Bool {
        var number = 0
        while let line = readLine(strippingNewline: true) {
            number += 1
            if !execute(line, location: "line \(number)") { break }
        }
        return !failed
    }

    /// Runs one line, printing its output and any error; false when the shell should stop.
    @discardableResult
    func execute(_ line: String, location: String?) -> Bool {
        var text = line.trimmingSpaces()
        while text.hasSuffix(";") { text = String(text.dropLast()).trimmingSpaces() }
        if text.isEmpty || text.hasPrefix("--") || text.hasPrefix("#") { return true }
        let started = ShellClock()
        var keepGoing = true
        do {
            keepGoing = try command(text)
        } catch {
            failed = true
            let message = (error as? CoveError)?.message ?? "\(error)"
            printError("error: " + (location.map { "\($0): " } ?? "") + message)
            if bail { keepGoing = false }
        }
        if timer { print(started.report()) }
        fflush(nil)
        return keepGoing
    }

    /// One command; false for .quit.
    private func command(_ text: String) throws -> Bool {
        if !realm.isInWriteTransaction { _ = try realm.refresh() }
        if text.hasPrefix(".") { return try dotCommand(text) }
        let (word, rest) = splitWord(text)
        switch word.lowercased() {
        case "create":
            let (className, json) = splitWord(rest)
            let n = try createObject(realm, className, json, wait)
            print("created \(objectsText(n, className))")
        case "set":
            let (className, afterClass) = splitWord(rest)
            guard let (json, query) = splitJSON(afterClass) else {
                throw CoveError(.invalidArgument, "set takes CLASS {JSON} [WHERE] QUERY, e.g. set Person {\"age\": 32} WHERE name == 'Ann'")
            }
            let n = try setObjects(realm, className, json, query, try queryArguments(arguments, realm), wait)
            print("updated \(objectsText(n, className))")
        case "delete":
            let (className, query) = splitWord(rest)
            let n = try deleteObjects(realm, className, query, try queryArguments(arguments, realm), wait)
            print("deleted \(objectsText(n, className))")
        default:
            guard realm.schema[word] != nil else {
                throw CoveError(.invalidArgument, "no class or command '\(word)' (.help lists the commands, .classes the classes)")
            }
            printOut(try queryText(realm, word, rest, try queryArguments(arguments, realm), columns: columns, format: mode, headers: headers))
        }
        return true
    }

    /// The lines that are not dot-commands.
    static let lineCommands: [(usage: String, help: String)] = [
        ("CLASS [WHERE] [QUERY]", "Print the objects a query selects, e.g. Person WHERE age > $0 SORT(name ASC)"),
        ("create CLASS {JSON}", "Create an object (or update the one with its primary key)"),
        ("set CLASS {JSON} [WHERE] QUERY", "Set properties of the objects a query selects"),
        ("delete CLASS [WHERE] QUERY", "Delete the objects a query selects"),
    ]

    static let dotCommands: [(name: String, usage: String, help: String)] = [
        (".args", ".args [VALUE...|clear]", "Show or set the values of $0, $1... (JSON, or text taken as a string)"),
        (".check", ".check [quick]", "Check the file (quick: open it and read every class)"),
        (".classes", ".classes", "List the classes with their object counts"),
        (".columns", ".columns [NAME,...]", "Print only these columns of query results (none: every property)"),
        (".count", ".count CLASS [QUERY]", "Print how many objects a query selects"),
        (".dump", ".dump [CLASS]", "Print objects as JSON lines that `cove import` loads"),
        (".exit", ".exit", "Leave the shell"),
        (".explain", ".explain CLASS [QUERY]", "Print how a query runs: the index used and the stages"),
        (".headers", ".headers on|off", "Print column names in table, csv and markdown modes"),
        (".help", ".help", "Print this list"),
        (".info", ".info", "Show the file's size, versions and objects per class"),
        (".mode", ".mode [\(OutputMode.names)]", "Show or set how query results print"),
        (".quit", ".quit", "Leave the shell"),
        (".read", ".read FILE", "Run the commands in FILE"),
        (".schema", ".schema [CLASS]", "Print the schema in the JSON notation"),
        (".timer", ".timer on|off", "Print the time each command takes"),
    ]

    private func dotCommand(_ text: String) throws -> Bool {
        let (name, rest) = splitWord(text)
        func onOff() throws(CoveError) -> Bool {
            switch rest.lowercased() {
            case "on", "1", "yes", "true": return true
            case "off", "0", "no", "false": return false
            default: throw CoveError(.invalidArgument, "\(name) takes on or off")
            }
        }
        switch name {
        case ".quit", ".exit":
            return false
        case ".help":
            let lines = Self.lineCommands + Self.dotCommands.map { ($0.usage, $0.help) }
            let width = lines.map(\.usage.count).max() ?? 0
            print("A line is a query, a write, or a dot-command:")
            for (usage, help) in lines {
                print("  " + usage + String(repeating: " ", count: width - usage.count + 2) + help)
            }
        case ".mode":
            if rest.isEmpty {
                print("current output mode: \(mode.rawValue)")
            } else {
                guard let m = OutputMode(rawValue: rest.lowercased()) else { throw CoveError(.invalidArgument, ".mode takes \(OutputMode.names)") }
                mode = m
            }
        case ".headers":
            headers = try onOff()
        case ".timer":
            timer = try onOff()
        case ".classes":
            var table = Table(columns: ["class", "objects", "primary_key", "embedded"])
            for cls in realm.schema.classes {
                table.rows.append([.string(cls.className), .int(Int64(try realm.objectCount(cls.className))),
                                   cls.primaryKey.map { .string($0) } ?? .null, .bool(cls.isEmbedded)])
            }
            printOut(table.rendered(mode, headers: headers))
        case ".schema":
            printOut(try schemaText(realm.schema, rest.isEmpty ? nil : rest, .json))
        case ".explain", ".count":
            let (className, query) = splitWord(rest)
            guard !className.isEmpty else { throw CoveError(.invalidArgument, "\(name) takes CLASS [QUERY]") }
            printOut(try queryText(realm, className, query, try queryArguments(arguments, realm), columns: nil, format: mode,
                                   headers: headers, explain: name == ".explain", count: name == ".count"))
        case ".args":
            if rest == "clear" {
                arguments = []
            } else if !rest.isEmpty {
                arguments = try splitValues(rest)
                _ = try queryArguments(arguments, realm)
            } else {
                let table = Table(columns: ["argument", "value"], rows: arguments.enumerated().map { [.string("$\($0.offset)"), .string($0.element)] })
                printOut(table.rendered(mode == .json ? .json : .table, headers: headers))
            }
        case ".columns":
            columns = rest.isEmpty ? nil : splitColumns(rest)
        case ".dump":
            try dumpObjects(realm, className: rest.isEmpty ? nil : rest, columns: nil, format: .json, write: printOut)
        case ".info":
            printOut(Table(record: try fileInfo(realm, file)).rendered(mode == .json || mode == .csv ? mode : .line))
        case ".check":
            guard rest.isEmpty || rest == "quick" else { throw CoveError(.invalidArgument, ".check takes nothing or quick") }
            print(try checkFile(realm, file, quick: rest == "quick").text)
        case ".read":
            guard !rest.isEmpty, let bytes = readFile(rest) else { throw CoveError(.notFound, "cannot read '\(rest)'") }
            guard !reading.contains(rest) else { throw CoveError(.invalidArgument, "'\(rest)' is already being read") }
            reading.append(rest)
            defer { reading.removeLast() }
            for (i, line) in splitLines(bytes).enumerated() {
                if !execute(String(decoding: line, as: UTF8.self), location: "\(rest):\(i + 1)") { return false }
            }
        default:
            throw CoveError(.invalidArgument, "unknown command '\(name)' (.help lists the commands)")
        }
        return true
    }
}

/// The first word of a text and the rest, trimmed.
func splitWord(_ text: String) -> (String, String) {
    let trimmed = text.trimmingSpaces()
    guard let space = trimmed.firstIndex(where: \.isWhitespace) else { return (trimmed, "") }
    return (String(trimmed[..<space]), String(trimmed[space...]).trimmingSpaces())
}

/// A JSON object at the start of `text` and the text after it, or nil when it does not start
/// with one.
func splitJSON(_ text: String) -> (String, String)? {
    let trimmed = text.trimmingSpaces()
    guard trimmed.first == "{", let end = jsonValueEnd(trimmed) else { return nil }
    return (String(trimmed[..<end]), String(trimmed[end...]).trimmingSpaces())
}

/// Values separated by spaces: each a JSON value (objects, arrays and strings may hold spaces)
/// or a word.
func splitValues(_ text: String) throws(CoveError) -> [String] {
    var values: [String] = []
    var rest = Substring(text)
    while true {
        rest = rest.drop(while: \.isWhitespace)
        guard !rest.isEmpty else { return values }
        guard let end = jsonValueEnd(rest) else { throw CoveError(.invalidArgument, "a value is not closed: \(rest)") }
        values.append(String(rest[..<end]))
        rest = rest[end...]
    }
}

/// Where the value that starts `text` ends: after the bracket or quote that closes an object,
/// array or string, else at the first space.
func jsonValueEnd<S: StringProtocol>(_ text: S) -> S.Index? {
    guard let first = text.first else { return nil }
    guard first == "{" || first == "[" || first == "\"" else {
        return text.firstIndex(where: \.isWhitespace) ?? text.endIndex
    }
    var depth = 0
    var inString = false, escaped = false
    var i = text.startIndex
    while i < text.endIndex {
        let c = text[i]
        if inString {
            if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inString = false }
        } else if c == "\"" {
            inString = true
        } else if c == "{" || c == "[" {
            depth += 1
        } else if c == "}" || c == "]" {
            depth -= 1
        }
        i = text.index(after: i)
        if depth == 0 && !inString { return i }
    }
    return nil
}

/// Wall-clock and CPU time since it was made, for .timer.
struct ShellClock {
    private let start = monotonicMilliseconds()
    private let usage = ShellClock.cpu()

    private static func cpu() -> (user: Double, system: Double) {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return (seconds(u.ru_utime), seconds(u.ru_stime))
    }

    func report() -> String {
        let now = ShellClock.cpu()
        func f(_ x: Double) -> String {
            let ms = Int((x * 1000).rounded())
            let frac = String(ms % 1000)
            return "\(ms / 1000)." + String(repeating: "0", count: 3 - frac.count) + frac
        }
        return "time: real \(f(Double(monotonicMilliseconds() - start) / 1000)) user \(f(now.user - usage.user)) sys \(f(now.system - usage.system))"
    }
}

/// Lines read through libedit's readline: editing keys, history, and completion of commands
/// and class names with Tab.
final class LineEditor {
    private let historyFile: String?

    init(historyFile: String?, words: [String]) {
        self.historyFile = historyFile
        completionWords = words
        rl_attempted_completion_function = { text, _, _ in
            guard let text else { return nil }
            return rl_completion_matches(text, { prefix, state in
                guard let prefix else { return nil }
                if state == 0 {
                    let p = String(cString: prefix)
                    completionCandidates = completionWords.filter { $0.hasPrefix(p) }
                }
                guard !completionCandidates.isEmpty else { return nil }
                return strdup(completionCandidates.removeFirst())
            })
        }
        using_history()
        stifle_history(1000)
        if let historyFile { _ = read_history(historyFile) }
    }

    /// The next line without its newline, or nil at the end of input (Ctrl-D).
    func readLine(prompt: String) -> String? {
        guard let raw = readline(prompt) else { return nil }
        defer { free(raw) }
        let line = String(cString: raw)
        if !line.trimmingSpaces().isEmpty {
            _ = add_history(raw)
            if let historyFile { _ = write_history(historyFile) }
        }
        return line
    }
}

/// What Tab completes, and the candidates of the completion under way (libedit calls back
/// through C function pointers, which capture nothing).
nonisolated(unsafe) private var completionWords: [String] = []
nonisolated(unsafe) private var completionCandidates: [String] = []
