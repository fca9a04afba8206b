// Realm.salvage(fromFile:toFile:): a file with chosen pages damaged on disk (a table's cluster
// page, a page of a table's tree of clusters, the branch and a leaf of large lists, the page of
// the schema record, a page of a commit an open would discard) is salvaged into a new file that
// holds every object not on a damaged page with all its values, links to lost objects taken out
// as deleting them would, and that verifies; the report names the losses exactly. An undamaged
// file salvages completely; a file whose schema cannot be read salvages nothing.
import Glibc
import FoundationEssentials
import XCTest
@testable import Cove
@testable import CoveCore
@testable import CoveStorage

final class SalvageTests: CoveTestCase {

    /// Four classes: lists, sets and maps of values and of links (small ones in the row, two
    /// large lists in trees of their own), links single and mixed, embedded objects, two kinds
    /// of primary key, an index, a long string, and property names long enough for the schema
    /// record to take a page of its own.
    static let schemaJSON = """
    {"Log": {"primaryKey": "n", "properties": {"n": "int", "line": "string"}},
     "Note": {"embedded": true, "properties": {"text": "string"}},
     "Dog": {"properties": {"name": "string", "weight": "double?", "tricks": "string[]", "owners": "@links(Person.dogs)"}},
     "Person": {"primaryKey": "name", "indexed": ["age"], "properties": {
        "name": "string", "age": "int", "bio": "string?", "anything": "mixed", "log": "Log?",
        "best": "Dog?", "dogs": "Dog[]", "pets": "Dog{}", "favourites": "Dog<>",
        "scores": "double{}", "tags": "string<>", "notes": "Note[]", "big": "int[]",
        "aLongPropertyNameThatMakesTheSchemaRecordLonger": "string?",
        "anotherLongPropertyNameThatMakesTheSchemaRecordLonger": "int?",
        "yetAnotherLongPropertyNameThatMakesTheSchemaRecordLonger": "double?"}}}
    """

    private func open(_ path: String, key: Data? = nil) throws -> Realm {
        try Realm(configuration: .init(path: path, durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1, encryptionKey: key))
    }

    private func fill(_ realm: Realm) throws {
        try realm.write {
            var dogs: [DynamicObject] = []
            for i in 0..<600 {
                let dog = try realm.dynamicCreate("Dog", values: [("name", .string("dog \(i)")), ("weight", i % 3 == 0 ? .null : .double(Double(i)))])
                if i % 7 == 0 { for t in 0..<3 { try dog.dynamicList("tricks").append(.string("trick \(t)")) } }
                dogs.append(dog)
            }
            var logs: [DynamicObject] = []
            for n in 0..<2500 {
                logs.append(try realm.dynamicCreate("Log", primaryKey: .int(Int64(n)), values: [("line", .string(String(repeating: "l", count: 200) + " \(n)"))]))
            }
            for i in 0..<400 {
                let p = try realm.dynamicCreate("Person", primaryKey: .string("p\(i)"), values: [
                    ("age", .int(Int64(i % 90))), ("bio", i % 40 == 0 ? .string(String(repeating: "b", count: 5000)) : .null),
                    ("best", .link(dogs[i % 600].link)), ("log", .link(logs[(i * 6) % 2500].link)),
                    ("anything", i % 3 == 0 ? .link(dogs[(i * 7) % 600].link)
                        : i % 3 == 1 ? .list([.int(Int64(i)), .link(dogs[(i * 11) % 600].link)]) : .int(Int64(i)))])
                for d in 0..<(i % 4) { try p.dynamicList("dogs").append(.link(dogs[(i + d * 150) % 600].link)) }
                try p.dynamicMap("scores").setValue(.double(Double(i)), forKey: "s\(i % 5)")
                try p.dynamicMap("pets").setValue(.link(dogs[(i * 3) % 600].link), forKey: "pet")
                _ = try p.dynamicMutableSet("favourites").insert(.link(dogs[(i * 5) % 600].link))
                _ = try p.dynamicMutableSet("tags").insert(.string("t\(i % 11)"))
                if i % 10 == 0 { try p.dynamicList("notes").appendEmbedded().setValue(.string("note \(i)"), forKey: "text") }
                // Lists of more than 480 bytes are trees of their own: two of several leaves.
                if i == 20 || i == 21 { for n in 0..<1500 { try p.dynamicList("big").append(.int(Int64(n))) } }
            }
        }
    }

