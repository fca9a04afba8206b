// The strict JSON parser (RFC 8259): an explicit stack of open containers instead of recursion,
// so nesting costs heap, not thread stack, and is capped at `JSONParser.maxDepth`. Strings are
// checked as UTF-8 byte by byte; errors name the line, column and what was expected.

/// Parses one JSON document from UTF-8 bytes.
struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    static let maxDepth = 512

    private let bytes: UnsafeRawBufferPointer
    private var pos = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// A container still open while its members are parsed.
    private enum Frame {
        case array([JSONValue])
        case object([JSONMember], pendingKey: String)
    }

    /// Parses the whole input as one value with only whitespace around it.
    mutating func parseDocument() throws(CoveError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        if pos < bytes.count { throw error("expected end of input") }
        return value
    }

    private mutating func parseValue() throws(CoveError) -> JSONValue {
        var stack: [Frame] = []
        while true {
            // Read the start of a value; containers are pushed and their first member started.
            skipWhitespace()
            guard pos < bytes.count else { throw error("expected a value") }
            var value: JSONValue
            switch bytes[pos] {
            case UInt8(ascii: "{"):
                if stack.count >= Self.maxDepth { throw error("nesting deeper than \(Self.maxDepth) levels") }
                pos += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "}") {
                    pos += 1
                    value = .object([])
                } else {
                    let key = try parseKey()
                    stack.append(.object([], pendingKey: key))
                    continue
                }
            case UInt8(ascii: "["):
                if stack.count >= Self.maxDepth { throw error("nesting deeper than \(Self.maxDepth) levels") }
                pos += 1
                skipWhitespace()
                if peek() == UInt8(ascii: "]") {
                    pos += 1
                    value = .array([])
                } else {
                    stack.append(.array([]))
                    continue
                }
            case UInt8(ascii: "\""):
                pos += 1
                value = .string(try parseStringBody())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = try parseNumber()
            case UInt8(ascii: "t"):
                try expectLiteral("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try expectLiteral("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try expectLiteral("null")
                value = .null
            default:
                throw error("expected a value")
            }
            // Attach the finished value to the open containers, closing those that end here.
            attach: while true {
                guard let top = stack.popLast() else { return value }
                skipWhitespace()
                switch top {
                case .array(var items):
                    items.append(value)
                    if peek() == UInt8(ascii: ",") {
                        pos += 1
                        stack.append(.array(items))
                        break attach
                    } else if peek() == UInt8(ascii: "]") {
                        pos += 1
                        value = .array(items)
                    } else {
                        throw error("expected ',' or ']' in an array")
                    }
                case .object(var members, let key):
                    members.append(JSONMember(key, value))
                    if peek() == UInt8(ascii: ",") {
                        pos += 1
                        skipWhitespace()
                        let next = try parseKey()
                        stack.append(.object(members, pendingKey: next))
                        break attach
                    } else if peek() == UInt8(ascii: "}") {
                        pos += 1
                        value = .object(members)
                    } else {
                        throw error("expected ',' or '}' in an object")
                    }
                }
            }
        }
    }

    /// Parses `"key"` and the colon after it.
    private mutating func parseKey() throws(CoveError) -> String {
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string key") }
        pos += 1
        let key = try parseStringBody()
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { throw error("expected ':' after an object key") }
        pos += 1
        return key
    }

    private func peek() -> UInt8? {
        pos < bytes.count ? bytes[pos] : nil
    }

    private mutating func skipWhitespace() {
        while pos < bytes.count {
            switch bytes[pos] {
            case 0x20, 0x0A, 0x0D, 0x09: pos += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ word: StaticString) throws(CoveError) {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        for i in 0..<count {
            guard pos < bytes.count, bytes[pos] == start[i] else {
                throw error("expected '\(word)'")
            }
            pos += 1
        }
    }

    /// Parses a string after its opening quote, up to and including the closing quote.
    private mutating func parseStringBody() throws(CoveError) -> String {
        var out: [UInt8] = []
        while true {
            guard pos < bytes.count else { throw error("expected '\"' to end the string") }
            let b = bytes[pos]
            switch b {
            case UInt8(ascii: "\""):
                pos += 1
                // Every byte appended was checked as UTF-8 above, so decoding repairs nothing.
                return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                pos += 1
                try parseEscape(into: &out)
            case 0..<0x20:
                throw error("expected a control character in a string to be escaped")
            case 0x20..<0x80:
                out.append(b)
                pos += 1
            default:
                let length = validUTF8SequenceLength(at: pos)
                guard length > 0 else { throw error("expected valid UTF-8 in a string") }
                for i in 0..<length { out.append(bytes[pos + i]) }
                pos += length
            }
        }
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws(CoveError) {
        guard let c = peek() else { throw error("expected an escape character") }
        pos += 1
        switch c {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if (0xD800...0xDBFF).contains(scalar) {
                guard peek() == UInt8(ascii: "\\"), pos + 1 < bytes.count, bytes[pos + 1] == UInt8(ascii: "u") else {
                    throw error("expected '\\u' with a low surrogate after a high surrogate")
                }
                pos += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00...0xDFFF).contains(low) else {
                    pos -= 6
                    throw error("expected a low surrogate (\\uDC00-\\uDFFF) after a high surrogate")
                }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                pos -= 6
                throw error("expected a high surrogate before a low surrogate")
            }
            // Valid by construction: surrogates were paired above.
            let unicodeScalar = Unicode.Scalar(scalar)!
            out.append(contentsOf: String(Character(unicodeScalar)).utf8)
        default:
            pos -= 1
            throw error("expected one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u after a backslash")
        }
    }

    private mutating func parseHex4() throws(CoveError) -> UInt16 {
        var v: UInt16 = 0
        for _ in 0..<4 {
            guard let c = peek() else { throw error("expected four hex digits after \\u") }
            let d: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
            default: throw error("expected four hex digits after \\u")
            }
            v = v << 4 | UInt16(d)
            pos += 1
        }
        return v
    }

    /// The length of the well-formed UTF-8 sequence starting at `i` (a non-ASCII lead byte), or 0
    /// when it is malformed: overlong, a surrogate, beyond U+10FFFF or cut short.
    private func validUTF8SequenceLength(at i: Int) -> Int {
        let b0 = bytes[i]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch b0 {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: return 0
        }
        guard i + length <= bytes.count, secondRange.contains(bytes[i + 1]) else { return 0 }
        for k in 2..<length where !(0x80...0xBF).contains(bytes[i + k]) { return 0 }
        return length
    }

    private mutating func parseNumber() throws(CoveError) -> JSONValue {
        let start = pos
        var isInteger = true
        if peek() == UInt8(ascii: "-") { pos += 1 }
        guard let first = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            throw error("expected a digit")
        }
        if first == UInt8(ascii: "0") {
            pos += 1
            if let c = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) {
                throw error("expected no leading zero in a number")
            }
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            pos += 1
            guard skipDigits() else { throw error("expected a digit after '.'") }
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isInteger = false
            pos += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { pos += 1 }
            guard skipDigits() else { throw error("expected a digit in the exponent") }
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
        if isInteger, text != "-0", let v = Int64(text) {
            return .int(v)
        }
        guard let d = Double(text), d.isFinite else {
            pos = start
            throw error("expected a number within the range of a double")
        }
        return .double(d)
    }

    /// Skips decimal digits; true when there was at least one.
    @discardableResult
    private mutating func skipDigits() -> Bool {
        let start = pos
        while let c = peek(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) { pos += 1 }
        return pos > start
    }

    /// An error at the current position: "invalid JSON at line L, column C: <what>, found <x>".
    private func error(_ expected: String) -> CoveError {
        var line = 1
        var column = 1
        var i = 0
        let end = min(pos, bytes.count)
        while i < end {
            let b = bytes[i]
            if b == 0x0A {
                line += 1
                column = 1
            } else if b & 0xC0 != 0x80 {
                column += 1
            }
            i += 1
        }
        let found: String
        if pos >= bytes.count {
            found = "end of input"
        } else {
            let b = bytes[pos]
            if b >= 0x20 && b < 0x7F {
                found = "'\(Character(Unicode.Scalar(b)))'"
            } else {
                let hex = String(b, radix: 16, uppercase: true)
                found = "byte 0x\(hex.count < 2 ? "0" + hex : hex)"
            }
        }
        return CoveError(.invalidArgument, "invalid JSON at line \(line), column \(column): \(expected), found \(found)")
    }
}
