// How the tool prints what it found: a table of named columns and rows of JSON values, drawn
// as an aligned table, CSV, JSON lines, a Markdown table or one `name: value` line per cell.
// Every command's --format and the shell's .mode choose among these.
import ArgumentParser
import Cove

/// An output format.
enum OutputMode: String, CaseIterable, ExpressibleByArgument {
    case table, csv, json, markdown, line

    static let names = allCases.map(\.rawValue).joined(separator: "|")
}

/// Named columns and rows of values; a row may be shorter than the columns (missing cells
/// print as null).
struct Table {
    var columns: [String]
    var rows: [[JSONValue]] = []

    init(columns: [String], rows: [[JSONValue]] = []) {
        self.columns = columns
        self.rows = rows
    }

    /// A table of one row from members in order (a record, such as `cove info` prints).
    init(record: [JSONMember]) {
        columns = record.map(\.key)
        rows = [record.map(\.value)]
    }

    /// The text of the table in `mode`, every line ending in a newline; `headers` false leaves
    /// out the header line of table, CSV and Markdown.
    func rendered(_ mode: OutputMode, headers: Bool = true) -> String {
        var out = ""
        switch mode {
        case .json:
            for row in rows { out += Self.jsonLine(columns, row) + "\n" }
        case .csv:
            if headers { out += columns.map(CSV.field).joined(separator: ",") + "\n" }
            for row in rows { out += cells(row).map(CSV.field).joined(separator: ",") + "\n" }
        case .markdown:
            func line(_ cells: [String]) -> String {
                "| " + cells.map { $0.replacingAll("|", with: "\\|").replacingAll("\n", with: " ") }.joined(separator: " | ") + " |\n"
            }
            if headers {
                out += line(columns)
                out += "|" + String(repeating: "---|", count: columns.count) + "\n"
            }
            for row in rows { out += line(cells(row)) }
        case .line:
            let width = columns.map(\.count).max() ?? 0
            for (i, row) in rows.enumerated() {
                if i > 0 { out += "\n" }
                for (name, cell) in zip(columns, cells(row)) {
                    out += String(repeating: " ", count: width - name.count) + name + ": " + cell + "\n"
                }
            }
        case .table:
            let texts = rows.map { cells($0).map { $0.replacingAll("\n", with: "\\n") } }
            var widths = columns.map { headers ? $0.count : 0 }
            for row in texts {
                for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
            }
            func line(_ cells: [String]) -> String {
                var s = ""
                for (i, cell) in cells.enumerated() {
                    s += (i == 0 ? "" : "  ") + cell + String(repeating: " ", count: widths[i] - cell.count)
                }
                while s.last == " " { s.removeLast() }
                return s + "\n"
            }
            if headers && !columns.isEmpty {
                out += line(columns)
                out += line(widths.map { String(repeating: "-", count: $0) })
            }
            for row in texts { out += line(row) }
        }
        return out
    }

    /// The row's cells as text, padded with empty cells to the number of columns.
    private func cells(_ row: [JSONValue]) -> [String] {
        (0..<columns.count).map { $0 < row.count ? Self.text(row[$0]) : "" }
    }

    /// A cell as text: a string as itself, null as nothing, anything else as its JSON.
    static func text(_ value: JSONValue) -> String {
        switch value {
        case .null: return ""
        case .string(let s): return s
        default: return value.serialized()
        }
    }

    /// A row as one JSON object line.
    static func jsonLine(_ columns: [String], _ row: [JSONValue]) -> String {
        JSONValue.object(columns.enumerated().map { JSONMember($0.element, $0.offset < row.count ? row[$0.offset] : .null) }).serialized()
    }
}

/// RFC 4180 CSV: writing one field, and reading records (quoted fields may hold commas,
/// quotes doubled, and line breaks).
enum CSV {
    static func field(_ text: String) -> String {
        let special = text.contains { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }
        if !special && text.first != " " && text.last != " " { return text }
        return "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }

    /// The records of a CSV text with the line (1-based) each starts on.
    /// - Throws: `.invalidArgument` for a quote left open or text after a closing quote.
    static func records(_ bytes: [UInt8]) throws(CoveError) -> [(line: Int, fields: [String])] {
        var records: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var line = 1, start = 1
        var i = 0
        var quoted = false, wasQuoted = false
        func endField() {
            fields.append(String(decoding: field, as: UTF8.self))
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
        }
        func endRecord() {
            endField()
            // A blank line is no record.
            if !(fields.count == 1 && fields[0].isEmpty) { records.append((start, fields)) }
            fields.removeAll()
        }
        while i < bytes.count {
            let b = bytes[i]
            if quoted {
                if b == 0x22 {
                    if i + 1 < bytes.count && bytes[i + 1] == 0x22 {
                        field.append(0x22)
                        i += 1
                    } else {
                        quoted = false
                        wasQuoted = true
                    }
                } else {
                    if b == 0x0A { line += 1 }
                    field.append(b)
                }
            } else {
                switch b {
                case 0x22 where field.isEmpty && !wasQuoted:
                    quoted = true
                case 0x2C:
                    endField()
                case 0x0A:
                    endRecord()
                    line += 1
                    start = line
                case 0x0D where i + 1 < bytes.count && bytes[i + 1] == 0x0A:
                    break
                default:
                    if wasQuoted { throw CoveError(.invalidArgument, "line \(line): text after a closing quote") }
                    field.append(b)
                }
            }
            i += 1
        }
        if quoted { throw CoveError(.invalidArgument, "line \(start): a quoted field is not closed") }
        if !field.isEmpty || !fields.isEmpty || wasQuoted { endRecord() }
        return records
    }
}

extension String {
    /// The string with every `target` replaced by `replacement`.
    func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var out = ""
        for c in self {
            if c == target { out += replacement } else { out.append(c) }
        }
        return out
    }
}
