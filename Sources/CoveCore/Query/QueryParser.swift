// The query language's parser: RQL text to a ParsedQuery (QueryAST.swift) from QueryLexer's
// tokens. Predicates are parsed by a loop over an explicit stack of open parentheses, so chains of
// 10,000 terms and deep parentheses cost no thread stack; only parenthesized arithmetic and
// SUBQUERY recurse (by descent), and the tree's depth is capped at `QueryParser.maxNesting`.
// Names are not resolved here: QueryCompiler binds the tree to a class of the schema.

/// Parses RQL (docs/query-language.md) into its syntax tree.
package enum QueryParser {
    /// The deepest nesting accepted: levels of the predicate tree (an AND inside an OR, a NOT,
    /// a SUBQUERY) plus arithmetic parentheses. Redundant parentheses and chains of one kind
    /// (`((a || b) || c)`) add nothing. SUBQUERY and arithmetic parentheses recurse: at this
    /// depth a debug build needs about 250 KB of stack, a release build far less.
    package static let maxNesting = 32
    /// The deepest tree of arithmetic operators in one expression (`a + a + … + a`).
    package static let maxArithmeticDepth = 1000

    /// Parses `text`: a predicate and the SORT/DISTINCT/LIMIT/OFFSET descriptors after it.
    ///
    /// - Parameters:
    ///   - text: the query, e.g. `age > 30 && name BEGINSWITH[c] 'j' SORT(age DESC) LIMIT(10)`.
    ///   - argumentCount: when given, an argument numbered `argumentCount` or higher (`$n`, `%@`,
    ///     `$Kn`, `%K`) is an error.
    /// - Returns: the syntax tree, with constant arithmetic folded.
    /// - Throws: `CoveError(.querySyntax)` naming the query, the position and what was expected,
    ///   when the text does not parse; `CoveError(.invalidArgument)` for an argument out of range
    ///   or a SUBQUERY variable already in use by an enclosing SUBQUERY.
    /// - Complexity: O(n) in the length of the text.
    package static func parse(_ text: String, argumentCount: Int? = nil) throws(CoveError) -> ParsedQuery {
        var state = State(text, argumentCount: argumentCount)
        return try state.parseQuery()
    }
}

extension QueryParser {
    /// A side of a comparison while it is parsed: the expression, the height of its arithmetic
    /// tree, whether it is a plain value (no arithmetic: what string operators take) and where it
    /// starts.
    private struct Operand {
        var expression: QueryExpression
        var height: Int
        var isValue: Bool
        var start: Int

        /// The same operand, starting at the `(` before it.
        func startingAt(_ open: Int) -> Operand {
            Operand(expression: expression, height: height, isValue: isValue, start: open)
        }
    }

    /// What parseComparison read: a comparison, or (first inside parentheses, before the `)`) an
    /// expression that a comparison continues after the `)`, as in `(a + b) * 2 > 5`.
    private enum Group {
        case predicate(QueryPredicate)
        case operand(Operand)
    }

    /// The parser's place in the text and what it has seen: lookahead tokens, the argument style,
    /// the SUBQUERY variables in scope and the nesting depth.
    private struct State {
        private var lexer: QueryLexer
        private var lookahead: [QueryToken] = []
        private let argumentCount: Int?
        /// `$n` (or `$Kn`) seen; `%@`/`%K` may not be mixed with them.
        private var usesNumberedArguments = false
        /// `%@` and `%K` seen so far (the next one is argument number `positionalArguments`).
        private var positionalArguments = 0
        private var variables: [String] = []
        private var depth = 0

        init(_ text: String, argumentCount: Int?) {
            lexer = QueryLexer(text)
            self.argumentCount = argumentCount
        }

        // MARK: Query and descriptors

        mutating func parseQuery() throws(CoveError) -> ParsedQuery {
            let first = try peek()
            switch first.kind {
            case .end:
                throw lexer.error("empty query: expected a predicate", at: first.start)
            case .word(let w, keyword: .sort?), .word(let w, keyword: .distinct?), .word(let w, keyword: .limit?),
                 .word(let w, keyword: .offset?):
                if case .symbol(.leftParen) = try peek(1).kind {
                    throw lexer.error("expected a predicate before \(w.uppercased())(…)", at: first.start,
                                      detail: "write TRUEPREDICATE \(w.uppercased())(…) to keep every object")
                }
            default:
                break
            }
            let predicate = try parsePredicate()
            var descriptors: [QueryDescriptor] = []
            while true {
                let token = try peek()
                if case .end = token.kind { break }
                guard case .word(_, let keyword?) = token.kind, [.sort, .distinct, .limit, .offset].contains(keyword),
                      case .symbol(.leftParen) = try peek(1).kind else {
                    let expected = descriptors.isEmpty
                        ? "expected '&&', '||', SORT, DISTINCT, LIMIT, OFFSET or end of input"
                        : "expected SORT, DISTINCT, LIMIT, OFFSET or end of input"
                    throw expectedError(expected, token)
                }
                try advance()
                try advance()
                switch keyword {
                case .sort: descriptors.append(try parseSort())
                case .distinct: descriptors.append(try parseDistinct())
                case .limit: descriptors.append(.limit(try parseCount("LIMIT")))
                default: descriptors.append(.offset(try parseCount("OFFSET")))
                }
            }
            return ParsedQuery(predicate: predicate, descriptors: descriptors)
        }

