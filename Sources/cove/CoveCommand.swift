// The `cove` command-line tool: an interactive shell over a Cove file, and commands that
// inspect, check, query, dump, load, change and watch one.
// Every failure prints a message naming the problem on standard error and exits non-zero.
import ArgumentParser
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

@main
struct CoveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cove",
        abstract: "Cove: an embedded object database with live queries.",
        discussion: """
        docs/cli.md is the guide to every command and to the shell. An encrypted file's key is \
        read from the environment variable COVE_ENCRYPTION_KEY (128 hexadecimal digits: 64 bytes).
        """,
        version: CoveVersion.string,
        subcommands: [Shell.self, Info.self, SyncCommand.self, Check.self, Backup.self, Compact.self, Recover.self, SchemaCommand.self, QueryCommand.self, Dump.self, Import.self,
                      Create.self, SetCommand.self, Delete.self, Watch.self, Demo.self])
}

/// Opens `file` read-only, runs `body` on it and closes it; a Cove error is reported as
/// `exitWith` does (other errors, such as an exit code, pass through).
func withReadOnlyRealm(_ file: String, _ body: (Realm) throws -> Void) throws {
    try reportingErrors {
        guard access(file, F_OK) == 0 else { throw CoveError(.notFound, "no file at '\(file)'") }
        let realm = try Realm(configuration: .init(path: file, readOnly: true, encryptionKey: try environmentKey()))
        defer { realm.close() }
        try body(realm)
    }
}

/// The name of the environment variable that holds an encrypted file's key.
let encryptionKeyVariable = "COVE_ENCRYPTION_KEY"

/// The key in the environment variable `name` (128 hexadecimal digits, spaces allowed between
/// them), nil when it is not set or empty. A key on the command line would show in the
/// process list; the environment does not.
/// - Throws: `.invalidArgument` naming the variable for anything but 64 bytes in hexadecimal.
func environmentKey(_ name: String = encryptionKeyVariable) throws(CoveError) -> Data? {
    guard let raw = getenv(name) else { return nil }
    let text = String(cString: raw).filter { !$0.isWhitespace }
    if text.isEmpty { return nil }
    var bytes: [UInt8] = []
    var chars = text.makeIterator()
    while let high = chars.next() {
        guard let h = high.hexDigitValue, let lowChar = chars.next(), let l = lowChar.hexDigitValue else {
            throw CoveError(.invalidArgument, "\(name) must hold 128 hexadecimal digits (a 64-byte key), not \(text.count) characters of text")
        }
        bytes.append(UInt8(h << 4 | l))
    }
    guard bytes.count == 64 else {
        throw CoveError(.invalidArgument, "\(name) must hold 128 hexadecimal digits (a 64-byte key), not \(text.count)")
    }
    return Data(bytes)
}

/// Runs `body`, turning a Cove error into its message and exit status 1.
func reportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
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

/// Writes `text` to standard output as it is (no newline added).
func printOut(_ text: String) {
    print(text, terminator: "")
}

/// The options of commands that run a query: its `$0`, `$1`... arguments.
struct ArgumentOptions: ParsableArguments {
    @Option(name: .customLong("arg"), help: ArgumentHelp(
        "A value for $0, then $1...: JSON (30, 1.5, true, null, '\"Ann\"', '{\"$date\": \"2024-01-01T00:00:00Z\"}', an array for IN), or text, taken as a string.",
        valueName: "value"))
    var values: [String] = []
}

/// The options of commands that print objects.
struct ColumnOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The columns to print, comma-separated: properties, paths through to-one links (dog.name), or $key.",
                               valueName: "names"))
    var columns: String?

    var list: [String]? { columns.map(splitColumns) }
}

/// Names separated by commas, trimmed.
func splitColumns(_ text: String) -> [String] {
    text.split(separator: ",").map { String($0).trimmingSpaces() }.filter { !$0.isEmpty }
}

/// The options of commands that write.
struct WriteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Seconds to wait for the write lock another process holds (default: as long as it takes).",
                               valueName: "seconds"))
    var timeout: Double?
}

/// Query arguments from their command-line texts: each is read as JSON (a tagged value such
/// as {"$date": ...} included), or taken as a string when it is not JSON.
func queryArguments(_ texts: [String], _ realm: Realm) throws(CoveError) -> [QueryArgument] {
    let loader = Loader(realm)
    let p = Property(name: "argument", type: .mixed, isOptional: true)
    let cls = ObjectSchema(className: "the query", properties: [])
    // The decoder's messages name the property and class: an argument has neither.
    let prefix = "property 'argument' of class 'the query' is mixed: "
    return try texts.enumerated().map { (i, text) throws(CoveError) in
        guard let json = try? JSONValue(parsing: text) else { return .value(.string(text)) }
        do throws(CoveError) {
            if case .array(let items) = json {
                return .list(try items.map { (item) throws(CoveError) in try loader.decode(item, p, cls) })
            }
            return .value(try loader.decode(json, p, cls))
        } catch {
            let why = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
            throw CoveError(error.code, "argument $\(i): \(why)")
        }
    }
}

