// `cove query FILE CLASS 'query'`: the objects a query selects, as JSON lines (or the plan with
// --explain, or the count with --count).
import ArgumentParser
import Cove

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of CLASS that a query selects, as JSON lines.",
        discussion: "The query is the Realm Query Language, e.g. 'age > 3 SORT(name ASC) LIMIT(10)'.")

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "The class of the objects.")
    var className: String

    @Argument(help: "The query (default: every object).")
    var query: String = "TRUEPREDICATE"

    @Flag(help: "Print how the query runs (the index used, the stages) instead of the objects.")
    var explain = false

    @Flag(help: "Print only the number of matches.")
    var count = false

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            let results = try realm.objects(className).filter(query)
            if explain {
                print(try results.explain())
                return
            }
            if count {
                print(try results.checkedCount())
                return
            }
            for object in try results.elements() {
                print(try ObjectJSON.encode(object).serialized())
            }
        }
    }
}