    /// Every object of every class but the embedded one, as property name -> value; embedded
    /// objects as dictionaries inside their parents' values.
    private func contents(_ realm: Realm) throws -> [String: [Int64: [String: Value]]] {
        var out: [String: [Int64: [String: Value]]] = [:]
        for cls in realm.fileSchema.classes where !cls.isEmbedded {
            for object in try realm.dynamicObjects(cls.className) {
                out[cls.className, default: [:]][object.objectKey] = try values(of: object, cls, realm)
            }
        }
        return out
    }

    private func values(of object: DynamicObject, _ cls: ObjectSchema, _ realm: Realm) throws -> [String: Value] {
        var values: [String: Value] = [:]
        for p in cls.properties where !p.isBacklinks {
            switch p.collection {
            case .none: values[p.name] = try object.value(forKey: p.name)
            case .list:
                let list = try object.dynamicList(p.name)
                if let target = p.type.objectClassName, let embedded = realm.fileSchema[target], embedded.isEmbedded {
                    var elements: [Value] = []
                    for i in 0..<(try list.count) {
                        elements.append(.dictionary(try self.values(of: try XCTUnwrap(list.object(at: i)), embedded, realm)))
                    }
                    values[p.name] = .list(elements)
                } else {
                    values[p.name] = .list(try list.values())
                }
            case .set: values[p.name] = .list(try object.dynamicMutableSet(p.name).values())
            case .map: values[p.name] = .dictionary(Dictionary(uniqueKeysWithValues: try object.dynamicMap(p.name).entries().map { ($0.key, $0.value) }))
            }
        }
        return values
    }

    /// `original` without the objects `lost`, links to them taken out as deleting them would:
    /// a single link or a map's value null, a list of links and a set without them, a mixed
    /// value with null in their place.
    private func expected(_ original: [String: [Int64: [String: Value]]], lost: Set<ObjectLink>, _ schema: Schema) -> [String: [Int64: [String: Value]]] {
        func scrub(_ v: Value) -> Value {
            switch v {
            case .link(let l) where lost.contains(l): return .null
            case .list(let e): return .list(e.map(scrub))
            case .dictionary(let d): return .dictionary(d.mapValues(scrub))
            default: return v
            }
        }
        var out: [String: [Int64: [String: Value]]] = [:]
        for (name, objects) in original {
            let cls = schema[name]!
            for (key, values) in objects where !lost.contains(ObjectLink(classKey: cls.classKey!, objectKey: key)) {
                var kept = values
                for p in cls.properties where !p.isBacklinks {
                    guard let v = values[p.name] else { continue }
                    switch (p.collection, v) {
                    case (.list, .list(let e)) where p.isLink, (.set, .list(let e)):
                        kept[p.name] = .list(e.filter { if case .link(let l) = $0 { return !lost.contains(l) } else { return true } })
                    default:
                        kept[p.name] = scrub(v)
                    }
                }
                out[name, default: [:]][key] = kept
            }
        }
        return out
    }

    /// How many links of `original` point at `lost` objects, nested ones included.
    private func links(in original: [String: [Int64: [String: Value]]], to lost: Set<ObjectLink>) -> [String: Int] {
        func count(_ v: Value) -> Int {
            switch v {
            case .link(let l): return lost.contains(l) ? 1 : 0
            case .list(let e): return e.map(count).reduce(0, +)
            case .dictionary(let d): return d.values.map(count).reduce(0, +)
            default: return 0
            }
        }
        return original.mapValues { $0.values.map { $0.values.map(count).reduce(0, +) }.reduce(0, +) }
    }

