// `cove demo`: a short tour of what Cove does today, on a temporary file. It grows with the
// product: storage first, then objects, queries and live results.
import ArgumentParser
import Cove
#if canImport(Glibc)
import Glibc
#endif

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show Cove at work on a temporary file.")

    @Option(help: "Where to put the demo file (default: a new temporary folder).")
    var path: String?

    func run() throws {
        do {
            try tour()
        } catch let error as CoveError {
            throw exitWith(error)
        }
    }

    private func tour() throws {
        let folder = path == nil ? makeTemporaryFolder() : nil
        let file = path ?? folder! + "/demo.cove"
        print("Cove \(CoveVersion.string) demo: \(file)\n")
        // A temporary demo file goes away afterwards; one the user named stays.
        defer {
            if let folder {
                unlink(file)
                unlink(file + ".lock")
                rmdir(folder)
            }
        }

        let schema = try Schema(jsonText: """
            {"Person": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "dog": "Dog?"}},
             "Dog": {"properties": {"name": "string", "age": "int", "owners": "@links(Person.dog)",
                                    "tricks": "string[]", "tags": "string<>", "scores": "double{}", "collar": "Collar?"},
                     "indexed": ["age"]},
             "Collar": {"embedded": true, "properties": {"color": "string"}}}
            """)
        let configuration = Realm.Configuration(path: file, schema: schema, schemaVersion: 1)
        let writer = try Realm(configuration: configuration)
        let reader = try Realm(configuration: configuration)
        defer {
            writer.close()
            reader.close()
        }
        print("1. Two handles open the same file with a schema (Person, Dog); both see version \(try writer.version).")

        let frozen = try reader.freeze()
        try writer.write {
            let rex = try writer.dynamicCreate("Dog", values: [("name", .string("Rex")), ("age", .int(3))])
            try writer.dynamicCreate("Person", primaryKey: .string("Ann"), values: [("age", .int(31)), ("dog", .link(rex.link))])
            try writer.dynamicCreate("Person", primaryKey: .string("Bob"), values: [("age", .int(28)), ("dog", .link(rex.link))])
        }
        print("2. The writer commits Rex and his owners Ann and Bob in one durable transaction: version \(try writer.version).")
        print("   The reader still sees its snapshot: \(try reader.objectCount("Person")) people (MVCC isolation).")

        let advanced = try reader.refresh()
        print("3. reader.refresh() advanced: \(advanced); it now sees:")
        for person in try reader.dynamicObjects("Person") {
            let dog = try person.linkedObject("dog")
            print("   \(try person["name"]) (\(try person["age"])) owns \(try dog?["name"] ?? .null)")
        }
        if let rex = try reader.dynamicObjects("Dog").first {
            let owners = try rex.linkingObjects("owners").map { try $0["name"].description }
            print("   Rex's owners, through backlinks: \(owners.joined(separator: ", "))")
        }
        print("   A frozen snapshot taken earlier still has \(try frozen.objectCount("Person")) people at version \(try frozen.version).")
        frozen.close()

        try writer.write {
            guard let rex = try writer.dynamicObjects("Dog").first else { return }
            let tricks = try rex.dynamicList("tricks")
            for trick in ["sit", "roll", "fetch"] { try tricks.append(.string(trick)) }
            try tricks.move(from: 2, to: 0)
            try rex.dynamicMutableSet("tags").union([.string("good"), .string("fluffy"), .string("good")])
            try rex.dynamicMap("scores").setValue(.double(9.5), forKey: "agility")
            try rex.createEmbeddedObject(forProperty: "collar").setValue(.string("red"), forKey: "color")
        }
        _ = try reader.refresh()
        if let rex = try reader.dynamicObjects("Dog").first {
            print("4. Rex learns tricks (a list), gets tags (a set), scores (a map) and a collar (an embedded object):")
            print("   tricks \(try rex.dynamicList("tricks").values()), tags \(try rex.dynamicMutableSet("tags").values())")
            print("   scores \(try rex.dynamicMap("scores").entries().map { "\($0.key): \($0.value)" }), collar \(try rex.linkedObject("collar")?["color"] ?? .null)")
            print("   Dogs aged 3, through the index on age: \(try reader.dynamicObjects("Dog", where: "age", equals: .int(3)).count)")
            if let record = try reader.changeRecord(forVersion: try reader.version) {
                print("   The commit's change record, for live queries: \(record.collections.count) collections changed, in \(record.tables.count) tables")
            }
        }

        try writer.write {
            if let rex = try writer.dynamicObjects("Dog").first { try writer.delete(rex) }
        }
        _ = try reader.refresh()
        let ann = try reader.dynamicObject(ofType: "Person", forPrimaryKey: .string("Ann"))
        print("5. Deleting Rex nullifies the links to him (Ann's dog is now \(try ann?["dog"] ?? .null)) and deletes his collar (\(try reader.objectCount("Collar")) collars left).")

        print("6. verify() checks every page's checksum, the trees, and that live and free pages partition the file:")
        for line in try writer.verify().split(separator: "\n") {
            print("   \(line)")
        }

        // A live query: the reader observes people over 30, the writer commits, the reader's
        // refresh delivers the change set a table view would apply.
        let over30 = try reader.objects("Person").filter("age > 30").sorted(byKeyPath: "name")
        print("7. A live query on the reader: Person where age > 30, sorted by name.")
        let token = try over30.observeChanges { change in
            switch change {
            case .initial:
                print("   initial: \(names(over30))")
            case .update(let c):
                print("   change: deletions \(c.deletions), insertions \(c.insertions), modifications \(c.modifications) -> now \(names(over30))")
            case .error(let e):
                print("   error: \(e.message)")
            }
        }
        defer { token.invalidate() }
        try reader.deliver()
        try writer.write {
            try writer.dynamicCreate("Person", primaryKey: .string("Cleo"), values: [("age", .int(45))])
            try writer.dynamicObject(ofType: "Person", forPrimaryKey: .string("Bob"))?.setValue(.int(35), forKey: "age")
        }
        print("   The writer adds Cleo (45) and makes Bob 35; the reader refreshes:")
        _ = try reader.refresh()
        try writer.write {
            try writer.dynamicObject(ofType: "Person", forPrimaryKey: .string("Ann"))?.setValue(.int(20), forKey: "age")
        }
        print("   The writer makes Ann 20; the reader refreshes:")
        _ = try reader.refresh()

        print("\nCove: objects, queries and live results, in one file that survives a crash.")
    }

    /// The names of the people in `results`, for printing.
    private func names(_ results: Results<DynamicObject>) -> [String] {
        ((try? results.elements()) ?? []).map { person in
            if case .string(let name)? = try? person["name"] { return name }
            return "?"
        }
    }

    private func makeTemporaryFolder() -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/cove-demo-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress, let p = mkdtemp(start) else { return "." }
            return String(cString: p)
        }
    }
}
