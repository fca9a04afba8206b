// JSON text from a JSONValue: compact or pretty (two-space indent), object members in their
// stored order, strings escaped as RFC 8259 requires, doubles in the shortest form that reads
// back to the same bits (Swift's `description`).

extension JSONValue {
    /// The JSON text of this value. Compact (no whitespace) unless `pretty`, which puts each
    /// member and element on its own line with a two-space indent. A non-finite double, which
    /// JSON cannot write, is written as `null`.
    /// - Complexity: O(n) in the size of the output.
    public func serialized(pretty: Bool = false) -> String {
        var out = ""
        write(to: &out, pretty: pretty, indent: 0)
        return out
    }

    private func write(to out: inout String, pretty: Bool, indent: Int) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d): out += d.isFinite ? d.description : "null"
        case .string(let s): JSONValue.writeString(s, to: &out)
        case .array(let items):
            if items.isEmpty { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                if pretty { JSONValue.newline(&out, indent + 1) }
                item.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSONValue.newline(&out, indent) }
            out += "]"
        case .object(let members):
            if members.isEmpty { out += "{}"; return }
            out += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { out += "," }
                if pretty { JSONValue.newline(&out, indent + 1) }
                JSONValue.writeString(member.key, to: &out)
                out += pretty ? ": " : ":"
                member.value.write(to: &out, pretty: pretty, indent: indent + 1)
            }
            if pretty { JSONValue.newline(&out, indent) }
            out += "}"
        }
    }

    private static func newline(_ out: inout String, _ indent: Int) {
        out += "\n"
        for _ in 0..<indent { out += "  " }
    }

    /// Appends `s` as a quoted JSON string: `"` and `\` escaped, control characters as `\n`,
    /// `\t`... or `\u00XX`; everything else (non-ASCII included) written as itself.
    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += "\\u00" + (hex.count < 2 ? "0" + hex : hex)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }

    /// `s` as a quoted JSON string literal.
    public static func quoted(_ s: String) -> String {
        var out = ""
        writeString(s, to: &out)
        return out
    }
}
