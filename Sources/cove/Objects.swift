// `cove schema`, `cove dump` and `cove import`: a file's schema, its objects as JSON lines (or a
// table, CSV...), and JSON lines or CSV loaded in batches, each batch one write transaction.
import ArgumentParser
import Cove
#if canImport(Glibc)
import Glibc
#endif

/// `cove schema FILE`: the schema kept in the file, in the JSON notation or as a table of
/// properties.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "schema", abstract: "Print the schema of a Cove file.")

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "One class to print (default: every class).")
    var className: String?

    @Option(help: "json (the schema notation, the default), or \(OutputMode.names) for a row per property.")
    var format: OutputMode = .json

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            printOut(try schemaText(realm.schema, className, format))
        }
    }
}

/// The schema (or one class of it) in the JSON notation, or a table of its properties.
func schemaText(_ schema: Schema, _ className: String?, _ mode: OutputMode) throws(CoveError) -> String {
    var classes = schema.classes
    if let className {
        guard let cls = schema[className] else { throw CoveError(.notFound, "no class '\(className)' in the schema") }
        classes = [cls]
    }
    if mode == .json {
        let text = schema.jsonText(pretty: true)
        guard let className, case .object(let members) = try JSONValue(parsing: text),
              let member = members.first(where: { $0.key == className }) else { return text + "\n" }
        return JSONValue.object([member]).serialized(pretty: true) + "\n"
    }
    var table = Table(columns: ["class", "property", "type", "primary_key", "indexed"])
    for cls in classes {
        for p in cls.properties {
            table.rows.append([.string(cls.className), .string(p.name), .string(p.typeNotation),
                               .bool(p.isPrimaryKey), .bool(p.isIndexed)])
        }
    }
    return table.rendered(mode)
}

/// `cove dump FILE [CLASS]`: objects as JSON lines (see Codec.swift for the form).
struct Dump: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print objects: those of CLASS, or the whole file as JSON lines that `cove import` loads into a new file.",
        discussion: """
            The whole file's dump starts with a line holding the schema, then an object per line \
            with its class in "$class". Objects of a class without a primary key carry "$ref", \
            which links to them use.
            """)

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "The class to dump (default: every class that is not embedded, and the schema).")
    var className: String?

    @OptionGroup var columns: ColumnOptions

    @Option(help: "json (the default), or \(OutputMode.names) with a CLASS.")
    var format: OutputMode = .json

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            try dumpObjects(realm, className: className, columns: columns.list, format: format, write: printOut)
        }
    }
}

/// Writes a dump of `realm` through `write`, a chunk of lines at a time.
func dumpObjects(_ realm: Realm, className: String?, columns: [String]?, format: OutputMode,
                 write: (String) -> Void) throws(CoveError) {
    let encoder = DumpEncoder(realm)
    if let className {
        guard let cls = realm.schema[className] else { throw CoveError(.notFound, "no class '\(className)' in the schema") }
        if cls.isEmbedded { throw CoveError(.invalidArgument, "'\(className)' is embedded: its objects are dumped inside their owners") }
        let objects = try realm.dynamicObjects(className)
        if format == .json && columns == nil {
            var chunk = ""
            for object in objects {
                chunk += try encoder.encode(object, withRef: true).serialized() + "\n"
                if chunk.utf8.count > 1 << 16 { write(chunk); chunk = "" }
            }
            write(chunk)
        } else {
            write(try objectTable(objects, cls, columns: columns, encoder: encoder).rendered(format))
        }
        return
    }
    guard format == .json, columns == nil else {
        throw CoveError(.invalidArgument, "a dump of every class is JSON lines: give a CLASS for --format \(format.rawValue) or --columns")
    }
    let schema = try JSONValue(parsing: realm.schema.jsonText())
    let version = try Realm.schemaVersion(at: realm.configuration.path ?? "")
    write(JSONValue.object([JSONMember("$schema", schema), JSONMember("$schemaVersion", .int(Int64(version)))]).serialized() + "\n")
    for cls in realm.schema.classes where !cls.isEmbedded {
        var chunk = ""
        for object in try realm.dynamicObjects(cls.className) {
            chunk += try encoder.encode(object, withClass: true, withRef: true).serialized() + "\n"
            if chunk.utf8.count > 1 << 16 { write(chunk); chunk = "" }
        }
        write(chunk)
    }
}

