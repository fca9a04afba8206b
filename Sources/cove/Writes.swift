// `cove create`, `cove set` and `cove delete`: one write transaction that creates an object from
// JSON, sets properties of the objects a query selects, or deletes them. The shell's create,
// set and delete run the same code.
import ArgumentParser
import Cove

struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create an object from a JSON object (or update the one with its primary key).",
        discussion: #"Example: cove create app.cove Person '{"name": "Ann", "age": 31, "dogs": [1]}'"#)

    @OptionGroup var target: WriteTarget
    @Argument(help: "The object as JSON, as `cove import` takes it.")
    var json: String
    @OptionGroup var options: WriteCommandOptions

    func run() throws {
        try runWrite(target, options, "created") { realm, wait in try createObject(realm, target.className, json, wait) }
    }
}

struct SetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set",
        abstract: "Set properties of the objects a query selects.",
        discussion: #"Example: cove set app.cove Person '{"age": 32}' 'name == $0' --arg Ann"#)

    @OptionGroup var target: WriteTarget
    @Argument(help: "The properties to set, as a JSON object.")
    var json: String
    @Argument(help: "The query selecting the objects (TRUEPREDICATE: every one).")
    var query: String
    @OptionGroup var options: WriteCommandOptions

    func run() throws {
        try runWrite(target, options, "updated") { realm, wait in
            try setObjects(realm, target.className, json, query, try queryArguments(options.arguments.values, realm), wait)
        }
    }
}

struct Delete: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Delete the objects a query selects.",
        discussion: "Example: cove delete app.cove Person 'age < $0' --arg 18")

    @OptionGroup var target: WriteTarget
    @Argument(help: "The query selecting the objects (TRUEPREDICATE: every one).")
    var query: String
    @OptionGroup var options: WriteCommandOptions

    func run() throws {
        try runWrite(target, options, "deleted") { realm, wait in
            try deleteObjects(realm, target.className, query, try queryArguments(options.arguments.values, realm), wait)
        }
    }
}

/// The file and class a write command changes.
struct WriteTarget: ParsableArguments {
    @Argument(help: "The Cove file.")
    var file: String
    @Argument(help: "The class of the objects.")
    var className: String
}

/// The options of create, set and delete.
struct WriteCommandOptions: ParsableArguments {
    @OptionGroup var arguments: ArgumentOptions
    @OptionGroup var wait: WriteOptions
    @Option(help: "Print the summary as \(OutputMode.names) (default: a sentence).")
    var format: OutputMode?
}

/// Opens the target's file, runs `body` (which returns how many objects it changed) and
/// prints "<verb> N objects".
private func runWrite(_ target: WriteTarget, _ options: WriteCommandOptions, _ verb: String,
                      _ body: (Realm, LockWait) throws -> Int) throws {
    try reportingErrors {
        let realm = try openForWriting(target.file, options.wait)
        defer { realm.close() }
        let n = try body(realm, LockWait(file: target.file, timeout: options.wait.timeout))
        report("\(verb) \(objectsText(n, target.className))", [JSONMember(verb, .int(Int64(n)))], options.format)
    }
}

/// Runs `body` in a write transaction of its own: committed when it returns, cancelled when it
/// throws.
func inWrite<T>(_ realm: Realm, _ wait: LockWait, _ body: () throws -> T) throws -> T {
    try beginWrite(realm, wait)
    do {
        let result = try body()
        try realm.commitWrite()
        return result
    } catch {
        if realm.isInWriteTransaction { try? realm.cancelWrite() }
        throw error
    }
}

/// A JSON object from text, or an error naming what is wrong.
private func jsonObject(_ text: String) throws(CoveError) -> JSONValue {
    let json: JSONValue
    do {
        json = try JSONValue(parsing: text)
    } catch {
        throw CoveError(.invalidArgument, "not a JSON object: \(error.message)")
    }
    guard case .object = json else { throw CoveError(.invalidArgument, "expected a JSON object, got \(json.kindName)") }
    return json
}

/// Creates (or updates, by primary key) one object; returns 1.
func createObject(_ realm: Realm, _ className: String, _ text: String, _ wait: LockWait) throws -> Int {
    let json = try jsonObject(text)
    let item = try Loader.item(json, line: 1, className: className, schema: realm.schema)
    return try inWrite(realm, wait) {
        let loader = Loader(realm)
        try loader.fill(item, key: try loader.create(item))
        return 1
    }
}

/// Sets the members of a JSON object on the objects a query selects; returns how many.
func setObjects(_ realm: Realm, _ className: String, _ text: String, _ query: String, _ arguments: [QueryArgument],
                _ wait: LockWait) throws -> Int {
    guard case .object(let members) = try jsonObject(text) else { return 0 }
    guard query.trimmingSpaces().isEmpty == false else {
        throw CoveError(.invalidArgument, "set needs a query selecting the objects (TRUEPREDICATE for every one)")
    }
    return try inWrite(realm, wait) {
        let objects = try selectObjects(realm, className, query, arguments).elements()
        let loader = Loader(realm)
        for object in objects { try loader.apply(members, to: object) }
        return objects.count
    }
}

/// Deletes the objects a query selects; returns how many.
func deleteObjects(_ realm: Realm, _ className: String, _ query: String, _ arguments: [QueryArgument],
                   _ wait: LockWait) throws -> Int {
    guard query.trimmingSpaces().isEmpty == false else {
        throw CoveError(.invalidArgument, "delete needs a query selecting the objects (TRUEPREDICATE for every one)")
    }
    return try inWrite(realm, wait) {
        let objects = try selectObjects(realm, className, query, arguments).elements()
        for object in objects { try realm.delete(object) }
        return objects.count
    }
}

/// "1 Person object", "2 Person objects".
func objectsText(_ n: Int, _ className: String) -> String {
    "\(n) \(className) object" + (n == 1 ? "" : "s")
}
