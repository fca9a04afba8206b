// A strict JSON reader and a writer, for the changeset lines. The reader takes RFC 8259 JSON only
// (no comments, no trailing commas, no NaN, no lone surrogates, valid UTF-8), refuses duplicate
// members, and stops at a nesting depth and string length given by the limits, so that no input
// can make it recurse deeply or allocate without bound. Numbers are kept as their text: the field
// that reads one decides whether it is an Int64, a UInt64 or a Double.

/// A parsed JSON value. Object members keep their order.
enum JSONValue: Sendable {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    /// What the value is, for messages: `null`, `a number`, `a string`, ...
    var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Reads one JSON value from bytes.
struct JSONReader {
    /// Where the reader stopped, and why.
    struct Failure: Error {
        var offset: Int
        var message: String
    }

    private let bytes: [UInt8]
    private var pos: Int
    private let end: Int
    private let maxDepth: Int
    private let maxStringBytes: Int

    /// The longest number text: far more digits than any Int64 or Double needs.
    private static let maxNumberLength = 400

    /// Reads `bytes[range]`, which must hold exactly one value (white space around it allowed).
    static func parse(_ bytes: [UInt8], _ range: Range<Int>, maxDepth: Int, maxStringBytes: Int) throws(Failure) -> JSONValue {
        var reader = JSONReader(bytes: bytes, pos: range.lowerBound, end: range.upperBound, maxDepth: maxDepth, maxStringBytes: maxStringBytes)
        let value = try reader.value(depth: 0)
        reader.skipWhitespace()
        guard reader.pos == reader.end else { throw reader.failure("expected the end of the line after the value") }
        return value
    }

    private init(bytes: [UInt8], pos: Int, end: Int, maxDepth: Int, maxStringBytes: Int) {
        self.bytes = bytes
        self.pos = pos
        self.end = end
        self.maxDepth = maxDepth
        self.maxStringBytes = maxStringBytes
    }

    private func byte(_ i: Int) -> UInt8? {
        i < end && i >= 0 ? bytes[i] : nil
    }

    private func failure(_ message: String, at offset: Int? = nil) -> Failure {
        var what = message
        if offset == nil {
            if let c = byte(pos) {
                what += c >= 0x20 && c < 0x7F ? ", found '\(Character(Unicode.Scalar(c)))'" : ", found byte 0x\(Hex.digits(UInt64(c), width: 2))"
            } else {
                what += ", found the end of the line"
            }
        }
        return Failure(offset: offset ?? pos, message: what)
    }

    private mutating func skipWhitespace() {
        while let c = byte(pos), c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { pos += 1 }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        skipWhitespace()
        guard let c = byte(pos) else { throw failure("expected a value") }
        switch c {
        case UInt8(ascii: "{"):
            return try object(depth: depth + 1)
        case UInt8(ascii: "["):
            return try array(depth: depth + 1)
        case UInt8(ascii: "\""):
            return .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try number())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            throw failure("expected a value")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let start = pos
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard byte(pos) == expected else { throw failure("invalid literal, expected '\(word)'", at: start) }
            pos += 1
        }
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nesting deeper than \(maxDepth) levels", at: pos) }
        pos += 1
        var members: [(String, JSONValue)] = []
        var names = Set<String>()
        skipWhitespace()
        if byte(pos) == UInt8(ascii: "}") {
            pos += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard byte(pos) == UInt8(ascii: "\"") else { throw failure("expected a member name in quotes") }
            let nameStart = pos
            let name = try string()
            guard names.insert(name).inserted else { throw failure("duplicate member \"\(name.prefix(80))\"", at: nameStart) }
            skipWhitespace()
            guard byte(pos) == UInt8(ascii: ":") else { throw failure("expected ':' after a member name") }
            pos += 1
            members.append((name, try value(depth: depth)))
            skipWhitespace()
            switch byte(pos) {
            case UInt8(ascii: ","): pos += 1
            case UInt8(ascii: "}"): pos += 1; return .object(members)
            default: throw failure("expected ',' or '}' after an object member")
            }
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nesting deeper than \(maxDepth) levels", at: pos) }
        pos += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if byte(pos) == UInt8(ascii: "]") {
            pos += 1
            return .array(items)
        }
        while true {
            items.append(try value(depth: depth))
            skipWhitespace()
            switch byte(pos) {
            case UInt8(ascii: ","): pos += 1
            case UInt8(ascii: "]"): pos += 1; return .array(items)
            default: throw failure("expected ',' or ']' after an array element")
            }
        }
    }