/// `cove import FILE [CLASS] DATA`: objects from JSON lines or CSV. Objects with a primary key
/// that is already there are updated. A bad line stops the import: its batch is not loaded,
/// the batches before it stay committed, and the line number and the problem are printed.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load JSON lines or CSV into a Cove file, one write transaction per batch.",
        discussion: """
            Without CLASS, DATA is a whole-file dump: each line names its class in "$class", and \
            a first line with "$schema" gives the schema of a new file. CSV needs a CLASS and a \
            header line naming the properties.
            """)

    @Argument(help: "The Cove file (created when the data or --schema give a schema).")
    var file: String

    @Argument(help: ArgumentHelp("[CLASS] DATA: the class of the objects (optional for JSON lines with \"$class\"), then the data file, or - for standard input.",
                                 valueName: "class-and-data"))
    var operands: [String] = []

    @Option(help: "A schema in the JSON notation, for a new file or an additive change.")
    var schema: String?

    @Option(help: "The schema version that goes with --schema.")
    var schemaVersion: UInt64 = 1

    @Option(help: "Lines per write transaction.")
    var batchSize: Int = 10_000

    @Option(help: ArgumentHelp("json (JSON lines) or csv (default: csv for a .csv file, else json).", valueName: "json|csv"))
    var input: String?

    @OptionGroup var wait: WriteOptions

    @Option(help: "Print the summary as \(OutputMode.names) (default: a sentence).")
    var format: OutputMode?

    func run() throws {
        try reportingErrors { try load() }
    }

    private func load() throws {
        guard batchSize > 0 else { throw CoveError(.invalidArgument, "--batch-size must be at least 1") }
        guard (1...2).contains(operands.count) else {
            throw CoveError(.invalidArgument, "import takes FILE [CLASS] DATA: \(operands.count + 1) operands given")
        }
        let className = operands.count == 2 ? operands[0] : nil
        let data = operands[operands.count - 1]
        let csv: Bool
        switch input ?? (data.hasSuffix(".csv") ? "csv" : "json") {
        case "csv": csv = true
        case "json": csv = false
        default: throw CoveError(.invalidArgument, "--input takes json or csv, not '\(input ?? "")'")
        }
        guard let bytes = data == "-" ? readAll(0) : readFile(data) else {
            throw CoveError(.notFound, "cannot read \(data): \(String(cString: strerror(errno)))")
        }

        // The lines as JSON, the first taken for the schema when it holds "$schema".
        var records: [(line: Int, json: Result<JSONValue, CoveError>)] = []
        var dataSchema: (Schema, UInt64)?
        var lineCount = 0
        if csv {
            records = try csvRecords(bytes, data).map { ($0.line, .success($0.json)) }
            lineCount = records.count
        } else {
            let lines = splitLines(bytes)
            lineCount = lines.count
            for (i, line) in lines.enumerated() where !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
                do {
                    let json = try JSONValue(parsing: Array(line))
                    if records.isEmpty && dataSchema == nil, let header = try schemaHeader(json) {
                        dataSchema = header
                        continue
                    }
                    records.append((i + 1, .success(json)))
                } catch {
                    // Reported in line order, after the lines before it are checked.
                    records.append((i + 1, .failure(error)))
                }
            }
        }

        var given = dataSchema
        if let schema {
            guard let text = readFile(schema) else { throw CoveError(.notFound, "cannot read \(schema): \(String(cString: strerror(errno)))") }
            given = (try Schema(jsonText: String(decoding: text, as: UTF8.self)), schemaVersion)
        }
        let realm = try openForWriting(file, schema: given?.0, schemaVersion: given?.1 ?? 0, create: given != nil, wait)
        defer { realm.close() }
        if let className, realm.schema[className] == nil { throw CoveError(.notFound, "no class '\(className)' in \(file)") }
        // Every line is checked before any is loaded.
        var items: [ImportItem] = []
        for (line, json) in records {
            do {
                let json = try json.get()
                items.append(try Loader.item(csv ? try csvObject(json, className ?? "", realm.schema) : json,
                                             line: line, className: className, schema: realm.schema))
            } catch {
                throw CoveError(error.code, "\(data):\(line): \(error.message)")
            }
        }
        try loadItems(items, realm: realm, className: className, lines: lineCount, data: data)
    }

    /// The schema and its version when `json` is the schema line of a dump.
    private func schemaHeader(_ json: JSONValue) throws(CoveError) -> (Schema, UInt64)? {
        guard case .object(let members) = json, let s = json["$schema"] else { return nil }
        guard members.allSatisfy({ $0.key == "$schema" || $0.key == "$schemaVersion" }) else {
            throw CoveError(.invalidArgument, "the schema line holds only $schema and $schemaVersion")
        }
        var version: UInt64 = 1
        if case .int(let v)? = json["$schemaVersion"] { version = UInt64(max(v, 0)) }
        return (try Schema(jsonText: s.serialized()), version)
    }

    private func loadItems(_ items: [ImportItem], realm: Realm, className: String?, lines: Int, data: String) throws {
        let loader = Loader(realm)
        let lockWait = LockWait(file: file, timeout: wait.timeout)
        let batchSize = min(self.batchSize, max(items.count, 1))
        var progress = ProgressBar(total: items.count * 2)
        var keys: [Int64] = []
        keys.reserveCapacity(items.count)
        var batches = 0
        // Runs one pass over items[range] in batches; returns the index of the item that
        // failed with its error, or nil.
        func pass(_ range: Range<Int>, _ step: (Int) throws(CoveError) -> Void) throws -> (Int, Int, CoveError)? {
            var start = range.lowerBound
            while start < range.upperBound {
                let end = min(start + batchSize, range.upperBound)
                try beginWrite(realm, lockWait)
                for i in start..<end {
                    do {
                        try step(i)
                    } catch {
                        try? realm.cancelWrite()
                        return (start, i, error)
                    }
                }
                try realm.commitWrite()
                progress.advance(end - start)
                start = end
            }
            return nil
        }
        var failure = try pass(0..<items.count) { i throws(CoveError) in
            keys.append(try loader.create(items[i]))
        }
        let created = failure?.0 ?? items.count
        if created > 0 {
            let filled = try pass(0..<created) { i throws(CoveError) in try loader.fill(items[i], key: keys[i]) }
            if failure == nil { failure = filled }
        }
        batches = (items.count + batchSize - 1) / batchSize
        progress.finish()
        let classes = Set(items.map(\.className)).count
        func what(_ n: Int) -> String {
            className.map { objectsText(n, $0) } ?? "\(n) object\(n == 1 ? "" : "s") of \(classes) class\(classes == 1 ? "" : "es")"
        }
        if let (start, i, error) = failure {
            let loaded = min(start, created)
            printError("cove: \(data):\(items[i].line): \(error.message)")
            let batchEnd = items[min(start + batchSize, items.count) - 1].line
            report("imported \(what(loaded)) in \(start / batchSize) batches; stopped at line \(items[i].line): lines \(items[start].line)-\(batchEnd) not loaded",
                   [JSONMember("imported", .int(Int64(loaded))), JSONMember("stopped_at_line", .int(Int64(items[i].line))),
                    JSONMember("error", .string(error.message))], format)
            throw ExitCode(1)
        }
        report("imported \(what(items.count)) from \(lines) lines in \(batches) batches",
               [JSONMember("imported", .int(Int64(items.count))), JSONMember("lines", .int(Int64(lines))),
                JSONMember("batches", .int(Int64(batches)))], format)
    }

    /// The CSV's records as JSON objects of text cells, keyed by the header's names.
    private func csvRecords(_ bytes: [UInt8], _ data: String) throws(CoveError) -> [(line: Int, json: JSONValue)] {
        let rows: [(line: Int, fields: [String])]
        do {
            rows = try CSV.records(bytes)
        } catch {
            throw CoveError(error.code, "\(data): \(error.message)")
        }
        guard let header = rows.first else { return [] }
        return try rows.dropFirst().map { (row) throws(CoveError) in
            guard row.fields.count == header.fields.count else {
                throw CoveError(.invalidArgument, "\(data):\(row.line): \(row.fields.count) fields, the header has \(header.fields.count)")
            }
            return (row.line, .object(zip(header.fields, row.fields).map { JSONMember($0.0, .string($0.1)) }))
        }
    }
}