        /// `path dir {, path dir})` after `SORT(`.
        private mutating func parseSort() throws(CoveError) -> QueryDescriptor {
            var keys: [(QueryKeyPath, ascending: Bool)] = []
            while true {
                let path = try parseDescriptorPath("SORT")
                let direction = try peek()
                switch direction.kind {
                case .word(_, keyword: .ascending?): keys.append((path, ascending: true))
                case .word(_, keyword: .descending?): keys.append((path, ascending: false))
                default: throw expectedError("expected ASC, ASCENDING, DESC or DESCENDING after the key path in SORT", direction)
                }
                try advance()
                if try endOfDescriptorList("SORT") { return .sort(keys) }
            }
        }

        /// `path {, path})` after `DISTINCT(`.
        private mutating func parseDistinct() throws(CoveError) -> QueryDescriptor {
            var paths: [QueryKeyPath] = []
            while true {
                paths.append(try parseDescriptorPath("DISTINCT"))
                if try endOfDescriptorList("DISTINCT") { return .distinct(paths) }
            }
        }

        private mutating func parseDescriptorPath(_ name: String) throws(CoveError) -> QueryKeyPath {
            let token = try peek()
            guard startsKeyPath(token) else { throw expectedError("expected a key path in \(name)(…)", token) }
            return try parseKeyPath(quantifier: nil)
        }

        /// Consumes `,` (false: another item follows) or `)` (true).
        private mutating func endOfDescriptorList(_ name: String) throws(CoveError) -> Bool {
            let token = try peek()
            switch token.kind {
            case .symbol(.comma):
                try advance()
                return false
            case .symbol(.rightParen):
                try advance()
                return true
            default:
                throw expectedError("expected ',' or ')' in \(name)(…)", token)
            }
        }

        /// `n)` after `LIMIT(` or `OFFSET(`: an unsigned decimal integer.
        private mutating func parseCount(_ name: String) throws(CoveError) -> Int {
            let token = try peek()
            guard case .integer(let n, natural: true) = token.kind, let count = Int(exactly: n) else {
                throw expectedError("expected a non-negative decimal integer in \(name)(…)", token)
            }
            try advance()
            try expect(.rightParen, "expected ')' after the count in \(name)(…)")
            return count
        }

        // MARK: Predicates
        //
        // Predicates are parsed by a loop over an explicit stack of open parentheses, so chains of
        // any length and parentheses to any depth cost no thread stack. Only expressions in
        // parentheses and SUBQUERY recurse; the functions on that cycle (parseSubquery,
        // parsePredicate, parseTerm, parseComparison, parseAdditive, parseMultiplicative,
        // parsePrimary) only dispatch, with tokens inspected and messages built in helpers that
        // return first, so a level costs a few KB even in a debug build.

        /// A predicate and the height of its tree (a comparison is 1).
        private struct Term {
            var predicate: QueryPredicate
            var height: Int
        }

        /// An open `(` of a predicate and what its level holds so far.
        private struct PredicateFrame {
            /// Where the `(` is; nil for the outermost level.
            var open: Int?
            /// The NOTs right before the `(`: they apply to what the group turns out to be.
            var nots: Int
            /// The finished AND-chains of this level, waiting for the end of the OR-chain.
            var orTerms: [Term] = []
            /// The AND-chain in progress.
            var andTerms: [Term] = []
        }

        /// The most predicate parentheses open at once (they cost heap, not stack).
        private static let maxOpenParentheses = 10_000

        /// A whole predicate: terms joined by `&&`/`||` (AND binds tighter), each term a run of
        /// `!`/`NOT` and a comparison, TRUEPREDICATE, FALSEPREDICATE or a parenthesized predicate.
        /// Stops before the first token that cannot continue it.
        private mutating func parsePredicate() throws(CoveError) -> QueryPredicate {
            var frames = [PredicateFrame(open: nil, nots: 0)]
            while true {
                let nots = try skipNots()
                if try openPredicateParenthesis(nots: nots, frames: &frames) { continue }
                let term = try parseTerm(nots: nots, frames: &frames)
                if let predicate = try reduce(term, frames: &frames) { return predicate }
            }
        }

        /// Consumes a run of `!`/`NOT` and returns its length.
        private mutating func skipNots() throws(CoveError) -> Int {
            var nots = 0
            while true {
                let token = try peek()
                switch token.kind {
                case .symbol(.not), .word(_, keyword: .not?):
                    // The NOTs and the term after them must fit.
                    if depth + nots + 1 >= QueryParser.maxNesting { throw tooDeep(token) }
                    try advance()
                    nots += 1
                default:
                    return nots
                }
            }
        }

        /// Consumes a `(` and opens a level for it; false (consuming nothing) for anything else.
        private mutating func openPredicateParenthesis(nots: Int, frames: inout [PredicateFrame]) throws(CoveError) -> Bool {
            let token = try peek()
            guard case .symbol(.leftParen) = token.kind else { return false }
            if frames.count > Self.maxOpenParentheses {
                throw lexer.error("more than \(Self.maxOpenParentheses) parentheses open", at: token.start)
            }
            try advance()
            frames.append(PredicateFrame(open: token.start, nots: nots))
            return true
        }

