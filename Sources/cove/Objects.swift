// `cove schema`, `cove dump` and `cove import`: a file's schema, its objects as JSON lines, and
// JSON lines loaded into a class in batches, each batch one write transaction.
import ArgumentParser
import Cove
#if canImport(Glibc)
import Glibc
#endif

/// `cove schema FILE`: the schema kept in the file, in the JSON notation.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "schema", abstract: "Print the schema of a Cove file as JSON.")

    @Argument(help: "The Cove file.")
    var file: String

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            print(realm.schema.jsonText(pretty: true))
        }
    }
}

/// `cove dump FILE [CLASS]`: objects as JSON lines (see ObjectJSON for the form).
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print objects as JSON lines: those of CLASS, or of every top-level class with a \"$class\" member.")

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "The class to dump (default: every class that is not embedded).")
    var className: String?

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            if let className {
                guard realm.schema[className] != nil else { throw CoveError(.notFound, "no class '\(className)' in \(file)") }
                for object in try realm.dynamicObjects(className) {
                    print(try ObjectJSON.encode(object).serialized())
                }
                return
            }
            for cls in realm.schema.classes where !cls.isEmbedded {
                for object in try realm.dynamicObjects(cls.className) {
                    guard case .object(let members) = try ObjectJSON.encode(object) else { continue }
                    print(JSONValue.object([JSONMember("$class", .string(cls.className))] + members).serialized())
                }
            }
        }
    }
}

/// `cove import FILE CLASS DATA.jsonl`: one object per line. Objects with a primary key that is
/// already there are updated. A bad line stops the import: its batch is not loaded, the
/// batches before it stay committed, and the line number and the problem are printed.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load JSON lines into a class, one write transaction per batch.")

    @Argument(help: "The Cove file (created when --schema is given and it does not exist).")
    var file: String

    @Argument(help: "The class of the objects.")
    var className: String

    @Argument(help: "The JSON lines file: one object per line; blank lines are skipped.")
    var data: String

    @Option(help: "A schema in the JSON notation, for a new file or an additive change.")
    var schema: String?

    @Option(help: "The schema version that goes with --schema.")
    var schemaVersion: UInt64 = 1

    @Option(help: "Lines per write transaction.")
    var batchSize: Int = 10_000

    func run() throws {
        do {
            try load()
        } catch let error as CoveError {
            throw exitWith(error)
        }
    }

    private func load() throws {
        guard batchSize > 0 else { throw CoveError(.invalidArgument, "--batch-size must be at least 1") }
        guard let bytes = readFile(data) else { throw CoveError(.notFound, "cannot read \(data): \(String(cString: strerror(errno)))") }
        var configuration = Realm.Configuration(path: file)
        if let schema {
            guard let text = readFile(schema) else { throw CoveError(.notFound, "cannot read \(schema): \(String(cString: strerror(errno)))") }
            configuration.schema = try Schema(jsonText: String(decoding: text, as: UTF8.self))
            configuration.schemaVersion = schemaVersion
        }
        let realm = try Realm(configuration: configuration)
        defer { realm.close() }
        guard realm.schema[className] != nil else { throw CoveError(.notFound, "no class '\(className)' in \(file)") }

        let lines = splitLines(bytes)
        let total = lines.count
        var progress = ProgressBar(total: total)
        var loaded = 0, batches = 0, lineIndex = 0
        while lineIndex < total {
            let end = min(lineIndex + batchSize, total)
            var inBatch = 0
            try realm.beginWrite()
            for i in lineIndex..<end {
                let line = lines[i]
                if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                do {
                    let json = try JSONValue(parsing: Array(line))
                    try ObjectJSON.create(className, from: json, in: realm, update: true)
                    inBatch += 1
                } catch {
                    try? realm.cancelWrite()
                    progress.finish()
                    printError("cove: \(data):\(i + 1): \(error.message)")
                    print("imported \(loaded) \(className) objects in \(batches) batches; stopped at line \(i + 1): lines \(lineIndex + 1)-\(end) not loaded")
                    throw ExitCode(1)
                }
            }
            try realm.commitWrite()
            loaded += inBatch
            batches += 1
            lineIndex = end
            progress.update(lineIndex)
        }
        progress.finish()
        print("imported \(loaded) \(className) objects from \(total) lines in \(batches) batches")
    }
}

/// A progress bar on standard error: redrawn in place on a terminal, a line per tenth
/// otherwise, so logs stay short.
struct ProgressBar {
    let total: Int
    private let terminal = isatty(2) == 1
    private var lastTenth = -1

    init(total: Int) { self.total = total }

    mutating func update(_ done: Int) {
        guard total > 0 else { return }
        let percent = done * 100 / total
        let width = 30
        let filled = done * width / total
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
        if terminal {
            printError("\r\(bar) \(percent)% \(done)/\(total) lines", newline: false)
        } else if percent / 10 != lastTenth {
            lastTenth = percent / 10
            printError("\(bar) \(percent)% \(done)/\(total) lines")
        }
    }

    func finish() {
        if terminal && total > 0 { printError("") }
    }
}

/// The whole file, or nil when it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    return ferror(f) == 0 ? bytes : nil
}

/// The lines of a text, without their '\n' (a last line without one counts).
func splitLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    if lines.last?.isEmpty == true { lines.removeLast() }
    return lines
}
