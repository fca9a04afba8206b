// The query language's lexer: RQL text to tokens, one at a time, by longest match as realm-core's
// flex scanner does (so `age-5`, `NOT0` and `truepredicates` are identifiers and `-5` is one
// number). Literals are decoded here: strings unescaped, numbers, timestamps, ObjectIds, UUIDs and
// B64 text. QueryParser asks for tokens as it goes, so the first error in the text is the one
// reported.
import FoundationEssentials

/// A word that RQL gives a meaning. Hard keywords can never name a property; the others name one
/// wherever an operator or a descriptor cannot stand (`sort == 1 SORT(sort ASC)`).
enum QueryKeyword: Equatable, Sendable {
    case and, or, not, anyOf, allOf, noneOf, `true`, `false`, null, truePredicate, falsePredicate, subquery, obj
    case `in`, beginsWith, endsWith, contains, like, text, between
    case sort, distinct, limit, offset, ascending, descending, bin, binary
    case first, last, size

    /// True for the keywords that cannot be a property name.
    var isHard: Bool {
        switch self {
        case .and, .or, .not, .anyOf, .allOf, .noneOf, .true, .false, .null, .truePredicate, .falsePredicate, .subquery, .obj:
            return true
        default:
            return false
        }
    }

    /// The keyword `word` spells, if any. Most keywords match in any letter case; `in not any some
    /// all none true false first last size` only all-lower or all-upper (`True` is an identifier).
    static func of(_ word: [UInt8]) -> QueryKeyword? {
        guard word.count >= 2, word.count <= 14 else { return nil }
        var lower = ""
        var isLower = true
        var isUpper = true
        for b in word {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"):
                isUpper = false
                lower.unicodeScalars.append(Unicode.Scalar(b))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"):
                isLower = false
                lower.unicodeScalars.append(Unicode.Scalar(b + 32))
            default:
                return nil
            }
        }
        switch lower {
        case "and": return .and
        case "or": return .or
        case "beginswith": return .beginsWith
        case "endswith": return .endsWith
        case "contains": return .contains
        case "like": return .like
        case "text": return .text
        case "between": return .between
        case "truepredicate": return .truePredicate
        case "falsepredicate": return .falsePredicate
        case "subquery": return .subquery
        case "sort": return .sort
        case "distinct": return .distinct
        case "limit": return .limit
        case "offset": return .offset
        case "asc", "ascending": return .ascending
        case "desc", "descending": return .descending
        case "null", "nil": return .null
        case "bin": return .bin
        case "binary": return .binary
        case "obj": return .obj
        default: break
        }
        guard isLower || isUpper else { return nil }
        switch lower {
        case "in": return .in
        case "not": return .not
        case "any", "some": return .anyOf
        case "all": return .allOf
        case "none": return .noneOf
        case "true": return .true
        case "false": return .false
        case "first": return .first
        case "last": return .last
        case "size": return .size
        default: return nil
        }
    }
}

/// Operators and punctuation. `=` lexes as `==`, `<>` as `!=`, `=<` as `<=` and `=>` as `>=`.
enum QuerySymbol: String, Equatable, Sendable {
    case and = "&&", or = "||", not = "!"
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case plus = "+", minus = "-", star = "*", slash = "/"
    case leftParen = "(", rightParen = ")", leftBrace = "{", rightBrace = "}"
    case leftBracket = "[", rightBracket = "]", comma = ",", dot = "."
}

/// One token and the byte range of the query text it was read from.
struct QueryToken: Sendable {
    enum Kind: Equatable, Sendable {
        case end
        /// An identifier (escaped whitespace resolved) and the keyword it spells, if any.
        case word(String, keyword: QueryKeyword?)
        /// An integer; `natural` when written as unsigned decimal digits (what LIMIT and `[n]` take).
        case integer(Int64, natural: Bool)
        case double(Double)
        case float(Float)
        case string(String)
        /// `B64"…"`: the decoded bytes (a string literal, or the bytes of `bin(B64"…")`).
        case base64([UInt8])
        case timestamp(Timestamp)
        case objectId(ObjectId)
        case uuid(UUIDValue)
        /// `O<n>`
        case objectKey(Int64)
        /// `L<t>:<n>`
        case link(classKey: UInt32, objectKey: Int64)
        /// `$n`
        case argument(Int)
        /// `$Kn`
        case keyPathArgument(Int)
        /// `%@`
        case nextArgument
        /// `%K`
        case nextKeyPathArgument
        /// `@count`, `@links`, …: the name after the `@`.
        case at(String)
        /// `[c]`, `[d]`, `[cd]`
        case modifier(QueryStringOptions)
        case symbol(QuerySymbol)
    }