        /// TRUEPREDICATE, FALSEPREDICATE or a comparison, with `nots` NOTs before it. A comparison
        /// may begin with expressions in parentheses: `((a)) + 1 > 2` first opens two levels, and
        /// when the level holds only an expression it closes and the expression goes on below it.
        private mutating func parseTerm(nots: Int, frames: inout [PredicateFrame]) throws(CoveError) -> Term {
            if let constant = try parseTrueOrFalsePredicate() { return try term(constant, nots: nots) }
            var nots = nots
            var group = try parseComparison(first: nil, allowOperand: nots == 0 && Self.holdsNothing(frames))
            while case .operand(let operand) = group {
                // parseComparison returns an operand only inside parentheses, before a ')'.
                guard frames.count > 1, let closed = frames.popLast(), let open = closed.open else {
                    throw expectedError("expected a comparison operator", try peek())
                }
                try closeParenthesis(open, closesChain: false)
                nots = closed.nots
                group = try parseComparison(first: operand.startingAt(open), allowOperand: nots == 0 && Self.holdsNothing(frames))
            }
            guard case .predicate(let predicate) = group else { throw expectedError("expected a comparison operator", try peek()) }
            return try term(predicate, nots: nots)
        }

        /// True when the innermost level is a parenthesis with nothing in it yet, so what comes
        /// may be an expression rather than a predicate (`(a + b) * 2 > 5`).
        private static func holdsNothing(_ frames: [PredicateFrame]) -> Bool {
            guard let top = frames.last else { return false }
            return top.open != nil && top.orTerms.isEmpty && top.andTerms.isEmpty
        }

        /// `predicate` under `nots` NOTs, checked against the nesting limit.
        private mutating func term(_ predicate: QueryPredicate, nots: Int, height: Int = 1) throws(CoveError) -> Term {
            var result = predicate
            for _ in 0..<nots { result = .not(result) }
            if depth + height + nots > QueryParser.maxNesting { throw tooDeep(try peek()) }
            return Term(predicate: result, height: height + nots)
        }

        /// Adds a finished term to the innermost level and closes what ends after it: the
        /// AND-chain unless `&&` follows, the OR-chain unless `||` follows, and then the level's
        /// parenthesis, or the whole predicate (returned) at the outermost level.
        private mutating func reduce(_ finished: Term, frames: inout [PredicateFrame]) throws(CoveError) -> QueryPredicate? {
            var term = finished
            while true {
                let level = frames.count - 1
                guard level >= 0 else { return term.predicate }
                frames[level].andTerms.append(term)
                if try consumeAnd() { return nil }
                let chain = try join(frames[level].andTerms, and: true)
                frames[level].andTerms = []
                frames[level].orTerms.append(chain)
                if try consumeOr() { return nil }
                let result = try join(frames[level].orTerms, and: false)
                frames[level].orTerms = []
                guard level > 0, let closed = frames.popLast(), let open = closed.open else { return result.predicate }
                try closeParenthesis(open, closesChain: true)
                term = try self.term(result.predicate, nots: closed.nots, height: result.height)
            }
        }

        /// One `.and` (or `.or`) of `terms`, or the term itself when it is alone. A term that is a
        /// chain of the same kind (from parentheses: `(a || b) || c`) joins it, so a tree never
        /// nests a node in one of its own kind.
        private mutating func join(_ terms: [Term], and: Bool) throws(CoveError) -> Term {
            if terms.count == 1 { return terms[0] }
            var items: [QueryPredicate] = []
            items.reserveCapacity(terms.count)
            var height = 0
            for t in terms {
                switch t.predicate {
                case .and(let inner) where and, .or(let inner) where !and:
                    items.append(contentsOf: inner)
                    height = max(height, t.height - 1)
                default:
                    items.append(t.predicate)
                    height = max(height, t.height)
                }
            }
            if depth + height + 1 > QueryParser.maxNesting { throw tooDeep(try peek()) }
            return Term(predicate: and ? .and(items) : .or(items), height: height + 1)
        }

        private mutating func parseTrueOrFalsePredicate() throws(CoveError) -> QueryPredicate? {
            switch try peek().kind {
            case .word(_, keyword: .truePredicate?):
                try advance()
                return .truePredicate
            case .word(_, keyword: .falsePredicate?):
                try advance()
                return .falsePredicate
            default:
                return nil
            }
        }

        /// Consumes the `(` of an expression and counts its nesting, returning where it starts;
        /// nil (consuming nothing) when the next token is something else.
        private mutating func enterParenthesis() throws(CoveError) -> Int? {
            let token = try peek()
            guard case .symbol(.leftParen) = token.kind else { return nil }
            try advance()
            try enter(token)
            return token.start
        }

        /// Consumes the `)` that closes the `(` at `open`.
        private mutating func closeParenthesis(_ open: Int, closesChain: Bool) throws(CoveError) {
            let token = try peek()
            guard case .symbol(.rightParen) = token.kind else {
                throw expectedError(closesChain ? "expected '&&', '||' or ')'" : "expected ')'", token,
                                    detail: "the '(' at \(lexer.location(open)) is not closed")
            }
            try advance()
        }

