// The subscription query's lexer: RQL text to tokens, one at a time, for the subset subscriptions
// allow. It follows the query language's rules (docs/query-language.md) for what it reads, and
// recognises the rest of RQL's punctuation (key path dots, `@` operators, arithmetic, `[d]`)
// only to refuse it by name rather than as a mere syntax error.

/// One token of a subscription query and where it starts (a byte offset).
struct SubscriptionToken: Sendable {
    enum Kind: Equatable, Sendable {
        case end
        /// An identifier or keyword, as written.
        case word(String)
        case value(SyncValue)
        /// `$n`
        case argument(Int)
        /// `$name`, one of the named arguments the query was given (such as `$user`)
        case namedArgument(String)
        /// `[c]`
        case caseInsensitive
        /// `== != < <= > >= && || ! ( ) { } ,`, with `=`, `<>`, `=<` and `=>` read as `==`, `!=`,
        /// `<=` and `>=`.
        case symbol(String)
        /// Something of RQL that subscriptions do not allow, and what to call it in the message.
        case refused(String)
    }

    var kind: Kind
    /// The token's first byte and the byte after it.
    var start: Int, end: Int
}

/// Reads a subscription query a token at a time; no read goes past the text's end.
struct SubscriptionLexer {
    let bytes: [UInt8]
    private(set) var pos = 0
    /// Makes the errors: it knows the query's text.
    let errors: SubscriptionErrors
    /// The names `$name` may take; any other `$name` is a syntax error.
    let names: Set<String>

    init(_ query: String, names: Set<String> = []) {
        bytes = Array(query.utf8)
        self.names = names
        errors = SubscriptionErrors(query: query, bytes: bytes)
    }

    private func byte(_ i: Int) -> UInt8? {
        i >= 0 && i < bytes.count ? bytes[i] : nil
    }

    private static func isDigit(_ c: UInt8?) -> Bool {
        c.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false
    }