    private func fileBytes(_ path: String) throws -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY)
        defer { Glibc.close(fd) }
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while case let n = read(fd, &buffer, buffer.count), n > 0 { out += buffer[0..<n] }
        return out
    }

    /// A filled file, its contents, and its schema with keys.
    private func made(_ name: String = "a.cove", key: Data? = nil) throws -> (path: String, contents: [String: [Int64: [String: Value]]], schema: Schema) {
        let path = "\(folder)/\(name)"
        let realm = try open(path, key: key)
        try fill(realm)
        let result = (path, try contents(realm), realm.fileSchema)
        realm.close()
        return result
    }

    /// Salvages `path` into `out`, checks the new file verifies and holds `wanted`, and returns
    /// the report.
    @discardableResult
    private func salvage(_ path: String, holding wanted: [String: [Int64: [String: Value]]], key: Data? = nil,
                         file: StaticString = #filePath, line: UInt = #line) throws -> SalvageReport {
        let out = "\(folder)/salvaged.cove"
        let report = try Realm.salvage(fromFile: path, toFile: out, encryptionKey: key)
        let realm = try open(out, key: key)
        defer { realm.close() }
        let verified = try realm.verify()
        XCTAssertTrue(verified.contains("backlink entries match their links"), verified, file: file, line: line)
        let got = try contents(realm)
        for (name, objects) in wanted {
            XCTAssertEqual(Set(got[name, default: [:]].keys), Set(objects.keys), "objects of \(name)", file: file, line: line)
            for (key, values) in objects where got[name]?[key] != values {
                XCTFail("\(name) \(key): \(got[name]?[key] ?? [:]) != \(values)", file: file, line: line)
                break
            }
        }
        // Primary keys, indexes and backlinks were built anew and answer.
        if let p = wanted["Person"]?.first, case .string(let name)? = p.value["name"] {
            XCTAssertEqual(try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string(name))?.objectKey, p.key, file: file, line: line)
        }
        if let log = wanted["Log"]?.first, case .int(let n)? = log.value["n"] {
            XCTAssertEqual(try realm.dynamicObject(ofType: "Log", forPrimaryKey: .int(n))?.objectKey, log.key, file: file, line: line)
        }
        XCTAssertEqual(try realm.objects("Person").filter("age == 7").count, wanted["Person"]?.values.filter { $0["age"] == .int(7) }.count ?? 0,
                       file: file, line: line)
        return report
    }

    private func report(_ report: SalvageReport, _ className: String) throws -> SalvageClassReport {
        try XCTUnwrap(report.classes.first { $0.className == className })
    }

    func testAnUndamagedFileSalvagesCompletely() throws {
        let (path, original, _) = try made()
        let bytes = try fileBytes(path)
        let report = try salvage(path, holding: original)
        XCTAssertTrue(report.isComplete, report.description)
        XCTAssertEqual(report.version, report.newestVersion)
        XCTAssertEqual(report.damagedPages, [])
        XCTAssertEqual(report.classes.map(\.className), ["Log", "Note", "Dog", "Person"])
        XCTAssertEqual(report.classes.map(\.objectsCopied), [2500, 40, 600, 400])
        XCTAssertTrue(report.classes.allSatisfy { $0.objectsLost == 0 && $0.linksDropped == 0 && $0.collectionsDamaged == 0 })
        XCTAssertTrue(report.description.hasSuffix("nothing was lost"), report.description)
        // The file salvaged was not written to.
        XCTAssertEqual(try fileBytes(path), bytes)
    }

    func testDamagedClusterPagesLoseOnlyTheirObjects() throws {
        let (path, original, schema) = try made()
        let map = try FileMap(path)
        let dogLeaf = try map.clusters("Dog")[1]
        let personLeaf = try map.clusters("Person")[2]
        map.close()
        try FileMap.damage(path, page: dogLeaf.page)
        try FileMap.damage(path, page: personLeaf.page)

        let dogKey = schema["Dog"]!.classKey!, personKey = schema["Person"]!.classKey!
        let lost = Set(dogLeaf.keys.map { ObjectLink(classKey: dogKey, objectKey: $0) } + personLeaf.keys.map { ObjectLink(classKey: personKey, objectKey: $0) })
        // The notes of the people lost go with them.
        let lostNotes = personLeaf.keys.map { original["Person"]![$0]!["notes"]! }.reduce(0) { n, v in
            if case .list(let e) = v { return n + e.count } else { return n }
        }
        let wanted = expected(original, lost: lost, schema)
        let report = try salvage(path, holding: wanted)
        XCTAssertFalse(report.isComplete)
        XCTAssertEqual(report.damagedPages, [dogLeaf.page, personLeaf.page].sorted())
        let dogs = try self.report(report, "Dog"), people = try self.report(report, "Person"), notes = try self.report(report, "Note")
        XCTAssertEqual(dogs.objectsLost, dogLeaf.keys.count)
        XCTAssertEqual(dogs.objectsCopied, 600 - dogLeaf.keys.count)
        XCTAssertEqual(dogs.damagedPages, [dogLeaf.page])
        XCTAssertEqual(people.objectsLost, personLeaf.keys.count)
        XCTAssertEqual(people.damagedPages, [personLeaf.page])
        XCTAssertEqual(notes.objectsLost, lostNotes)
        XCTAssertEqual(notes.objectsCopied, 40 - lostNotes)
        XCTAssertEqual(people.collectionsDamaged, 0)
        // Every link from a person left to a lost dog was dropped, and none other.
        let survivors = original["Person"]!.filter { !personLeaf.keys.contains($0.key) }
        XCTAssertEqual(people.linksDropped, links(in: ["Person": survivors], to: lost)["Person"])
        XCTAssertGreaterThan(people.linksDropped, 0)
        XCTAssertEqual(dogs.linksDropped, 0)
        XCTAssertTrue(report.description.contains("Dog: \(600 - dogLeaf.keys.count) objects copied, \(dogLeaf.keys.count) lost"), report.description)
    }

    /// An encrypted file: a page that fails authentication loses only its objects, and the new
    /// file is encrypted with the same key.
    func testADamagedPageOfAnEncryptedFileLosesOnlyItsObjects() throws {
        let key = Data((0..<64).map { UInt8($0 ^ 0x5c) })
        let (path, original, schema) = try made(key: key)
        let map = try FileMap(path, key: key)
        let dogLeaf = try map.clusters("Dog")[1]
        map.close()
        try FileMap.damage(path, page: dogLeaf.page, pageBytes: encryptedPageSize)
        let dogKey = schema["Dog"]!.classKey!
        let lost = Set(dogLeaf.keys.map { ObjectLink(classKey: dogKey, objectKey: $0) })
        let report = try salvage(path, holding: expected(original, lost: lost, schema), key: key)
        XCTAssertEqual(report.damagedPages, [dogLeaf.page])
        XCTAssertEqual(try self.report(report, "Dog").objectsLost, dogLeaf.keys.count)
        XCTAssertThrowsError(try open("\(folder)/salvaged.cove")) {
            XCTAssertEqual(($0 as? CoveError)?.code, .decryption)
        }
    }

    func testADamagedPageOfATablesTreeOfClustersLosesTheClustersItNames() throws {
        let (path, original, schema) = try made()
        let map = try FileMap(path)
        let index = try map.clusterIndex("Log")
        XCTAssertGreaterThanOrEqual(index.children.count, 2, "the table's tree of clusters is a branch over leaves")
        let damaged = index.children[0]
        // The clusters the damaged page of the tree names, and their objects.
        let clusters = try map.clusters("Log")
        let lostKeys = clusters.prefix(Int(damaged.count)).flatMap(\.keys)
        map.close()
        try FileMap.damage(path, page: damaged.page)

        let logKey = schema["Log"]!.classKey!
        let lost = Set(lostKeys.map { ObjectLink(classKey: logKey, objectKey: $0) })
        let report = try salvage(path, holding: expected(original, lost: lost, schema))
        let logs = try self.report(report, "Log")
        XCTAssertEqual(logs.objectsLost, lostKeys.count)
        XCTAssertEqual(logs.objectsCopied, 2500 - lostKeys.count)
        XCTAssertEqual(logs.damagedPages, [damaged.page])
        XCTAssertEqual(try self.report(report, "Person").linksDropped, links(in: original, to: lost)["Person"])
        XCTAssertEqual(report.damagedPages, [damaged.page])
    }

    func testDamagedPagesOfLargeListsLoseOnlyTheirElements() throws {
        let (path, original, schema) = try made()
        let people = original["Person"]!
        let key20 = try XCTUnwrap(people.first { $0.value["name"] == .string("p20") }?.key)
        let key21 = try XCTUnwrap(people.first { $0.value["name"] == .string("p21") }?.key)
        let map = try FileMap(path)
        // p20's list loses its root (a branch): all of it; p21's one leaf: those elements.
        let root20 = try XCTUnwrap(map.collectionRoot("Person", key20, "big"))
        let root21 = try XCTUnwrap(map.collectionRoot("Person", key21, "big"))
        let leaves21 = try map.children(of: root21)
        XCTAssertGreaterThanOrEqual(leaves21.count, 3)
        let start = Int(leaves21[0].count), count = Int(leaves21[1].count)
        map.close()
        try FileMap.damage(path, page: root20.page.pgno)
        try FileMap.damage(path, page: leaves21[1].page)

        var wanted = expected(original, lost: [], schema)
        wanted["Person"]![key20]!["big"] = .list([])
        wanted["Person"]![key21]!["big"] = .list((0..<1500).filter { $0 < start || $0 >= start + count }.map { .int(Int64($0)) })
        let report = try salvage(path, holding: wanted)
        let person = try self.report(report, "Person")
        XCTAssertEqual(person.objectsLost, 0)
        XCTAssertEqual(person.objectsCopied, 400)
        XCTAssertEqual(person.collectionsDamaged, 2)
        XCTAssertEqual(person.damagedPages, [root20.page.pgno, leaves21[1].page].sorted())
        XCTAssertFalse(report.isComplete)
    }

    func testADamagedPageOfALongValueLosesTheValueAlone() throws {
        let (path, original, schema) = try made()
        let key = try XCTUnwrap(original["Person"]?.first { $0.value["name"] == .string("p40") }?.key)
        let map = try FileMap(path)
        let page = try XCTUnwrap(map.overflowPage("Person", key, "bio"), "a bio of 5000 bytes is in overflow pages")
        map.close()
        try FileMap.damage(path, page: page)

        var wanted = expected(original, lost: [], schema)
        wanted["Person"]![key]!["bio"] = .null
        let report = try salvage(path, holding: wanted)
        let people = try self.report(report, "Person")
        XCTAssertEqual(people.objectsLost, 0)
        XCTAssertEqual(people.valuesLost, 1)
        XCTAssertEqual(people.damagedPages, [page])
        XCTAssertTrue(report.description.contains("Person: 400 objects copied, 1 values lost, damaged pages \(page)"), report.description)
    }

    func testADamagedSchemaPageSalvagesNothing() throws {
        let (path, _, _) = try made()
        let map = try FileMap(path)
        let page = try XCTUnwrap(map.schemaPage(), "the schema record is long enough for an overflow page")
        map.close()
        try FileMap.damage(path, page: page)
        let out = "\(folder)/out.cove"
        assertThrows(.corrupt, containing: "nothing can be salvaged") { _ = try Realm.salvage(fromFile: path, toFile: out) }
        assertThrows(.corrupt, containing: "page \(page)") { _ = try Realm.salvage(fromFile: path, toFile: out) }
        XCTAssertFalse(FileHelper.exists(out))
    }

    func testTheNewestVersionIsSalvagedEvenWhenAnOpenWouldDiscardIt() throws {
        let path = "\(folder)/v.cove"
        // Each realm is gone before the next opens, so that each open is the first of the file
        // (and recovers it).
        let before = try { () throws -> Set<Int64> in
            let realm = try open(path)
            defer { realm.close() }
            try realm.write { for n in 0..<100 { _ = try realm.dynamicCreate("Log", primaryKey: .int(Int64(n)), values: [("line", .string("\(n)"))]) } }
            return try Set(realm.dynamicObjects("Log").map(\.objectKey))
        }()
        let (newest, all) = try { () throws -> (UInt64, [String: [Int64: [String: Value]]]) in
            let realm = try open(path)
            defer { realm.close() }
            try realm.write { for n in 100..<2100 { _ = try realm.dynamicCreate("Log", primaryKey: .int(Int64(n)), values: [("line", .string(String(repeating: "x", count: 100)))]) } }
            return (try realm.version, try contents(realm))
        }()
        let map = try FileMap(path)
        // The last cluster: a page the newest commit wrote.
        let leaf = try XCTUnwrap(map.clusters("Log").last)
        let schema = map.schema
        map.close()
        try FileMap.damage(path, page: leaf.page)

        let logKey = schema["Log"]!.classKey!
        let report = try salvage(path, holding: expected(all, lost: Set(leaf.keys.map { ObjectLink(classKey: logKey, objectKey: $0) }), schema))
        XCTAssertEqual(report.version, newest)
        XCTAssertEqual(report.newestVersion, newest)
        XCTAssertTrue(report.versionNotes.contains { $0.contains("version \(newest) does not check out") && $0.contains("page \(leaf.page)") && $0.contains("takes version \(newest - 1)") },
                      "\(report.versionNotes)")
        XCTAssertEqual(try self.report(report, "Log").objectsCopied, 2100 - leaf.keys.count)
        // An ordinary open takes the version before: the salvage holds more.
        try { () throws in
            let realm = try open(path)
            defer { realm.close() }
            XCTAssertEqual(realm.recovery?.discardedVersion, newest)
            XCTAssertEqual(try Set(realm.dynamicObjects("Log").map(\.objectKey)), before)
        }()
    }

    func testAVersionWhoseSchemaCannotBeReadGivesWayToTheOneBefore() throws {
        let (path, original, schema) = try made()
        // One commit changes the schema: its record gets a page of its own, and the slot
        // before still names the old one.
        let changed = Self.schemaJSON.replacingOccurrences(of: "\"line\": \"string\"}", with: "\"line\": \"string\", \"extra\": \"int?\"}")
        let realm = try Realm(configuration: .init(path: path, durability: .noSync, schema: try Schema(jsonText: changed), schemaVersion: 2))
        let newest = try realm.version
        realm.close()
        let map = try FileMap(path)
        let page = try XCTUnwrap(map.schemaPage())
        XCTAssertNotNil(map.schema["Log"]?[property: "extra"])
        map.close()
        try FileMap.damage(path, page: page)

        let report = try salvage(path, holding: expected(original, lost: [], schema))
        XCTAssertEqual(report.newestVersion, newest)
        XCTAssertEqual(report.version, newest - 1)
        XCTAssertFalse(report.isComplete)
        XCTAssertTrue(report.versionNotes.contains { $0.contains("version \(newest)") && $0.contains("schema record") }, "\(report.versionNotes)")
        XCTAssertTrue(report.classes.allSatisfy(\.isComplete))
    }

    func testAFileWithCollectionAreasSalvages() throws {
        let path = "\(folder)/area.cove"
        do {
            Property.collectionsInArea = true
            defer { Property.collectionsInArea = false }
            let realm = try open(path)
            try fill(realm)
            realm.close()
        }
        let realm = try open(path)
        let original = try contents(realm), schema = realm.fileSchema
        realm.close()
        XCTAssertTrue(try salvage(path, holding: original).isComplete)
        _ = unlink("\(folder)/salvaged.cove")
        _ = unlink("\(folder)/salvaged.cove.lock")

        let map = try FileMap(path)
        let dogLeaf = try map.clusters("Dog")[2]
        map.close()
        try FileMap.damage(path, page: dogLeaf.page)
        let dogKey = schema["Dog"]!.classKey!
        let lost = Set(dogLeaf.keys.map { ObjectLink(classKey: dogKey, objectKey: $0) })
        let report = try salvage(path, holding: expected(original, lost: lost, schema))
        XCTAssertEqual(try self.report(report, "Dog").objectsLost, dogLeaf.keys.count)
        XCTAssertEqual(try self.report(report, "Person").linksDropped, links(in: original, to: lost)["Person"])
    }

    func testASalvageGoesToANewFile() throws {
        let (path, _, _) = try made()
        assertThrows(.invalidArgument, containing: "damaged file itself") { _ = try Realm.salvage(fromFile: path, toFile: path) }
        XCTAssertTrue(FileHelper.write("\(folder)/taken.cove", "x"))
        assertThrows(.invalidArgument, containing: "already exists") { _ = try Realm.salvage(fromFile: path, toFile: "\(folder)/taken.cove") }
        assertThrows(.io, containing: "missing.cove") { _ = try Realm.salvage(fromFile: "\(folder)/missing.cove", toFile: "\(folder)/new.cove") }
        XCTAssertTrue(FileHelper.write("\(folder)/text.cove", String(repeating: "not a cove file\n", count: 600)))
        assertThrows(.corrupt, containing: "not a Cove file") { _ = try Realm.salvage(fromFile: "\(folder)/text.cove", toFile: "\(folder)/new.cove") }
        XCTAssertFalse(FileHelper.exists("\(folder)/new.cove"))
    }
}