        /// `expr op [modifier] expr`, where `first` (a parenthesized expression already read) may
        /// begin the left side. Without an operator, and when `allowOperand` is set and a `)`
        /// follows, the left side is returned as a group of its own.
        private mutating func parseComparison(first: Operand?, allowOperand: Bool) throws(CoveError) -> Group {
            let left = try parseAdditive(first: first)
            guard let (op, options) = try parseOperator(after: left, allowOperand: allowOperand) else { return .operand(left) }
            let right: QueryExpression
            if op == .between {
                right = try parseBetweenBounds()
            } else {
                right = try checkedRightSide(op, try parseAdditive(first: nil))
            }
            return .predicate(.comparison(QueryComparison(left: left.expression, op: op, options: options,
                                                          right: right, position: left.start)))
        }

        /// The operator after `left` and its `[c]`/`[d]`/`[cd]`; nil when there is none and `left`
        /// may stand alone in its parentheses.
        private mutating func parseOperator(after left: Operand, allowOperand: Bool) throws(CoveError) -> (QueryOperator, QueryStringOptions)? {
            let opToken = try peek()
            guard let op = comparisonOperator(opToken) else {
                if allowOperand, case .symbol(.rightParen) = opToken.kind { return nil }
                var detail: String? = nil
                switch opToken.kind {
                case .integer, .double, .float:
                    if let sign = lexer.source(opToken.start, opToken.end).first, sign == "-" || sign == "+" {
                        detail = "a sign before digits belongs to the number; write 'a - 5', with spaces, for arithmetic"
                    }
                default:
                    break
                }
                throw expectedError("expected a comparison operator", opToken, detail: detail)
            }
            try advance()
            var options: QueryStringOptions = []
            let modifierToken = try peek()
            if case .modifier(let m) = modifierToken.kind {
                switch op {
                case .equal, .notEqual, .in, .beginsWith, .endsWith, .contains, .like:
                    options = m
                    try advance()
                default:
                    throw lexer.error("'\(lexer.source(modifierToken.start, modifierToken.end))' cannot follow \(Self.name(of: op))",
                                      at: modifierToken.start,
                                      detail: "modifiers follow ==, !=, IN, BEGINSWITH, ENDSWITH, CONTAINS and LIKE")
                }
            }
            if Self.takesValues(op) && !left.isValue {
                throw lexer.error("\(Self.name(of: op)) compares a value, not arithmetic", at: opToken.start)
            }
            return (op, options)
        }

        /// String operators, TEXT and BETWEEN take values on both sides, not arithmetic.
        private static func takesValues(_ op: QueryOperator) -> Bool {
            switch op {
            case .beginsWith, .endsWith, .contains, .like, .text, .between: return true
            default: return false
            }
        }

        private func checkedRightSide(_ op: QueryOperator, _ right: Operand) throws(CoveError) -> QueryExpression {
            if Self.takesValues(op) && !right.isValue {
                throw lexer.error("\(Self.name(of: op)) compares a value, not arithmetic", at: right.start)
            }
            return right.expression
        }

        /// `{low, high}` after BETWEEN.
        private mutating func parseBetweenBounds() throws(CoveError) -> QueryExpression {
            let listToken = try peek()
            guard case .symbol(.leftBrace) = listToken.kind else {
                throw expectedError("expected a list {low, high} after BETWEEN", listToken)
            }
            let list = try parseList(quantifier: nil)
            guard case .list(let elements, _) = list, elements.count == 2 else {
                throw lexer.error("BETWEEN takes a list of exactly two values {low, high}", at: listToken.start)
            }
            return list
        }

        private func comparisonOperator(_ token: QueryToken) -> QueryOperator? {
            switch token.kind {
            case .symbol(.equal): return .equal
            case .symbol(.notEqual): return .notEqual
            case .symbol(.less): return .less
            case .symbol(.lessOrEqual): return .lessOrEqual
            case .symbol(.greater): return .greater
            case .symbol(.greaterOrEqual): return .greaterOrEqual
            case .word(_, keyword: .in?): return .in
            case .word(_, keyword: .beginsWith?): return .beginsWith
            case .word(_, keyword: .endsWith?): return .endsWith
            case .word(_, keyword: .contains?): return .contains
            case .word(_, keyword: .like?): return .like
            case .word(_, keyword: .text?): return .text
            case .word(_, keyword: .between?): return .between
            default: return nil
            }
        }

        private static func name(of op: QueryOperator) -> String {
            switch op {
            case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual: return "'\(op.rawValue)'"
            default: return op.rawValue
            }
        }

        // MARK: Expressions

        /// `mul {(+|-) mul}`, left-associative.
        private mutating func parseAdditive(first: Operand?) throws(CoveError) -> Operand {
            var left = try parseMultiplicative(first: first)
            while let (op, at) = try arithmeticOperator(additive: true) {
                left = try combine(op, left, try parseMultiplicative(first: nil), at: at)
            }
            return left
        }

        /// `primary {(*|/) primary}`, left-associative.
        private mutating func parseMultiplicative(first: Operand?) throws(CoveError) -> Operand {
            var left: Operand
            if let first { left = first } else { left = try parsePrimary() }
            while let (op, at) = try arithmeticOperator(additive: false) {
                left = try combine(op, left, try parsePrimary(), at: at)
            }
            return left
        }