    private static func isWordByte(_ c: UInt8?) -> Bool {
        guard let c else { return false }
        return (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
            || c == UInt8(ascii: "_") || isDigit(c)
    }

    mutating func next() throws(SyncError) -> SubscriptionToken {
        while let c = byte(pos), c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { pos += 1 }
        let start = pos
        guard let c = byte(pos) else { return SubscriptionToken(kind: .end, start: pos, end: pos) }
        let kind: SubscriptionToken.Kind
        func two(_ second: UInt8, _ both: String, _ one: String) -> SubscriptionToken.Kind {
            if byte(pos + 1) == second {
                pos += 2
                return .symbol(both)
            }
            pos += 1
            return .symbol(one)
        }
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            kind = try number()
        case UInt8(ascii: "-"), UInt8(ascii: "+"):
            if Self.isDigit(byte(pos + 1)) || (byte(pos + 1) == UInt8(ascii: ".") && Self.isDigit(byte(pos + 2))) {
                kind = try number()
            } else {
                pos += 1
                kind = .refused("arithmetic ('\(Character(Unicode.Scalar(c)))')")
            }
        case UInt8(ascii: "."):
            if Self.isDigit(byte(pos + 1)) {
                kind = try number()
            } else {
                pos += 1
                kind = .refused("a key path through a link ('.')")
            }
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            kind = .value(.string(try string()))
        case UInt8(ascii: "="):
            switch byte(pos + 1) {
            case UInt8(ascii: "="): pos += 2; kind = .symbol("==")
            case UInt8(ascii: "<"): pos += 2; kind = .symbol("<=")
            case UInt8(ascii: ">"): pos += 2; kind = .symbol(">=")
            default: pos += 1; kind = .symbol("==")
            }
        case UInt8(ascii: "!"): kind = two(UInt8(ascii: "="), "!=", "!")
        case UInt8(ascii: ">"): kind = two(UInt8(ascii: "="), ">=", ">")
        case UInt8(ascii: "<"):
            if byte(pos + 1) == UInt8(ascii: ">") {
                pos += 2
                kind = .symbol("!=")
            } else {
                kind = two(UInt8(ascii: "="), "<=", "<")
            }
        case UInt8(ascii: "&"), UInt8(ascii: "|"):
            guard byte(pos + 1) == c else { throw errors.syntax("invalid character '\(Character(Unicode.Scalar(c)))'", at: pos) }
            pos += 2
            kind = .symbol(c == UInt8(ascii: "&") ? "&&" : "||")
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: ","):
            pos += 1
            kind = .symbol(String(Character(Unicode.Scalar(c))))
        case UInt8(ascii: "["):
            kind = modifier()
        case UInt8(ascii: "*"), UInt8(ascii: "/"):
            pos += 1
            kind = .refused("arithmetic ('\(Character(Unicode.Scalar(c)))')")
        case UInt8(ascii: "@"):
            pos += 1
            while Self.isWordByte(byte(pos)) { pos += 1 }
            let name = String(decoding: bytes[start..<pos], as: UTF8.self)
            kind = .refused(name == "@count" || name == "@size" || name == "@sum" || name == "@avg" || name == "@min" || name == "@max"
                            ? "the aggregate \(name)" : "'\(name)'")
        case UInt8(ascii: "%"):
            pos += 1
            kind = .refused("'%' arguments (use $0, $1, ...)")
        case UInt8(ascii: "$"):
            kind = try argument()
        default:
            guard Self.isWordByte(c) else { throw errors.invalidCharacter(at: pos) }
            kind = try word()
        }
        return SubscriptionToken(kind: kind, start: start, end: pos)
    }

    /// `[c]` is allowed; `[d]`, `[cd]` and positions (`tags[0]`) are not.
    private mutating func modifier() -> SubscriptionToken.Kind {
        let c = UInt8(ascii: "c"), d = UInt8(ascii: "d"), close = UInt8(ascii: "]")
        switch (byte(pos + 1), byte(pos + 2), byte(pos + 3)) {
        case (c, close, _):
            pos += 3
            return .caseInsensitive
        case (d, close, _), (c, d, close):
            pos += byte(pos + 2) == close ? 3 : 4
            return .refused("ignoring diacritics ([d])")
        default:
            pos += 1
            return .refused("a subscript ('[')")
        }
    }

    /// `$n`, or `$name` when the query was given that named argument; `$Kn` (a property name
    /// given as an argument) is refused.
    private mutating func argument() throws(SyncError) -> SubscriptionToken.Kind {
        let start = pos
        pos += 1
        while Self.isWordByte(byte(pos)) { pos += 1 }
        let digits = bytes[(start + 1)..<pos]
        let name = String(decoding: digits, as: UTF8.self)
        if names.contains(name) { return .namedArgument(name) }
        if digits.first == UInt8(ascii: "K") { return .refused("a property name given as an argument ('$K')") }
        guard !digits.isEmpty, digits.allSatisfy({ Self.isDigit($0) }) else {
            throw errors.syntax("invalid argument '\(errors.source(start, pos))'", at: start, detail: "arguments are $0, $1, ...")
        }
        guard digits.count <= 6, let n = Int(String(decoding: digits, as: UTF8.self)) else {
            throw errors.syntax("argument '\(errors.source(start, pos))' is out of range", at: start)
        }
        return .argument(n)
    }

    /// A word: an identifier, a keyword, or a literal that starts with letters (`T1:0`,
    /// `oid(…)`, `uuid(…)`).
    private mutating func word() throws(SyncError) -> SubscriptionToken.Kind {
        let start = pos
        if bytes[pos] == UInt8(ascii: "T"), let date = try timestamp() { return .value(.date(date)) }
        while Self.isWordByte(byte(pos)) { pos += 1 }
        let word = String(decoding: bytes[start..<pos], as: UTF8.self)
        if (word == "oid" || word == "uuid"), byte(pos) == UInt8(ascii: "(") {
            let open = pos
            while let c = byte(pos), c != UInt8(ascii: ")") { pos += 1 }
            guard byte(pos) == UInt8(ascii: ")") else { throw errors.syntax("unterminated \(word)(…)", at: start) }
            let inner = String(decoding: bytes[(open + 1)..<pos], as: UTF8.self)
            pos += 1
            do {
                return .value(word == "oid" ? .objectId(try SyncObjectId(hex: inner)) : .uuid(try SyncUUID(text: inner)))
            } catch {
                throw errors.syntax(error.message, at: start)
            }
        }
        return .word(word)
    }

    /// `T<seconds>:<nanoseconds>` at `pos`, or nil (consuming nothing) when the text is not of
    /// that form.
    private mutating func timestamp() throws(SyncError) -> SyncDate? {
        var i = pos + 1
        func signedDigits() -> (text: String, negative: Bool)? {
            let from = i
            if byte(i) == UInt8(ascii: "-") { i += 1 }
            let digitsFrom = i
            while Self.isDigit(byte(i)) { i += 1 }
            guard i > digitsFrom else { return nil }
            return (String(decoding: bytes[from..<i], as: UTF8.self), bytes[from] == UInt8(ascii: "-"))
        }
        guard let seconds = signedDigits(), byte(i) == UInt8(ascii: ":") else { return nil }
        i += 1
        guard let nanos = signedDigits(), !Self.isWordByte(byte(i)) else { return nil }
        let start = pos
        pos = i
        guard let s = Int64(seconds.text), let n = Int32(nanos.text) else {
            throw errors.syntax("invalid timestamp '\(errors.source(start, pos))'", at: start, detail: "a part is out of range")
        }
        if seconds.negative && n > 0 {
            throw errors.syntax("invalid timestamp '\(errors.source(start, pos))'", at: start, detail: "the seconds and nanoseconds must have the same sign")
        }
        do {
            return try SyncDate(seconds: s, nanoseconds: n)
        } catch {
            throw errors.syntax("invalid timestamp '\(errors.source(start, pos))'", at: start, detail: error.message)
        }
    }

    /// An int (decimal or `0x` hex) or a double, with an optional sign.
    private mutating func number() throws(SyncError) -> SubscriptionToken.Kind {
        let start = pos
        if byte(pos) == UInt8(ascii: "-") || byte(pos) == UInt8(ascii: "+") { pos += 1 }
        if byte(pos) == UInt8(ascii: "0"), byte(pos + 1) == UInt8(ascii: "x") || byte(pos + 1) == UInt8(ascii: "X") {
            pos += 2
            let digits = pos
            while let c = byte(pos), Hex.value(c) != nil { pos += 1 }
            let negative = bytes[start] == UInt8(ascii: "-")
            guard pos > digits, !Self.isWordByte(byte(pos)), let magnitude = Hex.number(bytes[digits..<pos]),
                  magnitude <= (negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)) else {
                while Self.isWordByte(byte(pos)) { pos += 1 }
                throw errors.syntax("invalid number '\(errors.source(start, pos))'", at: start, detail: "integers are 64-bit signed")
            }
            return .value(.int(negative ? Int64(truncatingIfNeeded: 0 &- magnitude) : Int64(magnitude)))
        }
        var isDouble = false
        while Self.isDigit(byte(pos)) { pos += 1 }
        // A date written as YYYY-MM-DD: refused with the form to use.
        if byte(pos) == UInt8(ascii: "-"), Self.isDigit(byte(pos + 1)), bytes[start] != UInt8(ascii: "-") {
            throw errors.syntax("dates in a subscription are written T<seconds>:<nanoseconds>", at: start)
        }
        if byte(pos) == UInt8(ascii: "."), Self.isDigit(byte(pos + 1)) {
            isDouble = true
            pos += 1
            while Self.isDigit(byte(pos)) { pos += 1 }
        }
        if let e = byte(pos), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var i = pos + 1
            if byte(i) == UInt8(ascii: "-") || byte(i) == UInt8(ascii: "+") { i += 1 }
            if Self.isDigit(byte(i)) {
                isDouble = true
                pos = i
                while Self.isDigit(byte(pos)) { pos += 1 }
            }
        }
        if Self.isWordByte(byte(pos)) || byte(pos) == UInt8(ascii: ".") {
            while Self.isWordByte(byte(pos)) || byte(pos) == UInt8(ascii: ".") { pos += 1 }
            throw errors.syntax("invalid number '\(errors.source(start, pos))'", at: start)
        }
        let text = String(decoding: bytes[start..<pos], as: UTF8.self)
        if isDouble {
            guard let d = Double(text), d.isFinite else { throw errors.syntax("number '\(text)' is out of range", at: start) }
            return .value(.double(d))
        }
        guard let v = Int64(text) else {
            throw errors.syntax("integer '\(text)' is out of range", at: start, detail: "integers are 64-bit signed")
        }
        return .value(.int(v))
    }

    /// A quoted string, unescaped as the query language does: `\' \" \\ \/ \b \f \n \r \t \0`
    /// and `\uXXXX`.
    private mutating func string() throws(SyncError) -> String {
        let start = pos
        let quote = bytes[pos]
        pos += 1
        var out: [UInt8] = []
        while true {
            guard let c = byte(pos) else { throw errors.syntax("unterminated string", at: start) }
            pos += 1
            if c == quote { return String(decoding: out, as: UTF8.self) }
            guard c == UInt8(ascii: "\\") else {
                out.append(c)
                continue
            }
            guard let e = byte(pos) else { throw errors.syntax("unterminated string", at: start) }
            pos += 1
            if let byte = Escape.shared(e) {
                out.append(byte)
                continue
            }
            switch e {
            case UInt8(ascii: "'"): out.append(e)
            case UInt8(ascii: "0"): out.append(0x00)
            case UInt8(ascii: "u"):
                // Surrogates are refused: a subscription's strings are short and rarely need them.
                guard pos + 4 <= bytes.count, let v = Hex.number(bytes[pos..<(pos + 4)]), let scalar = Unicode.Scalar(UInt32(v)) else {
                    throw errors.syntax("invalid escape", at: pos - 2, detail: "expected \\u and four hex digits of a character that is not a surrogate")
                }
                pos += 4
                out.append(contentsOf: String(Character(scalar)).utf8)
            default:
                throw errors.syntax("invalid escape in a string", at: pos - 2,
                                    detail: "a string allows \\' \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\0 and \\uXXXX")
            }
        }
    }
}

