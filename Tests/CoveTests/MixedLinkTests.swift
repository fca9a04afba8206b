// Links held in mixed values (a single mixed property, or a list, set or map of mixed): only to
// objects that exist and are not embedded, and when the target goes (deleted, or its class
// removed by a migration) every mixed value that held it becomes null, a set losing the element.
import XCTest
@testable import Cove
@testable import CoveCore

final class MixedLinkTests: CoveTestCase {
    static let schemaJSON = """
    {"Box": {"properties": {"label": "string", "any": "mixed", "many": "mixed[]", "bag": "mixed<>", "named": "mixed{}"}},
     "Dog": {"properties": {"name": "string", "home": "Address?"}},
     "Address": {"embedded": true, "properties": {"city": "string"}}}
    """

    private func open(_ json: String = schemaJSON, version: UInt64 = 1, _ block: Migration.Block? = nil) throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/x.cove", durability: .noSync, schema: try Schema(jsonText: json),
                                       schemaVersion: version, migrationBlock: block))
    }

    private func dog(_ realm: Realm, _ name: String) throws -> DynamicObject {
        try realm.dynamicCreate("Dog", values: [("name", .string(name))])
    }

    /// The names of the mixed properties of an object that the deliveries report written.
    private final class Written {
        var names: [String] = []
        var token: NotificationToken?
    }

    private func watch(_ box: DynamicObject) throws -> Written {
        let written = Written()
        written.token = try box.observeChanges(keyPaths: ["any", "many", "bag", "named"]) { [written] change in
            if case .change(_, let properties) = change { written.names += properties.map(\.name) }
        }
        return written
    }

    func testDeletingTheTargetClearsEveryMixedValueThatHeldIt() throws {
        let realm = try open()
        var box: DynamicObject!, rex: DynamicObject!, fido: DynamicObject!
        try realm.write {
            rex = try dog(realm, "Rex")
            fido = try dog(realm, "Fido")
            // Made with the link (the create sets it once the object exists), then filled.
            box = try realm.dynamicCreate("Box", values: [("label", .string("b")), ("any", .link(rex.link))])
            for v in [rex, fido, rex] { try box.dynamicList("many").append(.link(v!.link)) }
            _ = try box.dynamicMutableSet("bag").insert(.link(rex.link))
            _ = try box.dynamicMutableSet("bag").insert(.int(1))
            try box.dynamicMap("named").setValue(.link(rex.link), forKey: "r")
            try box.dynamicMap("named").setValue(.link(fido.link), forKey: "f")
        }
        let written = try watch(box)
        defer { written.token?.invalidate() }
        try realm.write { try realm.delete(rex) }
        try realm.deliver()
        XCTAssertEqual(Set(written.names), ["any", "many", "bag", "named"], "each clearing is a write the observers see")
        XCTAssertEqual(try box["any"], .null)
        XCTAssertEqual(try box.dynamicList("many").values(), [.null, .link(fido.link), .null])
        XCTAssertEqual(try box.dynamicMutableSet("bag").values(), [.int(1)])
        XCTAssertEqual(try box.dynamicMap("named").value(forKey: "r"), .null)
        XCTAssertEqual(try box.dynamicMap("named").value(forKey: "f"), .link(fido.link))
        // The others still point at Fido, and deleting him clears them too.
        try realm.write { try realm.delete(fido) }
        XCTAssertEqual(try box.dynamicList("many").values(), [.null, .null, .null])
        XCTAssertEqual(try box.dynamicMap("named").value(forKey: "f"), .null)
        _ = try realm.verify()
    }

    /// A value overwritten, an element erased or replaced, a collection cleared: each lets go of
    /// its target, so that deleting the target later changes nothing that no longer holds it.
    func testValuesThatLetGoAreNotTouchedLater() throws {
        let realm = try open()
        var box: DynamicObject!, rex: DynamicObject!, fido: DynamicObject!
        try realm.write {
            rex = try dog(realm, "Rex")
            fido = try dog(realm, "Fido")
            box = try realm.dynamicCreate("Box", values: [("label", .string("b"))])
            try box.setValue(.link(rex.link), forKey: "any")
            try box.setValue(.link(fido.link), forKey: "any")
            let many = try box.dynamicList("many")
            try many.append(.link(rex.link))
            try many.append(.link(rex.link))
            try many.remove(at: 0)
            try many.replace(index: 0, with: .string("was Rex"))
            try many.append(.link(rex.link))
            try many.move(from: 1, to: 0)
            try box.dynamicMap("named").setValue(.link(rex.link), forKey: "r")
            try box.dynamicMap("named").setValue(.int(5), forKey: "r")
            _ = try box.dynamicMutableSet("bag").insert(.link(rex.link))
            try box.dynamicMutableSet("bag").removeAll()
        }
        let written = try watch(box)
        defer { written.token?.invalidate() }
        try realm.write { try realm.delete(rex) }
        try realm.deliver()
        XCTAssertEqual(written.names, ["many"], "only the list still held Rex (moved to the front)")
        XCTAssertEqual(try box["any"], .link(fido.link))
        XCTAssertEqual(try box.dynamicList("many").values(), [.null, .string("was Rex")])
        XCTAssertEqual(try box.dynamicMap("named").value(forKey: "r"), .int(5))
        XCTAssertEqual(try box.dynamicMutableSet("bag").count, 0)
    }

    /// Deleting the object that holds the links drops its entries: no mixed property's backlink
    /// tree names Rex or the box any more, and deleting Rex afterwards finds nothing to clear.
    func testDeletingTheHolderDropsItsEntries() throws {
        let realm = try open()
        try realm.write {
            let rex = try dog(realm, "Rex")
            let box = try realm.dynamicCreate("Box", values: [("label", .string("b")), ("any", .link(rex.link))])
            try box.dynamicList("many").append(.link(rex.link))
            _ = try box.dynamicMutableSet("bag").insert(.link(rex.link))
            try box.dynamicMap("named").setValue(.link(rex.link), forKey: "r")
            try box.setValue(.link(box.link), forKey: "any")      // itself, too
            let store = try realm.objectStore()
            let boxClass = try store.objectSchema("Box")
            let mixed = boxClass.properties.filter { $0.type == .mixed }
            XCTAssertEqual(mixed.map(\.name).sorted(), ["any", "bag", "many", "named"])
            func entries() throws -> [Int64] {
                try mixed.flatMap { p in
                    try store.linkingSources(of: rex.link, from: boxClass, via: p) + store.linkingSources(of: box.link, from: boxClass, via: p)
                }
            }
            XCTAssertEqual(try entries().count, 4, "the list, the set, the map hold Rex; 'any' the box")
            try realm.delete(box)
            XCTAssertEqual(try entries(), [], "the holder's entries went with it")
            try realm.delete(rex)
        }
        XCTAssertEqual(try realm.objectCount("Dog"), 0)
    }

    func testLinksAMixedValueCannotHold() throws {
        let realm = try open()
        try realm.write {
            let rex = try dog(realm, "Rex")
            let home = try rex.createEmbeddedObject(forProperty: "home")
            let box = try realm.dynamicCreate("Box", values: [("label", .string("b"))])
            let gone = try dog(realm, "Gone")
            let goneLink = gone.link
            try realm.delete(gone)
            let stranger = Value.link(ObjectLink(classKey: 999, objectKey: 0))
            for bad in [Value.link(home.link), .link(goneLink), stranger] {
                let expected = bad == stranger ? "not in the schema" : bad == .link(home.link) ? "embedded Address" : "does not exist"
                assertThrows(.invalidArgument, containing: expected) { try box.setValue(bad, forKey: "any") }
                assertThrows(.invalidArgument, containing: expected) { try box.dynamicList("many").append(bad) }
                assertThrows(.invalidArgument, containing: expected) { _ = try box.dynamicMutableSet("bag").insert(bad) }
                assertThrows(.invalidArgument, containing: expected) { try box.dynamicMap("named").setValue(bad, forKey: "k") }
                assertThrows(.invalidArgument, containing: expected) {
                    _ = try realm.dynamicCreate("Box", values: [("label", .string("c")), ("any", bad)])
                }
            }
            XCTAssertEqual(try realm.objectCount("Box"), 1)
            XCTAssertEqual(try box["any"], .null)
            XCTAssertEqual(try box.dynamicList("many").count, 0)
        }
    }

    /// Mixed links survive a reopen, a rename keeps them tracked, and removing the target's class
    /// clears them.
    func testMigrationsKeepThemRight() throws {
        do {
            let realm = try open()
            try realm.write {
                let rex = try dog(realm, "Rex")
                let box = try realm.dynamicCreate("Box", values: [("label", .string("b")), ("any", .link(rex.link))])
                try box.dynamicList("many").append(.link(rex.link))
                let other = try realm.dynamicCreate("Box", values: [("label", .string("o"))])
                try other.setValue(.link(box.link), forKey: "any")
            }
            realm.close()
        }
        let renamed = Self.schemaJSON.replacingOccurrences(of: "\"any\": \"mixed\"", with: "\"thing\": \"mixed\"")
        do {
            let realm = try open(renamed, version: 2) { migration, _ in
                try migration.renameProperty(onType: "Box", from: "any", to: "thing")
            }
            let box = try XCTUnwrap(realm.dynamicObjects("Box").first { (try? $0["label"]) == .string("b") })
            guard case .link(let link) = try box["thing"] else { return XCTFail("the renamed value is not a link") }
            let rex = try XCTUnwrap(try realm.object(for: link))
            XCTAssertEqual(try rex["name"], .string("Rex"))
            try realm.write { try realm.delete(rex) }
            XCTAssertEqual(try box["thing"], .null)
            XCTAssertEqual(try box.dynamicList("many").values(), [.null])
            try realm.write {
                let max = try dog(realm, "Max")
                try box.setValue(.link(max.link), forKey: "thing")
                try box.dynamicList("many").append(.link(max.link))
            }
            realm.close()
        }
        let withoutDogs = """
        {"Box": {"properties": {"label": "string", "thing": "mixed", "many": "mixed[]", "bag": "mixed<>", "named": "mixed{}"}}}
        """
        let realm = try open(withoutDogs, version: 3) { migration, _ in
            // Left out of the schema, the classes would stay in the file: their data goes.
            try migration.deleteData(forType: "Dog")
            try migration.deleteData(forType: "Address")
        }
        let boxes = try realm.dynamicObjects("Box")
        let box = try XCTUnwrap(boxes.first { (try? $0["label"]) == .string("b") })
        let other = try XCTUnwrap(boxes.first { (try? $0["label"]) == .string("o") })
        XCTAssertEqual(try box["thing"], .null)
        XCTAssertEqual(try box.dynamicList("many").values(), [.null, .null])
        XCTAssertEqual(try other["thing"], .link(box.link), "a link to a class that stays is kept")
        _ = try realm.verify()      // throws on a damaged file or index
    }
}
