// The string comparisons of the query language: [c] folds case by Unicode case folding
// (lowercase mapping, final sigma as sigma), [d] folds diacritics (canonical decomposition with
// the combining marks removed), LIKE's wildcards over code points, and full-text tokens.
@_spi(_Unicode) import Swift

enum StringFolding {
    /// `s` folded as `options` say; unchanged without options.
    static func fold(_ s: String, _ options: QueryStringOptions) -> String {
        if options.isEmpty { return s }
        var scalars = String.UnicodeScalarView()
        let source: [Unicode.Scalar] = options.contains(.diacriticInsensitive) ? Array(s._nfd) : Array(s.unicodeScalars)
        for u in source {
            if options.contains(.diacriticInsensitive) && u.properties.canonicalCombiningClass.rawValue != 0 { continue }
            if options.contains(.diacriticInsensitive) && u.properties.generalCategory == .nonspacingMark { continue }
            if options.contains(.caseInsensitive) {
                if u == "\u{03C2}" {       // final sigma folds to sigma
                    scalars.append("\u{03C3}")
                    continue
                }
                scalars.append(contentsOf: u.properties.lowercaseMapping.unicodeScalars.map { $0 == "\u{03C2}" ? "\u{03C3}" : $0 })
            } else {
                scalars.append(u)
            }
        }
        return String(scalars)
    }

    /// Whether `s` matches the LIKE pattern: `*` any run of code points, `?` exactly one; no escape.
    static func like(_ s: String, _ pattern: String) -> Bool {
        let text = Array(s.unicodeScalars)
        let pat = Array(pattern.unicodeScalars)
        var t = 0, p = 0
        var star = -1, mark = 0
        while t < text.count {
            if p < pat.count && (pat[p] == "?" || (pat[p] != "*" && pat[p] == text[t])) {
                t += 1
                p += 1
            } else if p < pat.count && pat[p] == "*" {
                star = p
                mark = t
                p += 1
            } else if star >= 0 {
                p = star + 1
                mark += 1
                t = mark
            } else {
                return false
            }
        }
        while p < pat.count && pat[p] == "*" { p += 1 }
        return p == pat.count
    }

    /// The words of `s` for TEXT: runs of letters and digits (any script), case and diacritics
    /// folded.
    static func tokens(_ s: String) -> [String] {
        var out: [String] = []
        var current = String.UnicodeScalarView()
        for u in s.unicodeScalars {
            let p = u.properties
            if p.isAlphabetic || p.numericType != nil || p.generalCategory == .nonspacingMark {
                current.append(u)
            } else if !current.isEmpty {
                out.append(fold(String(current), [.caseInsensitive, .diacriticInsensitive]))
                current = String.UnicodeScalarView()
            }
        }
        if !current.isEmpty { out.append(fold(String(current), [.caseInsensitive, .diacriticInsensitive])) }
        return out
    }

    /// Whether text `s` satisfies a TEXT query: every plain word present, no `-word` present,
    /// `word*` matched as a prefix.
    static func textMatches(_ s: String, _ query: String) -> Bool {
        let words = Set(tokens(s))
        for term in query.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\n" }) {
            var t = Substring(term)
            var exclude = false
            var prefix = false
            if t.hasPrefix("-") { exclude = true; t = t.dropFirst() }
            if t.hasSuffix("*") { prefix = true; t = t.dropLast() }
            guard let token = tokens(String(t)).first else { continue }
            let present = prefix ? words.contains { $0.hasPrefix(token) } : words.contains(token)
            if present == exclude { return false }
        }
        return true
    }
}