        /// Consumes `+`/`-` (or `*`/`/`) and returns it with its offset; nil for anything else.
        private mutating func arithmeticOperator(additive: Bool) throws(CoveError) -> (QueryArithmetic, Int)? {
            let token = try peek()
            let op: QueryArithmetic
            switch token.kind {
            case .symbol(.plus) where additive: op = .add
            case .symbol(.minus) where additive: op = .subtract
            case .symbol(.star) where !additive: op = .multiply
            case .symbol(.slash) where !additive: op = .divide
            default: return nil
            }
            try advance()
            return (op, token.start)
        }

        /// `( expr )`, a SUBQUERY, or a value.
        private mutating func parsePrimary() throws(CoveError) -> Operand {
            if let open = try enterParenthesis() {
                let inner = try parseAdditive(first: nil)
                try closeParenthesis(open, closesChain: false)
                depth -= 1
                return inner.startingAt(open)
            }
            if try atSubquery() { return try parseSubquery() }
            return try parseValue()
        }

        private func combine(_ op: QueryArithmetic, _ left: Operand, _ right: Operand, at offset: Int) throws(CoveError) -> Operand {
            if case .constant(let a) = left.expression, case .constant(let b) = right.expression, let folded = Self.fold(op, a, b) {
                return Operand(expression: .constant(folded), height: 1, isValue: false, start: left.start)
            }
            let height = max(left.height, right.height) + 1
            if height > QueryParser.maxArithmeticDepth {
                throw lexer.error("arithmetic nested deeper than \(QueryParser.maxArithmeticDepth) operators", at: offset)
            }
            return Operand(expression: .arithmetic(op, left.expression, right.expression), height: height, isValue: false, start: left.start)
        }

        /// Constant arithmetic, done now: int with int stays int (a quotient that is not whole, or an
        /// overflow, becomes a double), float with float or int stays float, anything with a double
        /// is a double. Division by zero and non-numeric constants are left to the compiler.
        static func fold(_ op: QueryArithmetic, _ a: QueryConstant, _ b: QueryConstant) -> QueryConstant? {
            func double(_ c: QueryConstant) -> Double? {
                switch c {
                case .int(let v): return Double(v)
                case .double(let v): return v
                case .float(let v): return Double(v)
                default: return nil
                }
            }
            if case .int(let x) = a, case .int(let y) = b {
                switch op {
                case .add:
                    let (r, o) = x.addingReportingOverflow(y)
                    return o ? .double(Double(x) + Double(y)) : .int(r)
                case .subtract:
                    let (r, o) = x.subtractingReportingOverflow(y)
                    return o ? .double(Double(x) - Double(y)) : .int(r)
                case .multiply:
                    let (r, o) = x.multipliedReportingOverflow(by: y)
                    return o ? .double(Double(x) * Double(y)) : .int(r)
                case .divide:
                    if y == 0 { return nil }
                    let (q, o) = x.dividedReportingOverflow(by: y)
                    if !o && x.remainderReportingOverflow(dividingBy: y).partialValue == 0 { return .int(q) }
                    return .double(Double(x) / Double(y))
                }
            }
            guard let x = double(a), let y = double(b) else { return nil }
            if op == .divide && y == 0 { return nil }
            var isFloat = false
            switch (a, b) {
            case (.float, .float), (.float, .int), (.int, .float): isFloat = true
            default: break
            }
            let r: Double
            switch op {
            case .add: r = x + y
            case .subtract: r = x - y
            case .multiply: r = x * y
            case .divide: r = x / y
            }
            return isFloat ? .float(Float(r)) : .double(r)
        }

        // MARK: Values

        /// A constant, a list, an argument, a key path (with a quantifier) or a SUBQUERY.
        private mutating func parseValue() throws(CoveError) -> Operand {
            let token = try peek()
            func operand(_ e: QueryExpression) -> Operand {
                Operand(expression: e, height: 1, isValue: true, start: token.start)
            }
            if let constant = try parseConstant() { return operand(constant) }
            switch token.kind {
            case .symbol(.leftBrace):
                return operand(try parseList(quantifier: nil))
            case .word(let w, keyword: let keyword?) where keyword == .anyOf || keyword == .allOf || keyword == .noneOf:
                try advance()
                let quantifier: QueryQuantifier = keyword == .anyOf ? .any : keyword == .allOf ? .all : .none
                let next = try peek()
                if case .symbol(.leftBrace) = next.kind { return operand(try parseList(quantifier: quantifier)) }
                guard startsKeyPath(next) else {
                    throw expectedError("expected a key path or a list after \(w)", next)
                }
                return operand(.keyPath(try parseKeyPath(quantifier: quantifier)))
            default:
                guard startsKeyPath(token) else { throw expectedError("expected a value", token) }
                return operand(.keyPath(try parseKeyPath(quantifier: nil)))
            }
        }

        /// A literal, `$n`/`%@`, `obj(…)` or `bin(…)` at the next token, or nil (consuming nothing).
        private mutating func parseConstant() throws(CoveError) -> QueryExpression? {
            let token = try peek()
            let constant: QueryConstant
            switch token.kind {
            case .integer(let v, _): constant = .int(v)
            case .double(let v): constant = .double(v)
            case .float(let v): constant = .float(v)
            case .string(let s): constant = .string(s)
            case .base64(let bytes): constant = .string(try base64String(bytes, token))
            case .timestamp(let t): constant = .timestamp(t)
            case .objectId(let o): constant = .objectId(o)
            case .uuid(let u): constant = .uuid(u)
            case .objectKey(let k): constant = .objectKey(k)
            case .link(let t, let k): constant = .link(classKey: t, objectKey: k)
            case .word(_, keyword: .true?): constant = .bool(true)
            case .word(_, keyword: .false?): constant = .bool(false)
            case .word(_, keyword: .null?): constant = .null
            case .argument(let n):
                try advance()
                return .argument(try numberedArgument(n, token))
            case .nextArgument:
                try advance()
                return .argument(try positionalArgument(token))
            case .word(_, keyword: .obj?):
                return .constant(try parseObject())
            case .word(_, keyword: .bin?), .word(_, keyword: .binary?):
                guard case .symbol(.leftParen) = try peek(1).kind else { return nil }
                return .constant(try parseBinary())
            default:
                return nil
            }
            try advance()
            return .constant(constant)
        }