/// Where a file keeps what the tests damage, read as salvage reads it (no lock file, no write).
struct FileMap {
    let storage: Storage
    let snapshot: Snapshot
    let pages: SalvagePages
    let schema: Schema

    init(_ path: String, key: Data? = nil) throws {
        let (storage, versions) = try Storage.openForSalvage(path: path, encryptionKey: key.map { [UInt8]($0) })
        self.storage = storage
        snapshot = try storage.salvageSnapshot(versions[0])
        pages = SalvagePages(snapshot)
        schema = try SalvageCatalog(reading: pages).schema
    }

    func close() {
        snapshot.end()
        storage.close()
    }

    /// Flips sixteen bytes in the middle of page `page` of the file at `path` (pages of
    /// `pageBytes` on the disk: 4160 in an encrypted file).
    static func damage(_ path: String, page: PageNumber, pageBytes: Int = 4096) throws {
        let fd = Glibc.open(path, O_RDWR)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { Glibc.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 16)
        let offset = off_t(page) * off_t(pageBytes) + 2000
        XCTAssertEqual(pread(fd, &bytes, 16, offset), 16)
        for i in 0..<16 { bytes[i] ^= 0xA5 }
        XCTAssertEqual(pwrite(fd, bytes, 16, offset), 16)
    }

