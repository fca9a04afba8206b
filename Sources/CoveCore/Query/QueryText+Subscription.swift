// The filters of a Results as one query for a subscription: each filter's arguments (`$n` or
// `%@`) renumbered after the previous filters' ones, the filters joined with AND. The text is
// otherwise kept as written, so that subscribing twice to the same filters gives the same query.

package enum SubscriptionQueryText {
    /// One query equivalent to all of `filters` together, with its arguments in order.
    /// - Throws: the query's own syntax error (`.querySyntax`), or `.invalidArgument` when a
    ///   filter names an argument it was not given.
    package static func joined(_ filters: [(text: String, arguments: [QueryArgument])]) throws(CoveError) -> (String, [QueryArgument]) {
        if filters.isEmpty { return ("TRUEPREDICATE", []) }
        if filters.count == 1, !filters[0].text.contains("%@") { return filters[0] }
        var parts: [String] = []
        var arguments: [QueryArgument] = []
        for filter in filters {
            var lexer = QueryLexer(filter.text)
            let bytes = Array(filter.text.utf8)
            var out: [UInt8] = []
            var copied = 0
            var sequential = 0
            var used: [Int: Int] = [:]
            func take(_ n: Int) throws(CoveError) -> Int {
                guard n >= 0, n < filter.arguments.count else {
                    throw CoveError(.invalidArgument, "query \"\(filter.text)\" uses argument \(n), but \(filter.arguments.count) were given")
                }
                if let at = used[n] { return at }
                arguments.append(filter.arguments[n])
                used[n] = arguments.count - 1
                return arguments.count - 1
            }
            while true {
                let token = try lexer.next()
                let index: Int
                switch token.kind {
                case .end:
                    out += bytes[copied...]
                    parts.append(String(decoding: out, as: UTF8.self))
                    index = -1
                case .argument(let n): index = try take(n)
                case .nextArgument:
                    index = try take(sequential)
                    sequential += 1
                default: continue
                }
                if index < 0 { break }
                out += bytes[copied..<token.start]
                out += Array("$\(index)".utf8)
                copied = token.end
            }
        }
        return (parts.count == 1 ? parts[0] : parts.map { "(\($0))" }.joined(separator: " AND "), arguments)
    }
}
