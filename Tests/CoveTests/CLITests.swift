// The `cove` command-line tool, run as a user runs it: exit status and output of `demo`,
// `check`, `info`, `schema`, `dump`, `import`, `query` and `recover`, on good files, bad lines, a file that is not a
// Cove file, and a missing one.
import FoundationEssentials
import XCTest
import Cove
#if canImport(Glibc)
import Glibc
#endif

final class CLITests: CoveTestCase {
    /// The `cove` executable built beside this test bundle.
    private static let tool = CLITool.path

    override func setUpWithError() throws {
        try super.setUpWithError()
        // `swift build --build-tests` builds the tool beside the tests; its absence is a failure.
        _ = try XCTUnwrap(access(Self.tool, X_OK) == 0 ? Self.tool : nil, "no cove tool at \(Self.tool)")
    }

    func testCheckGoodFile() throws {
        let path = "\(folder)/good.cove"
        let realm = try Realm(configuration: .init(path: path))
        try realm.write {}
        realm.close()
        let (status, output) = run(["check", path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("ok"), output)
    }

    func testBackupWritesACompactedCopy() throws {
        let path = "\(folder)/big.cove"
        let schema = try Schema(jsonText: #"{"Item": {"properties": {"n": "int", "s": "string"}}}"#)
        let realm = try Realm(configuration: .init(path: path, schema: schema, schemaVersion: 1))
        try realm.write { for i in 0..<3000 { _ = try realm.dynamicCreate("Item", values: [("n", .int(Int64(i))), ("s", .string("item \(i)"))]) } }
        try realm.write { for o in try realm.dynamicObjects("Item") where o.objectKey >= 100 { try realm.delete(o) } }
        realm.close()
        let (status, output) = run(["backup", path, "\(folder)/copy.cove"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("copy.cove: a copy of"), output)
        let copy = try Realm(configuration: .init(path: "\(folder)/copy.cove", readOnly: true))
        XCTAssertEqual(try copy.objectCount("Item"), 100)
        copy.close()
        let (again, refused) = run(["backup", path, "\(folder)/copy.cove"])
        XCTAssertNotEqual(again, 0)
        XCTAssertTrue(refused.contains("COVE_ERR_INVALID_ARGUMENT") && refused.contains("already exists"), refused)
    }

    /// An encrypted file through the tool: its key from COVE_ENCRYPTION_KEY for every command;
    /// without it, with another or with a malformed one, a message and status 1; backups keep
    /// the key, take another one or drop it; compact and recover keep it.
    func testEncryptedFilesTakeTheirKeyFromTheEnvironment() throws {
        let path = "\(folder)/sealed.cove"
        let key = Data((0..<64).map { UInt8($0 * 3 & 0xff) })
        let hex = key.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        let other = String(repeating: "ab", count: 64)
        do {
            let schema = try Schema(jsonText: #"{"Item": {"properties": {"n": "int", "s": "string"}}}"#)
            let realm = try Realm(configuration: .init(path: path, schema: schema, schemaVersion: 1, encryptionKey: key))
            try realm.write { for i in 0..<500 { _ = try realm.dynamicCreate("Item", values: [("n", .int(Int64(i))), ("s", .string("secret \(i)"))]) } }
            realm.close()
        }
        let env = ["COVE_ENCRYPTION_KEY": hex]
        var r = CLITool.run(["query", path, "Item", "n == 7"], in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("secret 7"), r.out)
        r = CLITool.run(["info", path, "--format", "json"], in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains(#""encrypted":true"#) && r.out.contains(#""objects.Item":500"#), r.out)
        r = CLITool.run(["shell", path, "--read-only"], input: ".info\n", in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("encrypted") && r.out.contains("500"), r.out)
        r = CLITool.run(["info", path], in: folder)
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("COVE_ERR_DECRYPTION") && r.err.contains("is encrypted"), r.err)
        r = CLITool.run(["info", path], in: folder, environment: ["COVE_ENCRYPTION_KEY": other])
        XCTAssertTrue(r.status == 1 && r.err.contains("does not open"), r.err)
        r = CLITool.run(["info", path], in: folder, environment: ["COVE_ENCRYPTION_KEY": "12zz"])
        XCTAssertTrue(r.status == 1 && r.err.contains("COVE_ENCRYPTION_KEY must hold 128 hexadecimal digits"), r.err)
        // Backups: the same key, another key, or plain.
        r = CLITool.run(["backup", path, "\(folder)/same.cove"], in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        r = CLITool.run(["backup", path, "\(folder)/other.cove", "--copy-key-from", "NEW_KEY"], in: folder,
                        environment: env.merging(["NEW_KEY": other]) { a, _ in a })
        XCTAssertEqual(r.status, 0, r.err)
        r = CLITool.run(["backup", path, "\(folder)/plain.cove", "--decrypt"], in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertFalse(FileHelper.read("\(folder)/same.cove")?.contains("secret 1") ?? true)
        XCTAssertFalse(FileHelper.read("\(folder)/other.cove")?.contains("secret 1") ?? true)
        XCTAssertTrue(FileHelper.read("\(folder)/plain.cove")?.contains("secret 1") ?? false)
        XCTAssertEqual(CLITool.run(["query", "\(folder)/same.cove", "Item", "n < 10"], in: folder, environment: env).status, 0)
        XCTAssertEqual(CLITool.run(["check", "\(folder)/other.cove"], in: folder, environment: ["COVE_ENCRYPTION_KEY": other]).status, 0)
        XCTAssertEqual(CLITool.run(["check", "\(folder)/plain.cove"], in: folder).status, 0)
        // Compaction and salvage keep the key.
        r = CLITool.run(["compact", path], in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        r = CLITool.run(["recover", path, "\(folder)/saved.cove"], in: folder, environment: env)
        XCTAssertEqual(r.status, 0, r.err)
        r = CLITool.run(["query", "\(folder)/saved.cove", "Item", "n == 499"], in: folder, environment: env)
        XCTAssertTrue(r.status == 0 && r.out.contains("secret 499"), r.out + r.err)
    }

    func testRecoverSaysWhatWasLostInItsExitStatus() throws {
        let path = "\(folder)/damaged.cove"
        do {
            let schema = try Schema(jsonText: #"{"Item": {"properties": {"n": "int", "s": "string"}}}"#)
            let realm = try Realm(configuration: .init(path: path, schema: schema, schemaVersion: 1))
            try realm.write { for i in 0..<3000 { _ = try realm.dynamicCreate("Item", values: [("n", .int(Int64(i))), ("s", .string(String(repeating: "s", count: 100)))]) } }
            realm.close()
        }
        // Nothing lost: 0.
        var result = CLITool.run(["recover", path, "\(folder)/all.cove"], in: folder)
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertTrue(result.out.contains("all.cove: salvaged from") && result.out.contains("Item: 3000 objects copied")
                      && result.out.contains("nothing was lost"), result.out)
        // Nothing written: 2.
        result = CLITool.run(["recover", path, "\(folder)/all.cove"], in: folder)
        XCTAssertEqual(result.status, 2, result.err)
        XCTAssertTrue(result.err.contains("COVE_ERR_INVALID_ARGUMENT") && result.err.contains("already exists"), result.err)
        XCTAssertTrue(FileHelper.write("\(folder)/text.cove", String(repeating: "not a cove file\n", count: 600)))
        result = CLITool.run(["recover", "\(folder)/text.cove", "\(folder)/none.cove"], in: folder)
        XCTAssertEqual(result.status, 2, result.err)
        XCTAssertTrue(result.err.contains("COVE_ERR_CORRUPT"), result.err)
        XCTAssertFalse(FileHelper.exists("\(folder)/none.cove"))

        // One cluster page damaged: 1, the report says which and how many.
        let map = try FileMap(path)
        let leaf = try map.clusters("Item")[1]
        map.close()
        try FileMap.damage(path, page: leaf.page)
        result = CLITool.run(["recover", path, "\(folder)/part.cove", "--format", "json"], in: folder)
        XCTAssertEqual(result.status, 1, result.err)
        XCTAssertTrue(result.err.contains("some data of '\(path)' could not be read"), result.err)
        let json = try JSONValue(parsing: Array(result.out.utf8))
        XCTAssertEqual(json["complete"], .bool(false))
        XCTAssertEqual(json["damaged_pages"], .array([.int(Int64(leaf.page))]))
        guard case .array(let classes)? = json["classes"], let item = classes.first else { return XCTFail(result.out) }
        XCTAssertEqual(item["objects_lost"], .int(Int64(leaf.keys.count)))
        XCTAssertEqual(item["objects_copied"], .int(Int64(3000 - leaf.keys.count)))
        result = CLITool.run(["recover", path, "\(folder)/part2.cove", "--format", "csv"], in: folder)
        XCTAssertEqual(result.status, 1, result.err)
        XCTAssertTrue(result.out.hasPrefix("class,objects_copied,objects_lost,collections_damaged,values_lost,links_dropped,damaged_pages\n")
                      && result.out.contains("Item,\(3000 - leaf.keys.count),\(leaf.keys.count),0,0,0,"), result.out)
        let saved = try Realm(configuration: .init(path: "\(folder)/part.cove", readOnly: true))
        XCTAssertEqual(try saved.objectCount("Item"), UInt64(3000 - leaf.keys.count))
        saved.close()
    }

    func testCompactShrinksAFileInPlace() throws {
        let path = "\(folder)/sparse.cove"
        do {
            let schema = try Schema(jsonText: #"{"Item": {"properties": {"s": "string"}}}"#)
            let realm = try Realm(configuration: .init(path: path, schema: schema, schemaVersion: 1))
            try realm.write { for i in 0..<4000 { _ = try realm.dynamicCreate("Item", values: [("s", .string(String(repeating: "y", count: 300) + "\(i)"))]) } }
            try realm.write { for o in try realm.dynamicObjects("Item") where o.objectKey >= 10 { try realm.delete(o) } }
            realm.close()
        }
        let (status, output) = run(["compact", path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("compacted from"), output)
        let realm = try Realm(configuration: .init(path: path, readOnly: true))
        XCTAssertEqual(try realm.objectCount("Item"), 10)
        let (busy, refused) = run(["compact", path])
        XCTAssertNotEqual(busy, 0)
        XCTAssertTrue(refused.contains("COVE_ERR_LOCKED") && refused.contains("open elsewhere"), refused)
        realm.close()
    }

    func testCheckRefusesANonCoveFile() {
        let path = "\(folder)/text.txt"
        XCTAssertTrue(FileHelper.write(path, String(repeating: "hello\n", count: 2000)))
        let (status, output) = run(["check", path])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("COVE_ERR_CORRUPT"), output)
        XCTAssertTrue(output.contains("not a Cove file"), output)
    }

    func testCheckMissingFile() {
        let (status, output) = run(["check", "\(folder)/missing.cove"])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("missing.cove"), output)
    }

    func testInfo() throws {
        let path = "\(folder)/info.cove"
        let realm = try Realm(configuration: .init(path: path))
        try realm.write {}
        let version = try realm.version
        realm.close()
        let (status, output) = run(["info", path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("version: \(version)"), output)
        XCTAssertFalse(output.contains("sync."), output)
    }

    func testInfoOfASyncedFile() throws {
        let path = "\(folder)/synced.cove"
        let sync = SyncConfiguration(url: "http://127.0.0.1:9", token: "t", startsConnected: false)
        let realm = try Realm(configuration: .init(path: path, schema: try Schema(jsonText: #"{"Note": {"primaryKey": "id", "properties": {"id": "int"}}}"#),
                                                   syncConfiguration: sync))
        try realm.write { try realm.dynamicCreate("Note", primaryKey: .int(1)) }
        try realm.write { try realm.dynamicCreate("Note", primaryKey: .int(2)) }
        let id = try XCTUnwrap(try realm.syncFileStatus()).clientFileId
        realm.close()
        let (status, output) = run(["info", path])
        XCTAssertEqual(status, 0, output)
        for line in ["sync.client_file_id: \(id)", "sync.waiting_uploads: 2", "sync.uploaded_version: 0", "sync.downloaded_version: 0"] {
            XCTAssertTrue(output.contains(line), output)
        }
    }

    func testSyncShowsUploadsAndSubscriptions() throws {
        let path = "\(folder)/synced.cove"
        let sync = SyncConfiguration(url: "http://127.0.0.1:9", token: "t", startsConnected: false)
        let realm = try Realm(configuration: .init(path: path, schema: try Schema(jsonText: #"{"Note": {"primaryKey": "id", "properties": {"id": "int", "n": "int"}}}"#),
                                                   syncConfiguration: sync))
        try realm.write { try realm.dynamicCreate("Note", primaryKey: .int(1)) }
        try realm.subscriptions.update({
            try realm.subscriptions.append(className: "Note", where: "n > $0", arguments: [.value(.int(2))], name: "big")
            try realm.subscriptions.append(className: "Note", where: "n IN $0", arguments: [.list([.int(1), .int(5)])])
        }, onComplete: nil)
        realm.close()
        let (status, output) = run(["sync", path, "--uploads", "5"])
        XCTAssertEqual(status, 0, output)
        for line in ["waiting_uploads: 1", "subscriptions.version: 1", "subscriptions.state: pending", "subscriptions.count: 2",
                     "subscription.1: big: Note where n > $0 with 2", "subscription.2: (unnamed): Note where n IN $0 with {1, 5}",
                     #"upload.1: {"client""#] {
            XCTAssertTrue(output.contains(line), "\(line)\n\(output)")
        }
        let (jsonStatus, json) = run(["sync", path, "--format", "json"])
        XCTAssertEqual(jsonStatus, 0, json)
        XCTAssertTrue(json.contains(#""subscriptions.count": 2"#) || json.contains(#""subscriptions.count":2"#), json)
        let plain = "\(folder)/plain.cove"
        try Realm(configuration: .init(path: plain, schema: try Schema(jsonText: #"{"Note": {"properties": {"id": "int"}}}"#))).close()
        let (refused, message) = run(["sync", plain])
        XCTAssertEqual(refused, 1)
        XCTAssertTrue(message.contains("never been opened with a sync configuration"), message)
    }

    func testDemo() {
        let (status, output) = run(["demo", "--path", "\(folder)/demo.cove"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("MVCC"), output)
        XCTAssertTrue(output.contains("verify()"), output)
        XCTAssertTrue(output.contains("change: deletions [], insertions [1, 2], modifications [] -> now [\"Ann\", \"Bob\", \"Cleo\"]"), output)
        XCTAssertTrue(output.contains("change: deletions [0]"), output)
    }

    func testImportDumpAndSchemaRoundTrip() throws {
        let schema = #"{"Person": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "born": "date?", "#
            + #""dogs": "Dog[]", "tags": "string<>", "scores": "double{}", "home": "Address?", "any": "mixed", "pic": "data?"}}, "#
            + #""Dog": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "owners": "@links(Person.dogs)"}}, "#
            + #""Address": {"embedded": true, "properties": {"city": "string"}}}"#
        XCTAssertTrue(FileHelper.write("\(folder)/schema.json", schema))
        XCTAssertTrue(FileHelper.write("\(folder)/dogs.jsonl", "{\"id\": 1, \"name\": \"Rex\"}\n{\"id\": 2, \"name\": \"Fido\"}\n"))
        let ann = #"{"name":"Ann","age":31,"born":"1990-05-01T10:00:00.25Z","dogs":[1,2,1],"tags":["a","b"],"#
            + #""scores":{"x":1.5},"home":{"city":"Oslo"},"any":{"$decimal":"1.25"},"pic":"AAH/"}"#
        // Bob's mixed value nests a dictionary (with a key like a tag), a float and a link.
        let nested = #""any":{"$dictionary":{"$n":{"$float":1.5},"l":[1,[],{"$link":{"class":"Dog","primaryKey":1}}]}}"#
        XCTAssertTrue(FileHelper.write("\(folder)/people.jsonl", ann + "\n\n" + #"{"name": "Bob", "age": 40, "dogs": [{"id": 3, "name": "Max"}], "# + nested + "}\n"))
        let file = "\(folder)/people.cove"
        var (status, output) = run(["import", file, "Dog", "\(folder)/dogs.jsonl", "--schema", "\(folder)/schema.json"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("imported 2 Dog objects from 2 lines in 1 batches"), output)
        (status, output) = run(["import", file, "Person", "\(folder)/people.jsonl", "--batch-size", "1"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("imported 2 Person objects from 3 lines in 2 batches"), output)

        (status, output) = run(["dump", file, "Person"])
        XCTAssertEqual(status, 0, output)
        let lines = output.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, ann)
        XCTAssertEqual(lines.count, 2, output)
        XCTAssertTrue(lines[1].contains(#""dogs":[3]"#), output)
        XCTAssertTrue(lines[1].contains(nested), output)
        (status, output) = run(["dump", file])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains(#"{"$class":"Dog","id":3,"name":"Max"}"#), output)
        XCTAssertFalse(output.contains(#""$class":"Address""#), output)
        (status, output) = run(["schema", file])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(try Schema(jsonText: output), try Schema(jsonText: schema))

        // A bad line: its batch is not loaded, the ones before it are, and the exit is non-zero.
        XCTAssertTrue(FileHelper.write("\(folder)/bad.jsonl", "{\"name\": \"Cy\", \"age\": 1}\n{\"name\": \"Di\", \"age\": 2}\n{\"name\": \"Ed\", \"age\": \"x\"}\n"))
        (status, output) = run(["import", file, "Person", "\(folder)/bad.jsonl", "--batch-size", "2"])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("bad.jsonl:3: property 'age' of class 'Person' is int: expected an integer, got \"x\""), output)
        XCTAssertTrue(output.contains("stopped at line 3: lines 3-3 not loaded"), output)
        (status, output) = run(["dump", file, "Person"])
        XCTAssertEqual(output.split(separator: "\n").count, 4, output)
        XCTAssertTrue(FileHelper.write("\(folder)/bad2.jsonl", "{\"name\": \"Fay\", \"nope\": 1}\nnot json\n"))
        (status, output) = run(["import", file, "Person", "\(folder)/bad2.jsonl"])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("bad2.jsonl:1: class 'Person' has no property 'nope'"), output)
        (status, output) = run(["dump", file, "Nope"])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("no class 'Nope'"), output)
        (status, output) = run(["check", file])
        XCTAssertEqual(status, 0, output)

        // Queries over what was imported.
        (status, output) = run(["query", file, "Person", "age > 30 SORT(name DESC)"])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(output.split(separator: "\n").map { $0.contains(#""name":"Bob""#) }, [true, false])
        (status, output) = run(["query", file, "Person", "ANY dogs.name == \"Max\"", "--count"])
        XCTAssertEqual(output, "1\n")
        (status, output) = run(["query", file, "Dog", "id == 2", "--explain"])
        XCTAssertTrue(output.contains("primary-key index on Dog.id"), output)
        (status, output) = run(["query", file, "Person", "age >"])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("COVE_ERR_QUERY_SYNTAX") && output.contains("position 6"), output)
        (status, output) = run(["query", file, "Person", "nope == 1"])
        XCTAssertEqual(status, 1, output)
        XCTAssertTrue(output.contains("no property 'nope'"), output)
    }

    func testWatchPrintsChangeSetsOfAnotherProcess() throws {
        let path = "\(folder)/watch.cove"
        let schema = try Schema(jsonText: #"{"Person": {"properties": {"name": "string", "age": "int"}}}"#)
        let realm = try Realm(configuration: .init(path: path, durability: .noSync, schema: schema, schemaVersion: 1))
        defer { realm.close() }
        try realm.write { try realm.dynamicCreate("Person", values: [("name", .string("a")), ("age", .int(40))]) }
        let out = "\(folder)/watch.txt"
        XCTAssertEqual(system("'\(Self.tool)' watch '\(path)' Person 'age > 30' --changes 1 --seconds 20 > '\(out)' 2>&1 &"), 0)
        // Wait for the initial line, then commit from this process.
        var text = CLITool.waitFor("initial", inFile: out)
        XCTAssertTrue(text.contains(#"{"initial":1,"#), text)
        try realm.write {
            try realm.dynamicCreate("Person", values: [("name", .string("b")), ("age", .int(50))])
            try realm.dynamicCreate("Person", values: [("name", .string("c")), ("age", .int(5))])
        }
        text = CLITool.waitFor("insertions", inFile: out)
        XCTAssertTrue(text.contains(#""deletions":[],"insertions":[1],"modifications":[]"#), text)
        let (status, output) = run(["watch", "\(folder)/missing.cove", "Person"])
        XCTAssertNotEqual(status, 0, output)

        // Sections: a person moves from one age's section to a new one.
        let sectionsOut = "\(folder)/sections.txt"
        XCTAssertEqual(system("'\(Self.tool)' watch '\(path)' Person 'age > 30' --section-by age --changes 1 --seconds 20 > '\(sectionsOut)' 2>&1 &"), 0)
        text = CLITool.waitFor("initialSections", inFile: sectionsOut)
        XCTAssertTrue(text.contains(#"{"initialSections":["40","50"]}"#), text)
        try realm.write {
            guard let b = try realm.objects("Person").filter("name == 'b'").elements().first else { return }
            try b.setValue(.int(60), forKey: "age")
        }
        text = CLITool.waitFor("sectionsToDelete", inFile: sectionsOut)
        XCTAssertTrue(text.contains(#"{"sectionsToDelete":[1],"sectionsToInsert":[1],"deletions":[],"insertions":[],"modifications":[]}"#), text)
    }

    func testUnknownCommandFails() {
        let (status, _) = run(["no-such-command"])
        XCTAssertNotEqual(status, 0)
    }

    /// Runs the tool with stdout and stderr captured together.
    private func run(_ arguments: [String]) -> (Int32, String) {
        let out = "\(folder)/out.txt"
        let quoted = ([Self.tool] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let status = system("\(quoted) > '\(out)' 2>&1")
        let code = (status >> 8) & 0xff
        return (code, FileHelper.read(out) ?? "")
    }
}
