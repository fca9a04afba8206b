// `cove watch FILE CLASS 'query'`: prints the matches' changes as other processes commit, until
// interrupted (or after --changes deliveries, or --seconds): the primary keys (or $key) of the
// objects deleted, inserted and modified, the properties written, the version and the time.
import ArgumentParser
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the changes of a live query as other processes write to the file.")

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "The class of the objects.")
    var className: String

    @Argument(help: "The query (default: every object).")
    var query: String = ""

    @OptionGroup var arguments: ArgumentOptions

    @Option(help: "Key paths the changes are filtered on, comma-separated (default: every property).")
    var keyPaths: String?

    @Option(help: "Print section change sets, the matches sectioned by this property.")
    var sectionBy: String?

    @Option(help: "Stop after this many change sets (default: never).")
    var changes: Int?

    @Option(help: "Stop after this many seconds (default: never).")
    var seconds: Double?

    @Option(help: "json (the default: a line per change set), or \(OutputMode.names) for a row per changed object.")
    var format: OutputMode = .json

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            let results = try selectObjects(realm, className, query, try queryArguments(arguments.values, realm))
            let state = WatchState()
            let paths = keyPaths.map(splitColumns)
            if let sectionBy {
                let sections = try results.sectioned(by: sectionBy)
                let token = try sections.observeChanges(keyPaths: paths) { change in
                    switch change {
                    case .initial:
                        let keys = ((try? sections.checkedAllKeys()) ?? []).map { JSONValue.string($0.description) }
                        print(JSONValue.object([JSONMember("initialSections", .array(keys))]).serialized())
                    case .update(let c):
                        state.delivered += 1
                        func paths(_ ps: [IndexPath]) -> JSONValue { .array(ps.map { .array([.int(Int64($0.section)), .int(Int64($0.row))]) }) }
                        print(JSONValue.object([
                            JSONMember("sectionsToDelete", .array(c.sectionsToDelete.map { .int(Int64($0)) })),
                            JSONMember("sectionsToInsert", .array(c.sectionsToInsert.map { .int(Int64($0)) })),
                            JSONMember("deletions", paths(c.deletions)), JSONMember("insertions", paths(c.insertions)),
                            JSONMember("modifications", paths(c.modifications)),
                        ]).serialized())
                    case .error(let e):
                        state.failure = e
                    }
                    fflush(nil)
                }
                defer { token.invalidate() }
                try loop(realm, state)
                return
            }
            let printer = ChangePrinter(realm: realm, className: className, results: results, format: format)
            let token = try results.observeChanges(keyPaths: paths) { change in
                do {
                    switch change {
                    case .initial:
                        try printer.initial()
                    case .update(let c):
                        state.delivered += 1
                        try printer.update(c)
                    case .error(let e):
                        state.failure = e
                    }
                } catch {
                    state.failure = error as? CoveError ?? CoveError(.callback, "\(error)")
                }
                fflush(nil)
            }
            defer { token.invalidate() }
            try loop(realm, state)
        }
    }

    /// Delivers, then waits for commits and refreshes until the count or time is reached.
    private func loop(_ realm: Realm, _ state: WatchState) throws {
        if let seconds, !(seconds >= 0) { throw CoveError(.invalidArgument, "--seconds must be a number of seconds, not \(seconds)") }
        try realm.deliver()
        let deadline = seconds.map { Double(monotonicMilliseconds()) + $0 * 1000 }
        while state.failure == nil {
            if let changes, state.delivered >= changes { break }
            var wait: Int64 = 500
            if let deadline {
                let left = deadline - Double(monotonicMilliseconds())
                if left <= 0 { break }
                wait = Int64(min(Double(wait), left))
            }
            if try realm.waitForChange(timeoutMilliseconds: wait) { _ = try realm.refresh() }
        }
        if let failure = state.failure { throw failure }
    }
}

/// What the callbacks of `cove watch` tell its loop.
final class WatchState {
    var delivered = 0
    var failure: CoveError?
}

/// Prints the changes of a query's results: it keeps the matches' keys of the last delivery
/// (to name the deleted ones) and the version it saw (to read the change records since).
final class ChangePrinter {
    let realm: Realm
    let className: String
    let results: Results<DynamicObject>
    let format: OutputMode
    private let encoder: DumpEncoder
    private var keys: [JSONValue] = []
    private var version: UInt64 = 0