        private func base64String(_ bytes: [UInt8], _ token: QueryToken) throws(CoveError) -> String {
            guard let s = String(validating: bytes, as: UTF8.self) else {
                throw lexer.error("B64 string is not UTF-8 text", at: token.start, detail: "write bin(B64\"…\") for bytes")
            }
            return s
        }

        /// `{c, …}` of constants and arguments, `{}` included.
        private mutating func parseList(quantifier: QueryQuantifier?) throws(CoveError) -> QueryExpression {
            let open = try peek()
            try expect(.leftBrace, "expected '{'")
            var elements: [QueryExpression] = []
            if case .symbol(.rightBrace) = try peek().kind {
                try advance()
                return .list(elements, quantifier: quantifier)
            }
            while true {
                let token = try peek()
                guard let element = try parseConstant() else {
                    if case .symbol(.leftBrace) = token.kind {
                        throw lexer.error("a list cannot hold a list", at: token.start)
                    }
                    throw expectedError("expected a constant or an argument", token, detail: "in the list that opens at \(lexer.location(open.start))")
                }
                elements.append(element)
                let next = try peek()
                switch next.kind {
                case .symbol(.comma):
                    try advance()
                case .symbol(.rightBrace):
                    try advance()
                    return .list(elements, quantifier: quantifier)
                default:
                    throw expectedError("expected ',' or '}'", next, detail: "in the list that opens at \(lexer.location(open.start))")
                }
            }
        }

        /// `obj('Class', <primary key>)`.
        private mutating func parseObject() throws(CoveError) -> QueryConstant {
            try advance()
            try expect(.leftParen, "expected '(' after obj")
            let classToken = try peek()
            let className: String
            switch classToken.kind {
            case .string(let s): className = s
            case .base64(let b): className = try base64String(b, classToken)
            default: throw expectedError("expected the class name as a string in obj('Class', key)", classToken)
            }
            try advance()
            try expect(.comma, "expected ',' after the class name in obj('Class', key)")
            let keyToken = try peek()
            let key: QueryConstant
            switch keyToken.kind {
            case .integer(let v, _): key = .int(v)
            case .string(let s): key = .string(s)
            case .base64(let b): key = .string(try base64String(b, keyToken))
            case .objectId(let o): key = .objectId(o)
            case .uuid(let u): key = .uuid(u)
            case .word(_, keyword: .null?): key = .null
            default:
                throw expectedError("expected a primary key (an integer, a string, an ObjectId, a UUID or null) in obj(…)", keyToken)
            }
            try advance()
            try expect(.rightParen, "expected ')' to close obj(…)")
            return .objectByPrimaryKey(className: className, primaryKey: QueryConstantBox(key))
        }

        /// `bin('text')`, `binary("text")`, `bin(B64"…")`.
        private mutating func parseBinary() throws(CoveError) -> QueryConstant {
            try advance()
            try expect(.leftParen, "expected '(' after bin")
            let token = try peek()
            let bytes: [UInt8]
            switch token.kind {
            case .string(let s): bytes = Array(s.utf8)
            case .base64(let b): bytes = b
            default: throw expectedError("expected a string or B64\"…\" in bin(…)", token)
            }
            try advance()
            try expect(.rightParen, "expected ')' to close bin(…)")
            return .binary(bytes)
        }

        /// `SUBQUERY(path, $var, predicate).@count` (or `.@size`).
        private mutating func parseSubquery() throws(CoveError) -> Operand {
            let (start, path, variable) = try parseSubqueryHead()
            variables.append(variable)
            let predicate = try parsePredicate()
            variables.removeLast()
            try parseSubqueryTail()
            return Operand(expression: .subquery(path: path, variable: variable, predicate: predicate), height: 1, isValue: true, start: start)
        }

        /// `SUBQUERY(path, $var,`: where it starts, the path and the variable.
        private mutating func parseSubqueryHead() throws(CoveError) -> (Int, QueryKeyPath, String) {
            let keyword = try peek()
            try advance()
            try expect(.leftParen, "expected '(' after SUBQUERY")
            try enter(keyword)
            let pathToken = try peek()
            guard startsKeyPath(pathToken) else { throw expectedError("expected a key path in SUBQUERY(path, $x, predicate)", pathToken) }
            let path = try parseKeyPath(quantifier: nil)
            try expect(.comma, "expected ',' after the key path in SUBQUERY(path, $x, predicate)")
            let variableToken = try peek()
            guard case .word(let variable, _) = variableToken.kind, variable.hasPrefix("$"), variable.utf8.count > 1 else {
                throw expectedError("expected a variable such as $x in SUBQUERY(path, $x, predicate)", variableToken)
            }
            if variables.contains(variable) {
                throw CoveError(.invalidArgument, "invalid SUBQUERY in query \(lexer.quotedQuery): variable \(variable) at "
                                + "\(lexer.location(variableToken.start)) is already used by an enclosing SUBQUERY")
            }
            try advance()
            try expect(.comma, "expected ',' after the variable in SUBQUERY(path, $x, predicate)")
            return (keyword.start, path, variable)
        }