/// The objects of `className` that `query` selects. The query is the Realm Query Language;
/// the word WHERE may stand before it, and a query that is only SORT, DISTINCT, LIMIT or
/// OFFSET (or nothing) selects every object.
func selectObjects(_ realm: Realm, _ className: String, _ query: String, _ arguments: [QueryArgument]) throws(CoveError) -> Results<DynamicObject> {
    guard let cls = realm.schema[className] else { throw CoveError(.notFound, "no class '\(className)' in the schema") }
    if cls.isEmbedded { throw CoveError(.invalidArgument, "'\(className)' is embedded: query its owners") }
    return try realm.objects(className).filter(normalizedQuery(query), arguments: arguments)
}

func normalizedQuery(_ query: String) -> String {
    var text = query.trimmingSpaces()
    if text.uppercased().hasPrefix("WHERE"), text.count == 5 || text.dropFirst(5).first?.isWhitespace == true {
        text = String(text.dropFirst(5)).trimmingSpaces()
    }
    let upper = text.uppercased()
    if text.isEmpty { return "TRUEPREDICATE" }
    for clause in ["SORT", "DISTINCT", "LIMIT", "OFFSET"] where upper.hasPrefix(clause) {
        let next = upper.dropFirst(clause.count).first { !$0.isWhitespace }
        if next == "(" { return "TRUEPREDICATE " + text }
    }
    return text
}

/// The objects as a table: the given columns, or every property but backlinks.
func objectTable(_ objects: [DynamicObject], _ cls: ObjectSchema, columns: [String]?, encoder: DumpEncoder) throws(CoveError) -> Table {
    let names = columns ?? cls.properties.filter { !$0.isBacklinks }.map(\.name)
    var table = Table(columns: names)
    for object in objects {
        table.rows.append(try names.map { (name) throws(CoveError) in try encoder.column(name, of: object) })
    }
    return table
}

/// Opens `file` to write, waiting for the write lock as `options` say when opening writes
/// (a new file, or a schema to bring up to date).
func openForWriting(_ file: String, schema: Schema? = nil, schemaVersion: UInt64 = 0, create: Bool = false,
                    _ options: WriteOptions) throws -> Realm {
    if !create && access(file, F_OK) != 0 { throw CoveError(.notFound, "no file at '\(file)'") }
    var configuration = Realm.Configuration(path: file, writeTimeoutMilliseconds: 200, encryptionKey: try environmentKey())
    if let schema {
        configuration.schema = schema
        configuration.schemaVersion = schemaVersion
    }
    return try LockWait(file: file, timeout: options.timeout).run { try Realm(configuration: configuration) }
}

/// Begins a write on `realm`, waiting for the lock as `wait` says.
func beginWrite(_ realm: Realm, _ wait: LockWait) throws {
    try wait.run { try realm.beginWrite() }
}

/// Retries what fails with `.locked` until it succeeds or the timeout passes, saying on
/// standard error, once, which process holds the lock.
struct LockWait {
    let file: String
    /// Seconds; nil waits as long as it takes.
    let timeout: Double?

    func run<T>(_ body: () throws -> T) throws -> T {
        if let timeout, !(timeout >= 0) { throw CoveError(.invalidArgument, "--timeout must be a number of seconds, not \(timeout)") }
        let start = monotonicMilliseconds()
        var told = false
        while true {
            do {
                return try body()
            } catch let error as CoveError where error.code == .locked {
                let holder = Self.holder(in: error.message)
                if let timeout, Double(monotonicMilliseconds() - start) >= timeout * 1000 {
                    throw CoveError(.locked, "the write lock of '\(file)' was not free within \(timeout) s\(holder)")
                }
                if !told {
                    printError("cove: waiting for the write lock of '\(file)'\(holder)...")
                    told = true
                }
            }
        }
    }

    /// ", held by pid N (program)" from the library's message, or nothing.
    static func holder(in message: String) -> String {
        guard let range = message.range(of: "held by pid ") else {
            return message.contains("another realm of this process") ? ", held by this process" : ""
        }
        let digits = message[range.upperBound...].prefix { $0.isNumber }
        guard let pid = Int(digits) else { return "" }
        var name = ""
        if let bytes = readFile("/proc/\(pid)/comm") {
            name = String(decoding: bytes, as: UTF8.self).trimmingCharacters { $0 == "\n" || $0 == " " }
        }
        return ", held by pid \(pid)" + (name.isEmpty ? "" : " (\(name))")
    }
}

/// Prints `text` when no format was asked for, else `record` in that format.
func report(_ text: String, _ record: [JSONMember], _ format: OutputMode?) {
    if let format {
        printOut(Table(record: record).rendered(format))
    } else {
        print(text)
    }
}

extension String {
    func trimmingSpaces() -> String {
        trimmingCharacters { $0.isWhitespace }
    }

    func trimmingCharacters(_ drop: (Character) -> Bool) -> String {
        String(self.drop(while: drop).reversed().drop(while: drop).reversed())
    }
}

func monotonicMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

/// The time now, as the dates of a dump are written (UTC, ISO 8601).
func timeNow() -> String {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Timestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec / 1_000_000 * 1_000_000)).description
}