/// A CSV record (text cells) as the JSON object of a `className`, each cell read as its
/// property's type asks: numbers, true/false, JSON for collections, mixed values and nested
/// objects, text for the rest; an empty cell is null (an empty string for a string property,
/// an empty collection for a collection).
func csvObject(_ record: JSONValue, _ className: String, _ schema: Schema) throws(CoveError) -> JSONValue {
    guard case .object(let cells) = record, let cls = schema[className] else { return record }
    return .object(try cells.map { (cell) throws(CoveError) in
        guard case .string(let text) = cell.value else { return cell }
        if cell.key == "$ref" { return JSONMember(cell.key, Int64(text).map { .int($0) } ?? .string(text)) }
        guard let p = cls[property: cell.key] else { return cell }
        return JSONMember(cell.key, try csvValue(text, p, schema))
    })
}

private func csvValue(_ text: String, _ p: Property, _ schema: Schema) throws(CoveError) -> JSONValue {
    func bad() -> CoveError {
        CoveError(.invalidArgument, "property '\(p.name)' is \(p.typeNotation): cannot read \(JSONValue.quoted(text))")
    }
    if p.collection != .none {
        if text.isEmpty { return p.collection == .map ? .object([]) : .array([]) }
        guard let json = try? JSONValue(parsing: text) else { throw bad() }
        return json
    }
    if text.isEmpty { return p.type == .string && !p.isOptional ? .string("") : .null }
    switch p.type {
    case .bool:
        switch text.lowercased() {
        case "true", "1": return .bool(true)
        case "false", "0": return .bool(false)
        default: throw bad()
        }
    case .int:
        guard let i = Int64(text) else { throw bad() }
        return .int(i)
    case .float, .double:
        if let i = Int64(text) { return .int(i) }
        if let d = Double(text) { return d.isFinite ? .double(d) : .string(text) }
        throw bad()
    case .mixed:
        return (try? JSONValue(parsing: text)) ?? .string(text)
    case .object(let target):
        if text.first == "{" {
            guard let json = try? JSONValue(parsing: text) else { throw bad() }
            return json
        }
        guard let pk = schema[target]?.primaryKeyProperty else { throw bad() }
        return try csvValue(text, pk, schema)
    default:
        return .string(text)
    }
}

/// A progress bar on standard error, drawn only when it is a terminal.
struct ProgressBar {
    let total: Int
    private let terminal = isatty(2) == 1
    private var done = 0

    init(total: Int) { self.total = total }

    mutating func advance(_ steps: Int) {
        done += steps
        guard terminal, total > 0 else { return }
        let width = 30
        let filled = min(done, total) * width / total
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: width - filled) + "]"
        printError("\r\(bar) \(min(done, total) * 100 / total)%", newline: false)
    }

    func finish() {
        if terminal && total > 0 && done > 0 { printError("") }
    }
}

/// The whole file, or nil when it cannot be read.
func readFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    return readAll(fd)
}

/// What is left to read on a file descriptor, or nil on an error.
func readAll(_ fd: Int32) -> [UInt8]? {
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = read(fd, &buffer, buffer.count)
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return nil }
        if n == 0 { return bytes }
        bytes += buffer[0..<n]
    }
}

/// The lines of a text, without their '\n' (a last line without one counts).
func splitLines(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
    var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    if lines.last?.isEmpty == true { lines.removeLast() }
    return lines
}