    /// `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, as its text.
    private mutating func number() throws(Failure) -> String {
        let start = pos
        func isDigit(_ c: UInt8?) -> Bool { c.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
        if byte(pos) == UInt8(ascii: "-") { pos += 1 }
        if byte(pos) == UInt8(ascii: "0") {
            pos += 1
            if isDigit(byte(pos)) { throw failure("a number may not start with 0 and another digit", at: start) }
        } else {
            guard isDigit(byte(pos)) else { throw failure("expected a digit") }
            while isDigit(byte(pos)) { pos += 1 }
        }
        if byte(pos) == UInt8(ascii: ".") {
            pos += 1
            guard isDigit(byte(pos)) else { throw failure("expected a digit after the decimal point") }
            while isDigit(byte(pos)) { pos += 1 }
        }
        if let e = byte(pos), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            pos += 1
            if let s = byte(pos), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { pos += 1 }
            guard isDigit(byte(pos)) else { throw failure("expected a digit in the exponent") }
            while isDigit(byte(pos)) { pos += 1 }
        }
        guard pos - start <= Self.maxNumberLength else { throw failure("a number longer than \(Self.maxNumberLength) characters", at: start) }
        return String(decoding: bytes[start..<pos], as: UTF8.self)
    }

    /// A quoted string, unescaped and checked to be UTF-8.
    private mutating func string() throws(Failure) -> String {
        let start = pos
        pos += 1
        var out: [UInt8] = []
        while true {
            guard let c = byte(pos) else { throw failure("unterminated string", at: start) }
            guard out.count <= maxStringBytes else { throw failure("a string longer than \(maxStringBytes) bytes", at: start) }
            switch c {
            case UInt8(ascii: "\""):
                pos += 1
                guard out.count <= maxStringBytes else { throw failure("a string longer than \(maxStringBytes) bytes", at: start) }
                guard let text = String(validating: out, as: UTF8.self) else { throw failure("a string that is not valid UTF-8", at: start) }
                return text
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0..<0x20:
                throw failure("a control character in a string must be escaped")
            default:
                out.append(c)
                pos += 1
            }
        }
    }

    /// One escape at `pos` (the backslash).
    private mutating func escape(into out: inout [UInt8]) throws(Failure) {
        let start = pos
        guard let e = byte(pos + 1) else { throw failure("unterminated escape", at: start) }
        pos += 2
        if let byte = Escape.shared(e) {
            out.append(byte)
            return
        }
        switch e {
        case UInt8(ascii: "u"):
            guard var scalar = hex4(pos) else { throw failure("expected four hex digits after \\u", at: start) }
            pos += 4
            if (0xD800...0xDBFF).contains(scalar) {
                guard byte(pos) == UInt8(ascii: "\\"), byte(pos + 1) == UInt8(ascii: "u"), let low = hex4(pos + 2),
                      (0xDC00...0xDFFF).contains(low) else {
                    throw failure("a high surrogate escape without a low one after it", at: start)
                }
                pos += 6
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let s = Unicode.Scalar(scalar) else { throw failure("a low surrogate escape without a high one", at: start) }
            out.append(contentsOf: String(Character(s)).utf8)
        default:
            throw failure("invalid escape", at: start)
        }
    }

    private func hex4(_ i: Int) -> UInt32? {
        guard i + 4 <= end, let v = Hex.number(bytes[i..<(i + 4)]) else { return nil }
        return UInt32(v)
    }
}

/// Writes JSON text: compact, members in the order written, strings escaped as little as JSON
/// needs (quotes, backslashes and control characters). Commas are the writer's business: each
/// open container remembers whether it has an item yet.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    /// For each open object or array, whether an item has been written in it.
    private var hasItem: [Bool] = []
    /// True between a member's name and its value, which takes no comma.
    private var afterKey = false

    /// Before a value: a comma when the open container already has an item.
    private mutating func beginValue() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasItem.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        hasItem[hasItem.count - 1] = true
    }

    /// A value's text, as it is (a number, `null`, `true`).
    mutating func raw(_ text: String) {
        beginValue()
        bytes.append(contentsOf: text.utf8)
    }

    mutating func string(_ text: String) {
        beginValue()
        quoted(text)
    }

    /// A member's name inside an object; its value comes next.
    mutating func key(_ name: String) {
        beginValue()
        quoted(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    mutating func openObject() {
        open(UInt8(ascii: "{"))
    }

    mutating func closeObject() {
        close(UInt8(ascii: "}"))
    }

    mutating func openArray() {
        open(UInt8(ascii: "["))
    }

    mutating func closeArray() {
        close(UInt8(ascii: "]"))
    }

    private mutating func open(_ bracket: UInt8) {
        beginValue()
        bytes.append(bracket)
        hasItem.append(false)
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        _ = hasItem.popLast()
    }

    private mutating func quoted(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), c]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20: bytes += Array(("\\u00" + Hex.digits(UInt64(c), width: 2)).utf8)
            default: bytes.append(c)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