        /// `).@count` or `).@size` after the SUBQUERY's predicate.
        private mutating func parseSubqueryTail() throws(CoveError) {
            try expect(.rightParen, "expected '&&', '||' or ')' to close SUBQUERY(…)")
            depth -= 1
            let dot = try peek()
            guard case .symbol(.dot) = dot.kind, case .at(let name) = try peek(1).kind, name == "count" || name == "size" else {
                throw expectedError("expected .@count or .@size after SUBQUERY(…)", dot)
            }
            try advance()
            try advance()
        }

        // MARK: Key paths

        private func startsKeyPath(_ token: QueryToken) -> Bool {
            switch token.kind {
            case .word(_, let keyword): return !(keyword?.isHard ?? false)
            case .keyPathArgument, .nextKeyPathArgument, .at("links"): return true
            default: return false
            }
        }

        /// A key path from its first name: `.name`, `[n]`, `[FIRST]`, `[LAST]`, `[*]`, `['key']`,
        /// `[$n]`, `.@values`, `.@keys`, `.@links.Class.prop`, then at most one postfix:
        /// `.@count`/`.@size`/`[SIZE]`, `.@type`, `.@min/.@max/.@sum/.@avg[.prop…]`, or `.length` as
        /// the very last component. A path that starts with `@links` has an empty head.
        private mutating func parseKeyPath(quantifier: QueryQuantifier?) throws(CoveError) -> QueryKeyPath {
            let headToken = try peek()
            var path = QueryKeyPath(head: "", quantifier: quantifier)
            switch headToken.kind {
            case .word(let name, _):
                path.head = name
                path.isVariable = variables.contains(name)
                try advance()
            case .keyPathArgument(let n):
                path.head = "$K\(try numberedArgument(n, headToken))"
                try advance()
            case .nextKeyPathArgument:
                path.head = "$K\(try positionalArgument(headToken))"
                try advance()
            case .at("links"):
                try advance()
                if try parseBacklinks(&path) { return try finished(path) }
            default:
                throw expectedError("expected a key path", headToken)
            }
            while true {
                let token = try peek()
                switch token.kind {
                case .symbol(.dot):
                    let next = try peek(1)
                    switch next.kind {
                    case .word(let name, _):
                        try advance()
                        try advance()
                        if name == "length", !continuesKeyPath(try peek()) {
                            path.postfix = .length
                            return path
                        }
                        path.steps.append(.property(name))
                    case .at(let name):
                        try advance()
                        try advance()
                        switch name {
                        case "count", "size":
                            path.postfix = .count
                            return try finished(path)
                        case "type":
                            path.postfix = .type
                            return try finished(path)
                        case "min", "max", "sum", "avg":
                            let aggregate: QueryAggregate = name == "min" ? .min : name == "max" ? .max : name == "sum" ? .sum : .avg
                            var property: [QueryPathStep] = []
                            while case .symbol(.dot) = try peek().kind {
                                let step = try peek(1)
                                guard case .word(let p, _) = step.kind else {
                                    throw expectedError("expected a property name after '@\(name).'", step)
                                }
                                try advance()
                                try advance()
                                property.append(.property(p))
                            }
                            path.postfix = .aggregate(aggregate, property: property)
                            return try finished(path)
                        case "values":
                            path.steps.append(.all)
                        case "keys":
                            path.steps.append(.keys)
                        default: // "links"
                            if try parseBacklinks(&path) { return try finished(path) }
                        }
                    default:
                        throw expectedError("expected a property name or an @ operator after '.'", next)
                    }
                case .symbol(.leftBracket):
                    try advance()
                    let sub = try peek()
                    switch sub.kind {
                    case .integer(let n, natural: true):
                        guard let index = Int(exactly: n) else { throw expectedError("expected an index", sub) }
                        path.steps.append(.index(index))
                    case .word(_, keyword: .first?): path.steps.append(.first)
                    case .word(_, keyword: .last?): path.steps.append(.last)
                    case .word(_, keyword: .size?): path.postfix = .count
                    case .symbol(.star): path.steps.append(.all)
                    case .string(let key): path.steps.append(.key(key))
                    case .base64(let b): path.steps.append(.key(try base64String(b, sub)))
                    case .argument(let n): path.steps.append(.argumentKey(try numberedArgument(n, sub)))
                    case .nextArgument: path.steps.append(.argumentKey(try positionalArgument(sub)))
                    default:
                        throw expectedError("expected an unsigned index, FIRST, LAST, SIZE, '*', a string key or an argument in '[ ]'", sub)
                    }
                    try advance()
                    try expect(.rightBracket, "expected ']' after the subscript")
                    if path.postfix != .none { return try finished(path) }
                default:
                    return path
                }
            }
        }

