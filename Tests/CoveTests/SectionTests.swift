// Sectioned results and projections through the Swift API: sections by a key path and by a key
// function, index-path change sets (a row whose key changes moves between sections; sections
// inserted and deleted), a section observed by its key, and projections that read, write and
// report changes under their own names.
import XCTest
import Cove

final class SectionTests: CoveTestCase {
    static let schemaJSON = """
    {"Person": {"properties": {"firstName": "string", "lastName": "string", "age": "int", "friends": "Person[]"}}}
    """

    private func open() throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/s.cove", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    private func names(_ objects: [DynamicObject]) throws -> [String] {
        try objects.map { o -> String in
            guard case .string(let s) = try o["firstName"] else { return "?" }
            return s
        }
    }

    func testSectionsAreCutOncePerVersionHoweverManyAreReadOrObserved() throws {
        let realm = try open()
        var people: [DynamicObject] = []
        try realm.write {
            for (name, age) in [("Ann", 30), ("Bob", 20), ("Amy", 20), ("Cid", 30), ("Bea", 40)] {
                people.append(try realm.dynamicCreate("Person", values: [("firstName", .string(name)), ("age", .int(Int64(age)))]))
            }
        }
        nonisolated(unsafe) var keyed = 0
        let byAge = try realm.objects("Person").sectioned(sortDescriptors: [SortDescriptor(keyPath: "firstName")]) { object in
            keyed += 1
            return try object["age"]
        }
        XCTAssertEqual(try byAge.checkedCount(), 3)
        XCTAssertEqual(try byAge.checkedAllKeys(), [.int(20), .int(30), .int(40)])
        XCTAssertEqual(try byAge.section(at: 1).checkedCount(), 2)
        XCTAssertEqual(keyed, 5, "one cut serves every read at one version")

        var tokens = [try byAge.observeChanges { _ in }]
        var seen: [Value: [SectionedChangeSet]] = [:]
        for i in 0..<3 {
            let section = try byAge.section(at: i)
            tokens.append(try section.observeChanges { if case .update(let c) = $0 { seen[section.key, default: []].append(c) } })
        }
        try realm.deliver()
        keyed = 0
        try realm.write { try people[1].setValue(.int(30), forKey: "age") }
        XCTAssertEqual(keyed, 0, "nothing is cut until read")
        XCTAssertEqual(try byAge.section(at: 1).checkedCount(), 3, "a write in progress shows at once")
        XCTAssertEqual(keyed, 5)
        try realm.deliver()
        XCTAssertEqual(keyed, 5, "the cut read inside the write serves the commit's delivery")
        XCTAssertEqual(seen[.int(20)]?.last?.deletions, [IndexPath(row: 1, section: 0)])
        XCTAssertEqual(seen[.int(30)]?.last?.insertions, [IndexPath(row: 1, section: 0)])
        XCTAssertNil(seen[.int(40)])
        keyed = 0
        try realm.write { try people[4].setValue(.int(20), forKey: "age") }
        try realm.deliver()
        XCTAssertEqual(keyed, 5, "one cut for the commit's delivery to four observers")
        XCTAssertEqual(seen[.int(40)]?.last?.deletions, [IndexPath(row: 0, section: 0)])
        XCTAssertEqual(seen[.int(20)]?.last?.insertions, [IndexPath(row: 1, section: 0)])
        for t in tokens { t.invalidate() }
    }

    func testSectionsAndTheirChanges() throws {
        let realm = try open()
        var people: [String: DynamicObject] = [:]
        try realm.write {
            for (name, age) in [("Ann", 30), ("Bob", 20), ("Amy", 20), ("Cid", 30), ("Bea", 40)] {
                people[name] = try realm.dynamicCreate("Person", values: [("firstName", .string(name)), ("age", .int(Int64(age)))])
            }
        }
        let results = try realm.objects("Person")
        let byAge = try results.sectioned(by: "age")
        XCTAssertEqual(try byAge.checkedAllKeys(), [.int(20), .int(30), .int(40)])
        XCTAssertEqual(try names(byAge.sections()[0].elements), ["Bob", "Amy"])
        let byLetter = try results.sectioned(sortDescriptors: [SortDescriptor(keyPath: "firstName")], SectionKey.firstLetter("firstName"))
        XCTAssertEqual(try byLetter.checkedAllKeys(), [.string("A"), .string("B"), .string("C")])
        XCTAssertEqual(try names(byLetter.section(at: 0).elements()), ["Amy", "Ann"])
        let descending = try results.sectioned(by: "age", ascending: false)
        XCTAssertEqual(try descending.checkedAllKeys(), [.int(40), .int(30), .int(20)])

        var changes: [SectionedChangeSet] = []
        let token = try byAge.observeChanges(keyPaths: ["firstName"]) { if case .update(let c) = $0 { changes.append(c) } }
        var sectionChanges: [SectionedChangeSet] = []
        let thirty = try byAge.section(at: 1)
        XCTAssertEqual(thirty.key, .int(30))
        let sectionToken = try thirty.observeChanges { if case .update(let c) = $0 { sectionChanges.append(c) } }
        try realm.deliver()
        // Bob moves from 20 to 30 (a change of the section key always notifies); Bea's section
        // goes away; a new section 50 comes; Ann is modified in place.
        try realm.write {
            try people["Bob"]?.setValue(.int(30), forKey: "age")
            try realm.delete(try XCTUnwrap(people["Bea"]))
            try realm.dynamicCreate("Person", values: [("firstName", .string("Dan")), ("age", .int(50))])
            try people["Ann"]?.setValue(.string("Ann"), forKey: "firstName")
        }
        try realm.deliver()
        let c = try XCTUnwrap(changes.last)
        XCTAssertEqual(c.sectionsToDelete, [2])
        XCTAssertEqual(c.sectionsToInsert, [2])
        XCTAssertEqual(c.deletions, [IndexPath(row: 0, section: 0)])
        XCTAssertEqual(c.insertions, [IndexPath(row: 1, section: 1)])
        XCTAssertEqual(c.modifications, [IndexPath(row: 0, section: 1)])
        // The section of 30 saw Bob arrive and Ann change.
        let s = try XCTUnwrap(sectionChanges.last)
        XCTAssertEqual(s.insertions, [IndexPath(row: 1, section: 0)])
        XCTAssertEqual(s.modifications, [IndexPath(row: 0, section: 0)])
        // The section disappears and comes back.
        try realm.write {
            try people["Ann"]?.setValue(.int(31), forKey: "age")
            try people["Bob"]?.setValue(.int(31), forKey: "age")
            try people["Cid"]?.setValue(.int(31), forKey: "age")
        }
        try realm.deliver()
        // For its observer the section stays: its three rows are deleted, and come back as rows.
        XCTAssertEqual(sectionChanges.last?.deletions, (0..<3).map { IndexPath(row: $0, section: 0) })
        XCTAssertEqual(sectionChanges.last?.sectionsToDelete, [])
        try realm.write { try people["Cid"]?.setValue(.int(30), forKey: "age") }
        try realm.deliver()
        XCTAssertEqual(sectionChanges.last?.insertions, [IndexPath(row: 0, section: 0)])
        XCTAssertEqual(sectionChanges.last?.sectionsToInsert, [])
        let frozen = try byAge.checkedFreeze()
        XCTAssertTrue(frozen.isFrozen)
        frozen.sourceRealm.close()
        withExtendedLifetime([token, sectionToken]) {}
    }

    /// Applies a sectioned change set to the old sections as a table view would: rows deleted
    /// (old paths, from the end), sections deleted, sections inserted (whole, from `new`), rows
    /// inserted (new paths), rows reloaded.
    private func apply(_ c: SectionedChangeSet, to old: [[Int64]], new: [[Int64]]) -> [[Int64]] {
        var sections = old
        for p in c.deletions.sorted(by: >) { sections[p.section].remove(at: p.row) }
        for i in c.sectionsToDelete.sorted(by: >) { sections.remove(at: i) }
        for j in c.sectionsToInsert.sorted() { sections.insert(new[j], at: j) }
        for p in c.insertions.sorted() { sections[p.section].insert(new[p.section][p.row], at: p.row) }
        for p in c.modifications { sections[p.section][p.row] = new[p.section][p.row] }
        return sections
    }

    func testRandomizedSectionChangesReproduceTheNewSections() throws {
        let realm = try open()
        let writer = try open()
        defer { writer.close() }
        var state: UInt64 = 99
        func random(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        try realm.write {
            for i in 0..<30 { try realm.dynamicCreate("Person", values: [("firstName", .string("p\(i)")), ("age", .int(Int64(random(6))))]) }
        }
        let sectioned = try realm.objects("Person").filter("age < 5").sectioned(by: "age")
        func keys() throws -> [[Int64]] {
            try sectioned.sections().map { $0.elements.map(\.objectKey) }
        }
        var current = try keys()
        var received: [SectionedChangeSet] = []
        let token = try sectioned.observeChanges { if case .update(let c) = $0 { received.append(c) } }
        try realm.deliver()
        try writer.refresh()
        for round in 0..<80 {
            try writer.write {
                let people = try writer.objects("Person").elements()
                for _ in 0..<(1 + random(4)) {
                    switch random(4) {
                    case 0: try writer.dynamicCreate("Person", values: [("firstName", .string("n\(round)")), ("age", .int(Int64(random(6))))])
                    case 1 where !people.isEmpty:
                        let p = people[random(people.count)]
                        if !p.isInvalidated { try writer.delete(p) }
                    default:
                        guard !people.isEmpty else { continue }
                        let p = people[random(people.count)]
                        if !p.isInvalidated { try p.setValue(.int(Int64(random(6))), forKey: "age") }
                    }
                }
            }
            received.removeAll()
            try realm.refresh()
            let new = try keys()
            XCTAssertLessThanOrEqual(received.count, 1, "round \(round)")
            if let c = received.first {
                XCTAssertEqual(apply(c, to: current, new: new), new, "round \(round)")
            } else {
                XCTAssertEqual(current, new, "sections changed without a change set (round \(round))")
            }
            current = new
        }
        withExtendedLifetime(token) {}
    }

    /// Random writes to a projected object and its friends: each delivery reports exactly the
    /// projected names whose paths were written (a write of an equal value counts, as for
    /// objects), none missed and none extra.
    func testRandomizedProjectionChangesAreExact() throws {
        let realm = try open()
        let writer = try open()
        defer { writer.close() }
        var state: UInt64 = 7
        func random(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let ann = try realm.write { () -> DynamicObject in
            let ann = try realm.dynamicCreate("Person", values: [("firstName", .string("Ann")), ("lastName", .string("A"))])
            for i in 0..<4 {
                let f = try realm.dynamicCreate("Person", values: [("firstName", .string("f\(i)")), ("lastName", .string("l\(i)"))])
                if i < 2 { try ann.dynamicList("friends").append(.link(f.link)) }
            }
            return ann
        }
        let view = try DynamicProjection(root: ann, fields: [.init("name", "firstName"), .init("friendNames", "friends.firstName"),
                                                      .init("last", "lastName"), .init("friendLasts", "friends.lastName")])
        var reported: [Set<String>] = []
        let token = try view.observeChanges { if case .change(_, let p) = $0 { reported.append(Set(p.map(\.name))) } }
        try realm.deliver()
        try writer.refresh()
        for round in 0..<60 {
            var expected = Set<String>()
            try writer.write {
                guard let root = try writer.dynamicObject(ofType: "Person", objectKey: ann.objectKey) else { return }
                let friends = try root.dynamicList("friends")
                let others = try writer.objects("Person").elements().filter { $0.objectKey != ann.objectKey }
                for _ in 0..<(1 + random(3)) {
                    switch random(6) {
                    case 0:
                        try root.setValue(.string(random(2) == 0 ? "Ann" : "Anna"), forKey: "firstName")
                        expected.insert("name")
                    case 1:
                        try root.setValue(.string("L\(random(3))"), forKey: "lastName")
                        expected.insert("last")
                    case 2:
                        let f = others[random(others.count)]
                        try f.setValue(.string("f\(random(5))"), forKey: "firstName")
                        let current = try friends.values().compactMap { v -> Int64? in if case .link(let l) = v { return l.objectKey } else { return nil } }
                        if current.contains(f.objectKey) { expected.insert("friendNames") }
                    case 3:
                        let f = others[random(others.count)]
                        try f.setValue(.string("x\(random(5))"), forKey: "lastName")
                        let current = try friends.values().compactMap { v -> Int64? in if case .link(let l) = v { return l.objectKey } else { return nil } }
                        if current.contains(f.objectKey) { expected.insert("friendLasts") }
                    case 4:
                        try friends.append(.link(others[random(others.count)].link))
                        expected.formUnion(["friendNames", "friendLasts"])
                    default:
                        if try friends.count > 0 {
                            try friends.remove(at: 0)
                            expected.formUnion(["friendNames", "friendLasts"])
                        }
                    }
                }
            }
            reported.removeAll()
            try realm.refresh()
            XCTAssertEqual(reported.first ?? [], expected, "round \(round)")
            XCTAssertLessThanOrEqual(reported.count, 1)
        }
        withExtendedLifetime(token) {}
    }

    /// A row that moves in the sorted results but keeps its place in its section (sections by
    /// a key function) is reported modified there.
    func testAMovedRowThatKeepsItsPlaceInItsSectionIsModified() throws {
        let realm = try open()
        let (c, _) = try realm.write { () -> (DynamicObject, DynamicObject) in
            _ = try realm.dynamicCreate("Person", values: [("firstName", .string("a")), ("age", .int(0))])
            let b = try realm.dynamicCreate("Person", values: [("firstName", .string("b")), ("age", .int(1))])
            let c = try realm.dynamicCreate("Person", values: [("firstName", .string("c")), ("age", .int(0))])
            return (c, b)
        }
        let sections = try realm.objects("Person").sectioned(sortDescriptors: [SortDescriptor(keyPath: "firstName")]) { o in try o["age"] }
        var changes: [SectionedChangeSet] = []
        let token = try sections.observeChanges { if case .update(let x) = $0 { changes.append(x) } }
        try realm.deliver()
        try realm.write { try c.setValue(.string("a0"), forKey: "firstName") }
        try realm.deliver()
        XCTAssertEqual(changes.last?.modifications, [IndexPath(row: 1, section: 0)])
        XCTAssertEqual(changes.last?.insertions, [])
        withExtendedLifetime(token) {}
    }

    func testARowMovedOnlyByAnotherRowsChangeIsNotModified() throws {
        let realm = try open()
        let b = try realm.write { () -> DynamicObject in
            _ = try realm.dynamicCreate("Person", values: [("firstName", .string("a")), ("age", .int(0))])
            let b = try realm.dynamicCreate("Person", values: [("firstName", .string("b")), ("age", .int(1))])
            _ = try realm.dynamicCreate("Person", values: [("firstName", .string("c")), ("age", .int(0))])
            return b
        }
        let sections = try realm.objects("Person").sectioned(sortDescriptors: [SortDescriptor(keyPath: "firstName")]) { o in try o["age"] }
        var changes: [SectionedChangeSet] = []
        let token = try sections.observeChanges { if case .update(let x) = $0 { changes.append(x) } }
        try realm.deliver()
        // a c d(b): the results keep a and b in place and move c, which did not change.
        try realm.write { try b.setValue(.string("d"), forKey: "firstName") }
        try realm.deliver()
        XCTAssertEqual(changes.count, 1)
        XCTAssertEqual(changes.last?.modifications, [IndexPath(row: 0, section: 1)])
        XCTAssertEqual(changes.last?.insertions, [])
        XCTAssertEqual(changes.last?.deletions, [])
        withExtendedLifetime(token) {}
    }

    func testProjections() throws {
        let realm = try open()
        let (ann, bob) = try realm.write { () -> (DynamicObject, DynamicObject) in
            let bob = try realm.dynamicCreate("Person", values: [("firstName", .string("Bob")), ("lastName", .string("Ray"))])
            let ann = try realm.dynamicCreate("Person", values: [("firstName", .string("Ann")), ("lastName", .string("Lee"))])
            try ann.dynamicList("friends").append(.link(bob.link))
            return (ann, bob)
        }
        let view = try DynamicProjection(root: ann, fields: [
            .init("name", "firstName"), .init("friendNames", "friends.firstName"),
            .init("lastCaps", "lastName", transform: { v in if case .string(let s) = v { return .string(s.uppercased()) } else { return v } }),
        ])
        XCTAssertEqual(try view.value("name"), .string("Ann"))
        XCTAssertEqual(try view.values("friendNames"), [.string("Bob")])
        XCTAssertEqual(try view.value("lastCaps"), .string("LEE"))
        try realm.write { try view.setValue(.string("Anna"), forName: "name") }
        XCTAssertEqual(try ann["firstName"], .string("Anna"))
        assertThrows(.invalidArgument, containing: "only a plain, untransformed property") {
            try realm.write { try view.setValue(.string("x"), forName: "lastCaps") }
        }
        assertThrows(.wrongType, containing: "is a collection") { _ = try view.value("friendNames") }
        assertThrows(.invalidArgument, containing: "no property 'nope'") { _ = try DynamicProjection(root: ann, fields: [.init("x", "nope")]) }

        var changes: [[PropertyChange]] = []
        var deleted = 0
        let token = try view.observeChanges { change in
            switch change {
            case .change(_, let p): changes.append(p)
            case .deleted: deleted += 1
            case .error: break
            }
        }
        try realm.write { try bob.setValue(.string("Rob"), forKey: "firstName") }
        try realm.deliver()
        XCTAssertEqual(changes.last?.map(\.name), ["friendNames"], "a change of friends[i].firstName notifies friendNames")
        try realm.write { try bob.setValue(.string("Roy"), forKey: "lastName") }
        try realm.deliver()
        XCTAssertEqual(changes.count, 1, "a change of friends[i].lastName does not")
        try realm.write { try ann.setValue(.string("Kim"), forKey: "lastName") }
        try realm.deliver()
        XCTAssertEqual(changes.last?.map(\.name), ["lastCaps"])
        XCTAssertEqual(changes.last?.first?.storedOldValue, .string("LEE"))
        XCTAssertEqual(changes.last?.first?.storedNewValue, .string("KIM"))
        try realm.write { try realm.delete(ann) }
        try realm.deliver()
        XCTAssertEqual(deleted, 1)
        withExtendedLifetime(token) {}
    }
}
