// `cove query FILE CLASS 'query'`: the objects a query selects, as JSON lines or a table (or the
// plan with --explain, or the count with --count).
import ArgumentParser
import Cove

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of CLASS that a query selects.",
        discussion: """
            The query is the Realm Query Language, e.g. 'age > $0 SORT(name ASC) LIMIT(10)' with \
            --arg 30; WHERE may stand before it, and SORT, DISTINCT, LIMIT or OFFSET alone \
            select every object in that order.
            """)

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "The class of the objects.")
    var className: String

    @Argument(help: "The query (default: every object).")
    var query: String = ""

    @OptionGroup var arguments: ArgumentOptions
    @OptionGroup var columns: ColumnOptions

    @Option(help: "\(OutputMode.names) (default: json, an object per line).")
    var format: OutputMode = .json

    @Flag(help: "Print how the query runs (the index used, the stages) instead of the objects.")
    var explain = false

    @Flag(help: "Print only the number of matches.")
    var count = false

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            printOut(try queryText(realm, className, query, try queryArguments(arguments.values, realm),
                                   columns: columns.list, format: format, explain: explain, count: count))
        }
    }
}

/// What a query prints: its plan, its count, or its objects in `format`.
func queryText(_ realm: Realm, _ className: String, _ query: String, _ arguments: [QueryArgument],
               columns: [String]?, format: OutputMode, headers: Bool = true, explain: Bool = false,
               count: Bool = false) throws(CoveError) -> String {
    let results = try selectObjects(realm, className, query, arguments)
    if explain { return try results.explain() + "\n" }
    if count {
        let n = JSONValue.int(Int64(try results.checkedCount()))
        return format == .json || format == .table ? n.serialized() + "\n" : Table(columns: ["count"], rows: [[n]]).rendered(format, headers: headers)
    }
    guard let cls = realm.schema[className] else { return "" }
    return try objectTable(try results.elements(), cls, columns: columns, encoder: DumpEncoder(realm)).rendered(format, headers: headers)
}