        /// After `@links`: `.Class.property` (a step; false, the path goes on) or `.@count`/`.@size`
        /// (every incoming link; true, the path is complete).
        private mutating func parseBacklinks(_ path: inout QueryKeyPath) throws(CoveError) -> Bool {
            let dot = try peek()
            let next = try peek(1)
            guard case .symbol(.dot) = dot.kind else {
                throw expectedError("expected .Class.property or .@count after @links", dot)
            }
            switch next.kind {
            case .at("count"), .at("size"):
                try advance()
                try advance()
                path.steps.append(.allBacklinks)
                path.postfix = .count
                return true
            case .word(let className, _):
                try advance()
                try advance()
                let dot2 = try peek()
                guard case .symbol(.dot) = dot2.kind, case .word(let property, _) = try peek(1).kind else {
                    throw expectedError("expected .property after @links.\(className)", dot2)
                }
                try advance()
                try advance()
                path.steps.append(.backlinks(className: className, property: property))
                return false
            default:
                throw expectedError("expected .Class.property or .@count after @links", next)
            }
        }

        private func continuesKeyPath(_ token: QueryToken) -> Bool {
            switch token.kind {
            case .symbol(.dot), .symbol(.leftBracket): return true
            default: return false
            }
        }

        /// `path`, checked that nothing continues it after its postfix.
        private mutating func finished(_ path: QueryKeyPath) throws(CoveError) -> QueryKeyPath {
            let token = try peek()
            if continuesKeyPath(token) {
                throw lexer.error("a key path cannot go on after \(Self.describe(path.postfix))", at: token.start)
            }
            return path
        }

        private static func describe(_ postfix: QueryPathPostfix) -> String {
            switch postfix {
            case .none: return "its end"
            case .count: return "@count"
            case .type: return "@type"
            case .length: return "length"
            case .aggregate(let a, _): return a.rawValue
            }
        }

        // MARK: Arguments

        /// `$n`: checked against the argument count, and not mixed with `%@`.
        private mutating func numberedArgument(_ n: Int, _ token: QueryToken) throws(CoveError) -> Int {
            if positionalArguments > 0 {
                throw lexer.error("'\(lexer.source(token.start, token.end))' cannot be mixed with %@ arguments", at: token.start)
            }
            usesNumberedArguments = true
            try checkRange(n, token)
            return n
        }

        /// `%@` or `%K`: the next argument in order.
        private mutating func positionalArgument(_ token: QueryToken) throws(CoveError) -> Int {
            if usesNumberedArguments {
                throw lexer.error("'\(lexer.source(token.start, token.end))' cannot be mixed with $n arguments", at: token.start)
            }
            let n = positionalArguments
            positionalArguments += 1
            try checkRange(n, token)
            return n
        }

        private func checkRange(_ n: Int, _ token: QueryToken) throws(CoveError) {
            guard let count = argumentCount, n >= count else { return }
            throw CoveError(.invalidArgument, "invalid argument in query \(lexer.quotedQuery): argument $\(n) is out of range: "
                            + "the query has \(count) argument\(count == 1 ? "" : "s") (at \(lexer.location(token.start)))")
        }

        // MARK: Tokens

        private mutating func peek(_ k: Int = 0) throws(CoveError) -> QueryToken {
            while lookahead.count <= k {
                lookahead.append(try lexer.next())
            }
            return lookahead[k]
        }

        private mutating func advance() throws(CoveError) {
            if lookahead.isEmpty { _ = try lexer.next() } else { lookahead.removeFirst() }
        }

        /// Consumes `symbol`; the message is built only on failure (it may scan the text for a position).
        private mutating func expect(_ symbol: QuerySymbol, _ expected: @autoclosure () -> String,
                                     detail: @autoclosure () -> String? = nil) throws(CoveError) {
            let token = try peek()
            guard case .symbol(symbol) = token.kind else { throw expectedError(expected(), token, detail: detail()) }
            try advance()
        }

        private mutating func atSubquery() throws(CoveError) -> Bool {
            if case .word(_, keyword: .subquery?) = try peek().kind { return true }
            return false
        }

        /// Consumes `||`/`OR`, if next.
        private mutating func consumeOr() throws(CoveError) -> Bool {
            switch try peek().kind {
            case .symbol(.or), .word(_, keyword: .or?):
                try advance()
                return true
            default:
                return false
            }
        }

        /// Consumes `&&`/`AND`, if next.
        private mutating func consumeAnd() throws(CoveError) -> Bool {
            switch try peek().kind {
            case .symbol(.and), .word(_, keyword: .and?):
                try advance()
                return true
            default:
                return false
            }
        }

        private mutating func enter(_ token: QueryToken) throws(CoveError) {
            depth += 1
            if depth > QueryParser.maxNesting { throw tooDeep(token) }
        }

        private func tooDeep(_ token: QueryToken) -> CoveError {
            lexer.error("nesting deeper than \(QueryParser.maxNesting) levels", at: token.start,
                        detail: "AND and OR alternating in parentheses, NOT, SUBQUERY and parenthesized arithmetic each add one")
        }

        /// "<expected> at position N, found <token>".
        private func expectedError(_ expected: String, _ token: QueryToken, detail: String? = nil) -> CoveError {
            let found: String
            if case .end = token.kind {
                found = "end of input"
            } else {
                found = "'\(lexer.source(token.start, token.end))'"
            }
            return lexer.error(expected, at: token.start, found: found, detail: detail)
        }
    }
}