/// Makes a subscription query's error messages: the query, quoted, and a position in it.
struct SubscriptionErrors: Sendable {
    let query: String
    let bytes: [UInt8]

    /// The text of bytes `from..<to`, clamped, cut after 40 characters.
    func source(_ from: Int, _ to: Int) -> String {
        let a = max(0, min(from, bytes.count)), b = max(a, min(to, bytes.count))
        let text = String(decoding: bytes[a..<b], as: UTF8.self)
        return text.unicodeScalars.count > 40 ? String(String.UnicodeScalarView(text.unicodeScalars.prefix(40))) + "…" : text
    }

    /// "position N" (1-based, in characters).
    func location(_ offset: Int) -> String {
        let end = max(0, min(offset, bytes.count))
        return "position \(bytes[..<end].filter { $0 & 0xC0 != 0x80 }.count + 1)"
    }

    private var quoted: String {
        let scalars = query.unicodeScalars
        var text = scalars.count <= 200 ? query : String(String.UnicodeScalarView(scalars.prefix(200))) + "…"
        text = text.replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(text)\""
    }

    func syntax(_ what: String, at offset: Int, detail: String? = nil) -> SyncError {
        SyncError(.querySyntax, "syntax error in subscription query \(quoted): \(what) at \(location(offset))" + (detail.map { ": \($0)" } ?? ""))
    }