    private var catalog: BTree<SalvagePages> { BTree(store: pages, root: snapshot.catalog, keyKind: .bytes) }

    func table(_ className: String) throws -> ClusterTree<SalvagePages> {
        let bytes = try XCTUnwrap(catalog.get(CatalogKey.table(schema[className]!.classKey!)))
        let entry = try bytes.withUnsafeBytes { b in try TableEntry.decode(b) }
        return ClusterTree(store: pages, root: entry.root, columns: entry.columns.map(\.spec))
    }

    /// Each cluster page of the class's table with the keys it holds, in key order.
    func clusters(_ className: String) throws -> [(page: PageNumber, keys: [Int64])] {
        let table = try table(className)
        var out: [(page: PageNumber, keys: [Int64])] = []
        try table.index.forEach(from: nil as UInt64?) { (k, v) throws(StorageError) -> Bool in
            let leaf = try table.leaf(try ClusterRef(key: k, v))
            out.append((leaf.pgno, (0..<leaf.count).map { Int64(bitPattern: leaf.key($0)) }))
            return true
        }
        return out
    }

    /// The root of the table's tree of clusters and its children with the clusters each names.
    func clusterIndex(_ className: String) throws -> (root: PageNumber, children: [(page: PageNumber, count: UInt64)]) {
        let index = try table(className).index
        return (index.root.page.pgno, try children(of: index.root, kind: .u64))
    }