    init(realm: Realm, className: String, results: Results<DynamicObject>, format: OutputMode) {
        self.realm = realm
        self.className = className
        self.results = results
        self.format = format
        encoder = DumpEncoder(realm)
    }

    func initial() throws(CoveError) {
        keys = try currentKeys()
        version = try realm.version
        if format == .json {
            print(JSONValue.object([JSONMember("initial", .int(Int64(keys.count))), JSONMember("version", .int(Int64(version))),
                                    JSONMember("time", .string(timeNow()))]).serialized())
        } else if format == .csv {
            printOut(Table(columns: Self.columns).rendered(.csv))
        }
    }

    static let columns = ["time", "version", "change", "key", "properties"]

    func update(_ c: CollectionChangeSet) throws(CoveError) {
        let objects = try results.elements()
        let newKeys = try objects.map { (o) throws(CoveError) in try key(of: o) }
        let now = try realm.version
        let written = try writtenProperties(since: version, to: now)
        version = now
        let time = timeNow()
        let deleted = c.deletions.compactMap { $0 < keys.count ? keys[$0] : nil }
        let inserted = c.insertions.compactMap { $0 < newKeys.count ? newKeys[$0] : nil }
        let modified: [(JSONValue, [String])] = c.modifications.compactMap { i in
            guard i < objects.count else { return nil }
            let names = objects[i].objectSchema.properties.filter { p in p.key.map { written[objects[i].objectKey]?.contains($0) ?? false } ?? false }.map(\.name)
            return (newKeys[i], names)
        }
        keys = newKeys
        if format == .json {
            print(JSONValue.object([
                JSONMember("version", .int(Int64(now))), JSONMember("time", .string(time)),
                JSONMember("deletions", .array(c.deletions.map { .int(Int64($0)) })),
                JSONMember("insertions", .array(c.insertions.map { .int(Int64($0)) })),
                JSONMember("modifications", .array(c.modifications.map { .int(Int64($0)) })),
                JSONMember("deleted", .array(deleted)), JSONMember("inserted", .array(inserted)),
                JSONMember("modified", .array(modified.map { .object([JSONMember("key", $0.0), JSONMember("properties", .array($0.1.map { .string($0) }))]) })),
            ]).serialized())
            return
        }
        var table = Table(columns: Self.columns)
        func row(_ change: String, _ key: JSONValue, _ properties: [String]) {
            table.rows.append([.string(time), .int(Int64(now)), .string(change), key, .string(properties.joined(separator: ","))])
        }
        for k in deleted { row("deleted", k, []) }
        for k in inserted { row("inserted", k, []) }
        for (k, names) in modified { row("modified", k, names) }
        if format == .csv {
            printOut(table.rendered(.csv, headers: false))
        } else {
            for r in table.rows { print(r.map(Table.text).filter { !$0.isEmpty }.joined(separator: " ")) }
        }
    }

    /// The matches' keys: primary keys, or {"$key": n} for a class without one.
    private func currentKeys() throws(CoveError) -> [JSONValue] {
        try results.elements().map { (o) throws(CoveError) in try key(of: o) }
    }

    private func key(of object: DynamicObject) throws(CoveError) -> JSONValue {
        if let pk = object.objectSchema.primaryKeyProperty {
            return try encoder.value(try object.value(forKey: pk.name), pk)
        }
        return .object([JSONMember("$key", .int(object.objectKey))])
    }

    /// Per object key of the watched class, the keys of the properties the commits after
    /// `old` up to `new` wrote (collections included), from the commits' change records.
    private func writtenProperties(since old: UInt64, to new: UInt64) throws(CoveError) -> [Int64: Set<Int64>] {
        guard let classKey = realm.schema[className]?.classKey, new > old else { return [:] }
        var written: [Int64: Set<Int64>] = [:]
        for v in (old + 1)...new {
            guard let record = try realm.changeRecord(forVersion: v) else { continue }
            for (key, properties) in record.tables[classKey]?.modified ?? [:] { written[key, default: []].formUnion(properties) }
            for id in record.collections.keys where id.classKey == classKey {
                written[id.objectKey, default: []].insert(id.propertyKey)
            }
        }
        return written
    }
}