    var kind: Kind
    /// Byte offsets of the token in the query's UTF-8.
    var start: Int
    var end: Int
}

/// Splits RQL text into tokens on demand. Every read is bounds-checked; malformed text throws
/// `CoveError(.querySyntax)` naming the query and the position.
struct QueryLexer {
    /// The query as given, for messages.
    let query: String
    /// Its UTF-8 bytes.
    let bytes: [UInt8]
    private var pos = 0

    /// The `@` names RQL knows.
    private static let atNames: Set<String> = ["count", "size", "min", "max", "sum", "avg", "links", "type", "keys", "values"]

    init(_ query: String) {
        self.query = query
        self.bytes = Array(query.utf8)
    }

    // MARK: Tokens

    /// The next token; `.end` (again and again) once the text is used up.
    mutating func next() throws(CoveError) -> QueryToken {
        skipWhitespace()
        let start = pos
        guard let c = byte(at: pos) else { return QueryToken(kind: .end, start: pos, end: pos) }
        let kind: QueryToken.Kind
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            kind = try lexNumber(signed: false)
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            if startsNumber(at: pos + 1) || startsInfinityOrNaN(at: pos + 1) {
                kind = try lexNumber(signed: true)
            } else {
                pos += 1
                kind = .symbol(c == UInt8(ascii: "+") ? .plus : .minus)
            }
        case UInt8(ascii: "."):
            if let d = byte(at: pos + 1), Self.isDigit(d) {
                kind = try lexNumber(signed: false)
            } else {
                pos += 1
                kind = .symbol(.dot)
            }
        case UInt8(ascii: "'"), UInt8(ascii: "\""):
            kind = .string(try lexString())
        case UInt8(ascii: "@"):
            kind = try lexAt()
        case UInt8(ascii: "%"):
            if byte(at: pos + 1) == UInt8(ascii: "@") {
                kind = .nextArgument
            } else if byte(at: pos + 1) == UInt8(ascii: "K") {
                kind = .nextKeyPathArgument
            } else {
                throw invalidCharacter(at: pos)
            }
            pos += 2
        case UInt8(ascii: "="):
            switch byte(at: pos + 1) {
            case UInt8(ascii: "="): pos += 2; kind = .symbol(.equal)
            case UInt8(ascii: "<"): pos += 2; kind = .symbol(.lessOrEqual)
            case UInt8(ascii: ">"): pos += 2; kind = .symbol(.greaterOrEqual)
            default: pos += 1; kind = .symbol(.equal)
            }
        case UInt8(ascii: "!"):
            if byte(at: pos + 1) == UInt8(ascii: "=") {
                pos += 2
                kind = .symbol(.notEqual)
            } else {
                pos += 1
                kind = .symbol(.not)
            }
        case UInt8(ascii: "<"):
            switch byte(at: pos + 1) {
            case UInt8(ascii: "="): pos += 2; kind = .symbol(.lessOrEqual)
            case UInt8(ascii: ">"): pos += 2; kind = .symbol(.notEqual)
            default: pos += 1; kind = .symbol(.less)
            }
        case UInt8(ascii: ">"):
            if byte(at: pos + 1) == UInt8(ascii: "=") {
                pos += 2
                kind = .symbol(.greaterOrEqual)
            } else {
                pos += 1
                kind = .symbol(.greater)
            }
        case UInt8(ascii: "&"), UInt8(ascii: "|"):
            guard byte(at: pos + 1) == c else {
                let pair = c == UInt8(ascii: "&") ? "&&" : "||"
                throw error("invalid character '\(Character(Unicode.Scalar(c)))'", at: pos, detail: "did you mean '\(pair)'?")
            }
            pos += 2
            kind = .symbol(c == UInt8(ascii: "&") ? .and : .or)
        case UInt8(ascii: "["):
            if let options = modifier(at: pos) {
                pos += options == [.caseInsensitive, .diacriticInsensitive] ? 4 : 3
                kind = .modifier(options)
            } else {
                pos += 1
                kind = .symbol(.leftBracket)
            }
        case UInt8(ascii: "*"): pos += 1; kind = .symbol(.star)
        case UInt8(ascii: "/"): pos += 1; kind = .symbol(.slash)
        case UInt8(ascii: "("): pos += 1; kind = .symbol(.leftParen)
        case UInt8(ascii: ")"): pos += 1; kind = .symbol(.rightParen)
        case UInt8(ascii: "{"): pos += 1; kind = .symbol(.leftBrace)
        case UInt8(ascii: "}"): pos += 1; kind = .symbol(.rightBrace)
        case UInt8(ascii: "]"): pos += 1; kind = .symbol(.rightBracket)
        case UInt8(ascii: ","): pos += 1; kind = .symbol(.comma)
        default:
            guard Self.startsIdentifier(c) else { throw invalidCharacter(at: pos) }
            kind = try lexWord()
        }
        return QueryToken(kind: kind, start: start, end: pos)
    }

    // MARK: Numbers

    /// True when an unsigned number starts at `i`: a digit, or `.` and a digit.
    private func startsNumber(at i: Int) -> Bool {
        guard let c = byte(at: i) else { return false }
        if Self.isDigit(c) { return true }
        if c == UInt8(ascii: "."), let d = byte(at: i + 1), Self.isDigit(d) { return true }
        return false
    }

    /// True when `inf`, `infinity` or `nan` (any case) starts at `i` and ends there.
    private func startsInfinityOrNaN(at i: Int) -> Bool {
        var end = i
        while let c = byte(at: end), Self.isIdentifierByte(c) { end += 1 }
        return Self.infinityOrNaN(bytes[i..<end]) != nil
    }

    private static func infinityOrNaN(_ word: ArraySlice<UInt8>) -> Double? {
        guard word.count >= 3, word.count <= 8 else { return nil }
        let lower = String(decoding: word.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        switch lower {
        case "inf", "infinity": return .infinity
        case "nan": return .nan
        default: return nil
        }
    }

    /// An integer, a float, `±inf`/`nan`, or a `YYYY-MM-DD@HH:MM:SS` timestamp, from `pos`.
    private mutating func lexNumber(signed: Bool) throws(CoveError) -> QueryToken.Kind {
        let start = pos
        var negative = false
        if signed {
            negative = bytes[pos] == UInt8(ascii: "-")
            pos += 1
            if let c = byte(at: pos), !Self.isDigit(c), c != UInt8(ascii: ".") {
                // A sign glued to inf, infinity or nan (checked by the caller).
                let wordStart = pos
                while let c = byte(at: pos), Self.isIdentifierByte(c) { pos += 1 }
                let value = Self.infinityOrNaN(bytes[wordStart..<pos]) ?? .nan
                return .double(negative ? -value : value)
            }
        }
        // Hexadecimal.
        if byte(at: pos) == UInt8(ascii: "0"), let x = byte(at: pos + 1), x == UInt8(ascii: "x") || x == UInt8(ascii: "X") {
            pos += 2
            let digitsStart = pos
            var magnitude: UInt64 = 0
            var overflow = false
            while let c = byte(at: pos), let d = Self.hexValue(c) {
                if magnitude > (UInt64.max >> 4) { overflow = true }
                magnitude = magnitude &<< 4 | UInt64(d)
                pos += 1
            }
            guard pos > digitsStart else { throw error("expected hex digits after '0x'", at: pos, found: describeByte(at: pos)) }
            try checkNothingGlued(to: start, what: "number")
            let limit: UInt64 = negative ? UInt64(Int64.max) + 1 : UInt64(Int64.max)
            guard !overflow, magnitude <= limit else { throw outOfRange(start) }
            let value = negative ? (magnitude == limit ? Int64.min : -Int64(magnitude)) : Int64(magnitude)
            return .integer(value, natural: false)
        }
        // A date: digits '-' digits '-' digits, then '@' or 'T' and the time.
        if !signed, let timestamp = try lexDate() {
            return .timestamp(timestamp)
        }
        var isFloat = false
        var isFloat32 = false
        skipDigits()
        if byte(at: pos) == UInt8(ascii: ".") {
            isFloat = true
            pos += 1
            skipDigits()
        }
        if let e = byte(at: pos), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            var i = pos + 1
            if let s = byte(at: i), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { i += 1 }
            if let d = byte(at: i), Self.isDigit(d) {
                isFloat = true
                pos = i
                skipDigits()
            }
        }
        let numberEnd = pos
        if byte(at: pos) == UInt8(ascii: "f") {
            isFloat = true
            isFloat32 = true
            pos += 1
        }
        try checkNothingGlued(to: start, what: "number")
        let text = String(decoding: bytes[start..<numberEnd], as: UTF8.self)
        if isFloat32 {
            guard let f = Float(text) else { throw error("invalid number '\(source(start, pos))'", at: start) }
            return .float(f)
        }
        if isFloat {
            guard let d = Double(text) else { throw error("invalid number '\(source(start, pos))'", at: start) }
            return .double(d)
        }
        guard let v = Int64(text) else { throw outOfRange(start) }
        return .integer(v, natural: !signed)
    }

    private func outOfRange(_ start: Int) -> CoveError {
        error("integer '\(source(start, pos))' is out of range", at: start, detail: "integers are 64-bit signed")
    }

    /// `YYYY-MM-DD@HH:MM:SS[:NANOS]` (or `T` for `@`) from `pos`, or nil, consuming nothing, when
    /// the text is not `digits-digits-digits`. Past that prefix nothing else could parse, so a
    /// malformed rest is an invalid timestamp.
    private mutating func lexDate() throws(CoveError) -> Timestamp? {
        let start = pos
        var i = pos
        func digits(_ i: inout Int) -> Int64? {
            let from = i
            var v: Int64 = 0
            while let c = byte(at: i), Self.isDigit(c) {
                if v < 1_000_000_000_000 { v = v * 10 + Int64(c - UInt8(ascii: "0")) }
                i += 1
            }
            return i > from ? v : nil
        }
        guard let year = digits(&i), byte(at: i) == UInt8(ascii: "-") else { return nil }
        i += 1
        guard let month = digits(&i), byte(at: i) == UInt8(ascii: "-") else { return nil }
        i += 1
        guard let day = digits(&i) else { return nil }
        // From here the text is a timestamp or an error.
        var end = i
        while let c = byte(at: end), Self.isIdentifierByte(c) || c == UInt8(ascii: ":") || c == UInt8(ascii: "@") { end += 1 }
        pos = end
        let shown = source(start, end)
        func invalid(_ why: String) -> CoveError {
            error("invalid timestamp '\(shown)'", at: start, detail: why)
        }
        let expectedForm = "expected YYYY-MM-DD@HH:MM:SS[:NANOS] or YYYY-MM-DDTHH:MM:SS[:NANOS]"
        guard let sep = byte(at: i), sep == UInt8(ascii: "@") || sep == UInt8(ascii: "T") else { throw invalid(expectedForm) }
        i += 1
        guard let hour = digits(&i), byte(at: i) == UInt8(ascii: ":") else { throw invalid(expectedForm) }
        i += 1
        guard let minute = digits(&i), byte(at: i) == UInt8(ascii: ":") else { throw invalid(expectedForm) }
        i += 1
        guard let second = digits(&i) else { throw invalid(expectedForm) }
        var nanos: Int64 = 0
        if byte(at: i) == UInt8(ascii: ":") {
            i += 1
            guard let n = digits(&i) else { throw invalid(expectedForm) }
            nanos = n
        }
        guard i == end else { throw invalid(expectedForm) }
        guard year >= 1900 else { throw invalid("the year must be 1900 or later") }
        guard year <= 999_999_999 else { throw invalid("the year is out of range") }
        guard (1...12).contains(month) else { throw invalid("the month must be 1 to 12") }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays: [Int64] = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        let daysInMonth = monthDays[Int(month - 1)]
        guard day >= 1, day <= daysInMonth else { throw invalid("day \(day) is not in month \(month)") }
        guard hour <= 23 else { throw invalid("the hour must be 0 to 23") }
        guard minute <= 59 else { throw invalid("the minute must be 0 to 59") }
        guard second <= 59 else { throw invalid("the second must be 0 to 59") }
        guard nanos <= 999_999_999 else { throw invalid("the nanoseconds must be 0 to 999999999") }
        // Days since 1970-01-01 of the civil date (the days-from-civil algorithm; year >= 1900, so
        // no negative eras).
        let y = month <= 2 ? year - 1 : year
        let era = y / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second
        return Timestamp(seconds: seconds, nanoseconds: Int32(nanos))
    }

    /// `T<seconds>:<nanoseconds>` from `pos` (at the `T`), or nil when the text is not of that form.
    private mutating func lexSecondsTimestamp() throws(CoveError) -> Timestamp? {
        let start = pos
        var i = pos + 1
        func signedDigits(_ i: inout Int) -> (value: Int64, negative: Bool, overflow: Bool)? {
            var negative = false
            var j = i
            if let s = byte(at: j), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") {
                negative = s == UInt8(ascii: "-")
                j += 1
            }
            let from = j
            var v: Int64 = 0
            var overflow = false
            while let c = byte(at: j), Self.isDigit(c) {
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int64(c - UInt8(ascii: "0")))
                if o1 || o2 { overflow = true } else { v = a }
                j += 1
            }
            guard j > from else { return nil }
            i = j
            return (negative ? -v : v, negative, overflow)
        }
        guard let seconds = signedDigits(&i), byte(at: i) == UInt8(ascii: ":") else { return nil }
        i += 1
        guard let nanos = signedDigits(&i) else { return nil }
        pos = i
        let shown = source(start, i)
        func invalid(_ why: String) -> CoveError {
            error("invalid timestamp '\(shown)'", at: start, detail: why)
        }
        if let c = byte(at: pos), Self.isIdentifierByte(c) { throw invalid("expected T<seconds>:<nanoseconds>") }
        guard !seconds.overflow else { throw invalid("the seconds are out of range") }
        guard !nanos.overflow, nanos.value > -1_000_000_000, nanos.value < 1_000_000_000 else {
            throw invalid("the nanoseconds must be within ±999999999")
        }
        if (seconds.value > 0 && nanos.value < 0) || (seconds.value < 0 && nanos.value > 0) || (seconds.negative && nanos.value > 0) {
            throw invalid("the seconds and nanoseconds must have the same sign")
        }
        return Timestamp(seconds: seconds.value, nanoseconds: Int32(nanos.value))
    }

    private mutating func skipDigits() {
        while let c = byte(at: pos), Self.isDigit(c) { pos += 1 }
    }

    /// A number directly followed by letters (`5abc`, `1e`, `0x1G`) is an error rather than two tokens.
    private func checkNothingGlued(to start: Int, what: String) throws(CoveError) {
        guard let c = byte(at: pos), Self.isIdentifierByte(c), c != UInt8(ascii: "-") else { return }
        var end = pos
        while let c = byte(at: end), Self.isIdentifierByte(c), c != UInt8(ascii: "-") { end += 1 }
        throw error("invalid \(what) '\(source(start, end))'", at: start)
    }

    // MARK: Strings

    /// A quoted string from `pos` (at the quote), unescaped: `\' \" \\ \/ \b \f \n \r \t \0 \uXXXX`.
    private mutating func lexString() throws(CoveError) -> String {
        let start = pos
        let quote = bytes[pos]
        pos += 1
        var out: [UInt8] = []
        while true {
            guard let c = byte(at: pos) else {
                throw error("unterminated string", at: start,
                            detail: "expected a closing \(Character(Unicode.Scalar(quote))) before the end of the query")
            }
            if c == quote {
                pos += 1
                // The text was valid UTF-8 and every escape adds a whole scalar, so nothing is repaired.
                return String(decoding: out, as: UTF8.self)
            }
            if c != UInt8(ascii: "\\") {
                out.append(c)
                pos += 1
                continue
            }
            let escape = pos
            guard let e = byte(at: pos + 1) else {
                throw error("unterminated string", at: start, detail: "expected a closing quote before the end of the query")
            }
            pos += 2
            switch e {
            case UInt8(ascii: "'"), UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "0"): out.append(0x00)
            case UInt8(ascii: "u"):
                guard var scalar = hex4(at: pos) else {
                    throw error("invalid escape '\(source(escape, min(escape + 6, bytes.count)))'", at: escape,
                                detail: "expected four hex digits after \\u")
                }
                pos += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    guard byte(at: pos) == UInt8(ascii: "\\"), byte(at: pos + 1) == UInt8(ascii: "u"),
                          let low = hex4(at: pos + 2), (0xDC00...0xDFFF).contains(low) else {
                        throw error("invalid escape '\(source(escape, pos))'", at: escape,
                                    detail: "a high surrogate must be followed by a \\u escape of a low surrogate")
                    }
                    pos += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let s = Unicode.Scalar(scalar) else {
                    throw error("invalid escape '\(source(escape, pos))'", at: escape, detail: "a low surrogate without a high one")
                }
                out.append(contentsOf: String(Character(s)).utf8)
            default:
                let end = min(escape + 1 + Self.utf8Length(e), bytes.count)
                throw error("invalid escape '\(source(escape, end))' in a string", at: escape,
                            detail: "a string allows \\' \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\0 and \\uXXXX")
            }
        }
    }

    private func hex4(at i: Int) -> UInt32? {
        var v: UInt32 = 0
        for k in 0..<4 {
            guard let c = byte(at: i + k), let d = Self.hexValue(c) else { return nil }
            v = v << 4 | UInt32(d)
        }
        return v
    }

    // MARK: Words

    /// An identifier, keyword, argument or a literal that starts with letters: `B64"…"`, `oid(…)`,
    /// `uuid(…)`, `T<s>:<ns>`, `O<n>`, `L<t>:<n>`, `inf`, `nan`.
    private mutating func lexWord() throws(CoveError) -> QueryToken.Kind {
        let start = pos
        if bytes[pos] == UInt8(ascii: "T"), let timestamp = try lexSecondsTimestamp() {
            return .timestamp(timestamp)
        }
        var word: [UInt8] = []
        var escaped = false
        while let c = byte(at: pos) {
            if Self.isIdentifierByte(c) {
                word.append(c)
                pos += 1
            } else if c == UInt8(ascii: "\\"), let w = byte(at: pos + 1), let unescaped = Self.identifierEscape(w) {
                word.append(unescaped)
                escaped = true
                pos += 2
            } else {
                break
            }
        }
        let next = byte(at: pos)
        if !escaped {
            if word == Array("B64".utf8), next == UInt8(ascii: "\"") {
                return .base64(try lexBase64(start: start))
            }
            if word == Array("oid".utf8), next == UInt8(ascii: "(") {
                return .objectId(try lexObjectId(start: start))
            }
            if word == Array("uuid".utf8), next == UInt8(ascii: "(") {
                return .uuid(try lexUUID(start: start))
            }
            if let first = word.first, word.count > 1 {
                let rest = word[1...]
                if first == UInt8(ascii: "$"), rest.allSatisfy(Self.isDigit) {
                    return .argument(try argumentNumber(rest, start: start))
                }
                if first == UInt8(ascii: "$"), rest.first == UInt8(ascii: "K"), rest.count > 1, rest.dropFirst().allSatisfy(Self.isDigit) {
                    return .keyPathArgument(try argumentNumber(rest.dropFirst(), start: start))
                }
                if first == UInt8(ascii: "O"), rest.allSatisfy(Self.isDigit) {
                    guard let key = Int64(String(decoding: rest, as: UTF8.self)) else {
                        throw error("invalid object key '\(source(start, pos))'", at: start, detail: "the key is out of range")
                    }
                    return .objectKey(key)
                }
                if first == UInt8(ascii: "L"), rest.allSatisfy(Self.isDigit), next == UInt8(ascii: ":"),
                   let d = byte(at: pos + 1), Self.isDigit(d) {
                    pos += 1
                    let keyStart = pos
                    skipDigits()
                    try checkNothingGlued(to: start, what: "link")
                    guard let classKey = UInt32(String(decoding: rest, as: UTF8.self)),
                          let objectKey = Int64(String(decoding: bytes[keyStart..<pos], as: UTF8.self)) else {
                        throw error("invalid link '\(source(start, pos))'", at: start, detail: "a key is out of range")
                    }
                    return .link(classKey: classKey, objectKey: objectKey)
                }
            }
            if let value = Self.infinityOrNaN(word[...]) {
                return .double(value)
            }
        }
        return .word(String(decoding: word, as: UTF8.self), keyword: escaped ? nil : QueryKeyword.of(word))
    }

    private func argumentNumber(_ digits: ArraySlice<UInt8>, start: Int) throws(CoveError) -> Int {
        guard digits.count <= 9, let n = Int(String(decoding: digits, as: UTF8.self)) else {
            throw error("argument '\(source(start, pos))' is out of range", at: start)
        }
        return n
    }

    /// `B64"…"` after the `B64`: base64 text (letters, digits, `+ / =`) and its closing quote.
    private mutating func lexBase64(start: Int) throws(CoveError) -> [UInt8] {
        pos += 1
        let textStart = pos
        while let c = byte(at: pos), c != UInt8(ascii: "\"") {
            guard Self.isBase64Byte(c) else {
                throw error("invalid B64 string", at: start,
                            detail: "'\(source(pos, pos + Self.utf8Length(c)))' is not base64 (letters, digits, '+', '/' and '=')")
            }
            pos += 1
        }
        guard byte(at: pos) == UInt8(ascii: "\"") else {
            throw error("unterminated B64 string", at: start, detail: "expected a closing '\"' before the end of the query")
        }
        let text = String(decoding: bytes[textStart..<pos], as: UTF8.self)
        pos += 1
        guard let data = Data(base64Encoded: text) else {
            throw error("invalid B64 string '\(source(start, pos))'", at: start, detail: "the text is not valid base64")
        }
        return [UInt8](data)
    }

    /// `oid(<24 hex digits>)` after the `oid`.
    private mutating func lexObjectId(start: Int) throws(CoveError) -> ObjectId {
        let hex = try parenthesized(start: start, what: "ObjectId", form: "oid(<24 hex digits>)") { text in
            text.count == 24 && text.allSatisfy { Self.hexValue($0) != nil }
        }
        guard let oid = try? ObjectId(String(decoding: hex, as: UTF8.self)) else {
            throw error("invalid ObjectId", at: start, detail: "expected oid(<24 hex digits>)")
        }
        return oid
    }

    /// `uuid(<8-4-4-4-12 hex digits>)` after the `uuid`.
    private mutating func lexUUID(start: Int) throws(CoveError) -> UUIDValue {
        let text = try parenthesized(start: start, what: "UUID", form: "uuid(xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)") { text in
            guard text.count == 36 else { return false }
            for (i, c) in text.enumerated() {
                if i == 8 || i == 13 || i == 18 || i == 23 {
                    if c != UInt8(ascii: "-") { return false }
                } else if Self.hexValue(c) == nil {
                    return false
                }
            }
            return true
        }
        var out: [UInt8] = []
        var high: UInt8? = nil
        for c in text {
            guard let d = Self.hexValue(c) else { continue }
            if let h = high {
                out.append(h << 4 | d)
                high = nil
            } else {
                high = d
            }
        }
        return UUIDValue(bytes: out)
    }

    /// The bytes between `(` and `)` at `pos`, checked by `valid`.
    private mutating func parenthesized(start: Int, what: String, form: String,
                                        _ valid: ([UInt8]) -> Bool) throws(CoveError) -> [UInt8] {
        pos += 1
        let from = pos
        while let c = byte(at: pos), c != UInt8(ascii: ")") { pos += 1 }
        guard byte(at: pos) == UInt8(ascii: ")") else {
            throw error("invalid \(what)", at: start, detail: "expected \(form), found end of input")
        }
        let inner = Array(bytes[from..<pos])
        pos += 1
        guard valid(inner) else {
            throw error("invalid \(what) '\(source(start, pos))'", at: start, detail: "expected \(form)")
        }
        return inner
    }

    /// `@name` (count, size, min, max, sum, avg, links, type, keys, values).
    private mutating func lexAt() throws(CoveError) -> QueryToken.Kind {
        let start = pos
        pos += 1
        while let c = byte(at: pos), Self.isIdentifierByte(c) { pos += 1 }
        let name = String(decoding: bytes[(start + 1)..<pos], as: UTF8.self)
        guard Self.atNames.contains(name) else {
            if name.isEmpty { throw invalidCharacter(at: start) }
            throw error("unknown operator '@\(name)'", at: start,
                        detail: "expected @count, @size, @min, @max, @sum, @avg, @links, @type, @keys or @values")
        }
        return .at(name)
    }

    /// `[c]`, `[d]` or `[cd]` at `i`.
    private func modifier(at i: Int) -> QueryStringOptions? {
        let c = UInt8(ascii: "c"), d = UInt8(ascii: "d"), close = UInt8(ascii: "]")
        switch (byte(at: i + 1), byte(at: i + 2), byte(at: i + 3)) {
        case (c, close, _): return .caseInsensitive
        case (d, close, _): return .diacriticInsensitive
        case (c, d, close): return [.caseInsensitive, .diacriticInsensitive]
        default: return nil
        }
    }

    // MARK: Bytes

    private func byte(at i: Int) -> UInt8? {
        i >= 0 && i < bytes.count ? bytes[i] : nil
    }

    private mutating func skipWhitespace() {
        while let c = byte(at: pos), c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D { pos += 1 }
    }

    private static func isDigit(_ c: UInt8) -> Bool {
        c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    private static func isLetter(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
    }

    /// Letters, `_`, `$` and any byte of a non-ASCII character.
    static func startsIdentifier(_ c: UInt8) -> Bool {
        isLetter(c) || c == UInt8(ascii: "_") || c == UInt8(ascii: "$") || c >= 0x80
    }

    /// What may follow the first character of an identifier: also digits and `-`.
    private static func isIdentifierByte(_ c: UInt8) -> Bool {
        startsIdentifier(c) || isDigit(c) || c == UInt8(ascii: "-")
    }

    private static func isBase64Byte(_ c: UInt8) -> Bool {
        isLetter(c) || isDigit(c) || c == UInt8(ascii: "+") || c == UInt8(ascii: "/") || c == UInt8(ascii: "=")
    }

    /// The character a backslash escapes inside an identifier (`float\ fees`): a space, tab, CR or
    /// LF, written as itself or as `t`, `r`, `n`.
    private static func identifierEscape(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x20, 0x09, 0x0A, 0x0D: return c
        case UInt8(ascii: "t"): return 0x09
        case UInt8(ascii: "r"): return 0x0D
        case UInt8(ascii: "n"): return 0x0A
        default: return nil
        }
    }

    /// The length of the UTF-8 sequence a lead byte starts.
    private static func utf8Length(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...: return 4
        case 0xE0...: return 3
        case 0xC0...: return 2
        default: return 1
        }
    }

    // MARK: Errors

    /// The query text of bytes `from..<to`, clamped to the text, for messages.
    func source(_ from: Int, _ to: Int) -> String {
        let a = max(0, min(from, bytes.count)), b = max(a, min(to, bytes.count))
        var text = String(decoding: bytes[a..<b], as: UTF8.self)
        if text.unicodeScalars.count > 40 {
            text = String(text.unicodeScalars.prefix(40)) + "…"
        }
        return text
    }

    /// "'x'" for the character at `i`, or "end of input".
    private func describeByte(at i: Int) -> String {
        guard let c = byte(at: i) else { return "end of input" }
        return "'\(source(i, i + Self.utf8Length(c)))'"
    }

    private func invalidCharacter(at i: Int) -> CoveError {
        guard let c = byte(at: i) else { return error("unexpected end of input", at: i) }
        if c < 0x20 || c == 0x7F {
            let hex = String(c, radix: 16, uppercase: true)
            return error("invalid character U+\(hex.count < 2 ? "000" : "00")\(hex)", at: i)
        }
        return error("invalid character '\(source(i, i + Self.utf8Length(c)))'", at: i)
    }

    /// Where byte offset `offset` is, for messages: "position N" (1-based, counted in characters)
    /// and, in a query of several lines, its line and column.
    func location(_ offset: Int) -> String {
        var position = 1, line = 1, column = 1
        var i = 0
        let end = min(max(offset, 0), bytes.count)
        while i < end {
            let b = bytes[i]
            if b & 0xC0 != 0x80 {
                position += 1
                column += 1
            }
            if b == 0x0A {
                line += 1
                column = 1
            }
            i += 1
        }
        return bytes.contains(0x0A) ? "position \(position) (line \(line), column \(column))" : "position \(position)"
    }

    /// The query as messages show it: quoted, and cut after 200 characters.
    var quotedQuery: String {
        let scalars = query.unicodeScalars
        if scalars.count <= 200 { return JSONValue.quoted(query) }
        return JSONValue.quoted(String(scalars.prefix(200))) + "…"
    }

    /// `syntax error in query "<q>": <what> at position N[, found <found>][: <detail>]`.
    func error(_ what: String, at offset: Int, found: String? = nil, detail: String? = nil) -> CoveError {
        var message = "syntax error in query \(quotedQuery): \(what) at \(location(offset))"
        if let found { message += ", found \(found)" }
        if let detail { message += ": \(detail)" }
        return CoveError(.querySyntax, message)
    }
}