    /// The children of the branch at `root` with the entries below each.
    func children(of root: TreeRoot, kind: BTreeKeyKind = .u64) throws -> [(page: PageNumber, count: UInt64)] {
        let node = try BTree(store: pages, root: root, keyKind: kind).node(root.page, level: -1)
        return try (0..<node.count).map { i in
            let child = try node.child(i)
            return (child.ref.pgno, child.count)
        }
    }

    /// The table of `className`, and the column of its `property` with the column's kind.
    private func column(_ className: String, _ property: String) throws -> (table: ClusterTree<SalvagePages>, column: Int, kind: ColumnKind) {
        let cls = schema[className]!
        let propertyKey = cls[property: property]!.key!
        let bytes = try XCTUnwrap(catalog.get(CatalogKey.table(cls.classKey!)))
        let entry = try bytes.withUnsafeBytes { b in try TableEntry.decode(b) }
        let column = try XCTUnwrap(entry.columns.firstIndex { $0.property == propertyKey })
        return (try table(className), column, entry.columns[column].spec.kind)
    }

    /// The root of the tree of its own of collection `property` of object `key`, if it has one.
    func collectionRoot(_ className: String, _ key: Int64, _ property: String) throws -> TreeRoot? {
        let (table, column, _) = try self.column(className, property)
        return ObjectStore.treeRoot(in: try table.get(UInt64(bitPattern: key), column: column))
    }

    /// The first overflow page of the value of `property` of object `key`, when it has one.
    func overflowPage(_ className: String, _ key: Int64, _ property: String) throws -> PageNumber? {
        let (table, column, kind) = try self.column(className, property)
        let at = try XCTUnwrap(table.locate(UInt64(bitPattern: key)))
        guard case .overflow(let ref, _) = try at.leaf.cell(column, at.index, kind: kind) else { return nil }
        return ref.pgno
    }

    /// The overflow page holding the schema record, when it has one.
    func schemaPage() throws -> PageNumber? {
        let node = try catalog.node(snapshot.catalog.page, level: -1)
        guard node.level == 0 else { return nil }
        for i in 0..<node.count where Array(try node.bytesKey(i)) == CatalogKey.schema {
            if case .overflow(let ref, _) = try node.value(i) { return ref.pgno }
        }
        return nil
    }
}