    func notAllowed(_ what: String, at offset: Int, detail: String? = nil) -> SyncError {
        SyncError(.queryNotAllowed, "subscription query \(quoted): \(what) is not allowed in a subscription (at \(location(offset)))"
                  + (detail.map { ": \($0)" } ?? ""))
    }

    func invalid(_ what: String, at offset: Int) -> SyncError {
        SyncError(.queryInvalid, "subscription query \(quoted): \(what) (at \(location(offset)))")
    }

    func invalidCharacter(at offset: Int) -> SyncError {
        guard let c = offset < bytes.count ? bytes[offset] : nil else { return syntax("unexpected end of the query", at: offset) }
        if c < 0x20 || c == 0x7F { return syntax("invalid character U+00\(Hex.digits(UInt64(c), width: 2).uppercased())", at: offset) }
        if c >= 0x80 { return syntax("invalid character '\(source(offset, offset + 4).prefix(1))'", at: offset, detail: "names are ASCII") }
        return syntax("invalid character '\(Character(Unicode.Scalar(c)))'", at: offset)
    }
}

extension String {
    /// Every occurrence of `target` replaced (the standard library alone has no such call).
    fileprivate func replacingOccurrences(of target: Character, with replacement: String) -> String {
        var out = ""
        for c in self {
            if c == target { out += replacement } else { out.append(c) }
        }
        return out
    }
}
