// A randomized differential test of the incremental change sets of sorted results (several
// keys, DISTINCT before and after the sort, OFFSET and LIMIT, keys through one and two to-one
// links, key paths; integers, doubles with both zeros and the infinities, strings alike in their
// first bytes, dates) and of sectioned results: after every delivery, each change set applied to
// the rows of the previous delivery must give the rows a fresh query gives now, the observed
// results must read those rows, and the modifications must name exactly the rows that stayed
// and whose observed properties (or linked objects) were written. Commits come from the
// observing realm (one per delivery) and from another realm (several merged into one).
import Synchronization
import XCTest
@testable import Cove
@testable import CoveCore

final class IncrementalSortDifferentialTests: CoveTestCase {
    static let schema = """
    {"Item": {"properties": {"name": "string", "score": "int", "other": "int", "owner": "Owner?", "tags": "Tag[]",
                             "rank": "double", "label": "string", "stamp": "date"}},
     "Owner": {"properties": {"name": "string", "boss": "Owner?"}},
     "Tag": {"properties": {"label": "string"}}}
    """
    static let names = ["a", "b", "c", "d", "e"]
    /// Doubles with both zeros and the infinities; strings alike in their first seven bytes,
    /// or shorter.
    static let ranks: [Double] = [-.infinity, -1.5, -0.0, 0.0, 2.25, 1e300, .infinity]
    static let labels = ["", "abcdefg", "abcdefgh1", "abcdefgh2", "abcdefgi", "ab", "ab\u{0}"]

    static func someValue(_ property: String, _ rng: inout SeededRandom) -> Value {
        switch property {
        case "rank": return .double(ranks[rng.below(ranks.count)])
        case "label": return .string(labels[rng.below(labels.count)])
        default: return .timestamp(Timestamp(seconds: Int64(rng.below(4)) - 2, nanoseconds: Int32(rng.below(2))))
        }
    }

    /// What the test knows of the writes since the last delivery: object keys and the
    /// properties written (a write of an equal value, and a link set to null by a deletion,
    /// included).
    struct Written {
        var items: [Int64: Set<String>] = [:]
        var owners: [Int64: Set<String>] = [:]
        var tags: Set<Int64> = []
    }

    /// One observed query: how to make it, its key paths, what it last showed and its calls.
    final class Observed {
        let name: String
        let make: (Results<DynamicObject>) -> Results<DynamicObject>
        let keyPaths: [String]?
        var results: Results<DynamicObject>?
        var old: [Int64] = []
        var calls: [CollectionChange] = []

        init(_ name: String, keyPaths: [String]? = nil, _ make: @escaping (Results<DynamicObject>) -> Results<DynamicObject>) {
            self.name = name
            self.keyPaths = keyPaths
            self.make = make
        }
    }

    static func queries() -> [Observed] {
        [
            Observed("by score") { $0.sorted(byKeyPath: "score") },
            Observed("by name, score descending") {
                $0.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "score", ascending: false)])
            },
            Observed("filtered, SORT in the query") { $0.filter("score > 2 SORT(name DESC, score ASC)") },
            Observed("sorted twice") { $0.sorted(byKeyPath: "other").sorted(byKeyPath: "name", ascending: false) },
            Observed("by score, distinct by name") { $0.sorted(byKeyPath: "score").distinct(by: ["name"]) },
            Observed("distinct by name, then by score descending") {
                $0.distinct(by: ["name"]).sorted(byKeyPath: "score", ascending: false)
            },
            Observed("distinct by name and other, by name") {
                $0.filter("score != 3").sorted(byKeyPath: "other").distinct(by: ["name", "other"]).sorted(byKeyPath: "name")
            },
            Observed("DISTINCT in the query") { $0.filter("TRUEPREDICATE SORT(score ASC) DISTINCT(name)") },
            Observed("distinct by score alone") { $0.distinct(by: ["score"]) },
            Observed("top 5") { $0.filter("score >= 1 SORT(score DESC, name ASC) LIMIT(5)") },
            Observed("offset 3, limit 6") { $0.filter("TRUEPREDICATE SORT(name ASC) OFFSET(3) LIMIT(6)") },
            Observed("offset 4") { $0.filter("other != 1 SORT(score ASC) OFFSET(4)") },
            Observed("limit 4 in key order") { $0.filter("TRUEPREDICATE LIMIT(4)") },
            Observed("distinct, limited") { $0.filter("TRUEPREDICATE SORT(owner.name DESC) DISTINCT(score) LIMIT(4)") },
            Observed("by owner.name, score") {
                $0.sorted(by: [SortDescriptor(keyPath: "owner.name"), SortDescriptor(keyPath: "score")])
            },
            Observed("by owner.boss.name descending, name") {
                $0.sorted(by: [SortDescriptor(keyPath: "owner.boss.name", ascending: false), SortDescriptor(keyPath: "name")])
            },
            Observed("by owner.name, limited") { $0.filter("TRUEPREDICATE SORT(owner.name ASC, score DESC) LIMIT(7)") },
            Observed("by name, key paths [score]", keyPaths: ["score"]) { $0.sorted(byKeyPath: "name") },
            Observed("by score, key paths [owner.name]", keyPaths: ["owner.name"]) { $0.sorted(byKeyPath: "score") },
            Observed("by owner.name, key paths []", keyPaths: []) { $0.sorted(byKeyPath: "owner.name") },
            Observed("by rank descending, label") {
                $0.sorted(by: [SortDescriptor(keyPath: "rank", ascending: false), SortDescriptor(keyPath: "label")])
            },
            Observed("by label") { $0.sorted(byKeyPath: "label") },
            Observed("by stamp, score") { $0.sorted(by: [SortDescriptor(keyPath: "stamp"), SortDescriptor(keyPath: "score")]) },
            Observed("by stamp, limited") { $0.filter("TRUEPREDICATE SORT(stamp DESC) LIMIT(6)") },
        ]
    }

    func testIncrementalChangeSetsMatchAFullEvaluation() throws {
        let sortedBefore = CollectionDiffer.incrementallySorted.load(ordering: .relaxed)
        let sectionsBefore = SectionsStep.advancedCount.load(ordering: .relaxed)
        for seed in (1...8).map({ UInt64($0) &* 0x2545_F491_4F6C_DD1D }) {
            try run(seed: seed, rounds: 24)
        }
        XCTAssertGreaterThan(CollectionDiffer.incrementallySorted.load(ordering: .relaxed) - sortedBefore, 2_000,
                             "the sorted results took the incremental path")
        XCTAssertGreaterThan(SectionsStep.advancedCount.load(ordering: .relaxed) - sectionsBefore, 300,
                             "the sections were advanced, not cut again")
    }

    private func run(seed: UInt64, rounds: Int) throws {
        let config = Realm.Configuration(path: "\(folder)/i\(seed).cove", durability: .noSync, schema: try Schema(jsonText: Self.schema),
                                         schemaVersion: 1)
        let realm = try Realm(configuration: config)
        let other = try Realm(configuration: config)
        var rng = SeededRandom(seed: seed)
        try realm.write {
            var owners: [DynamicObject] = []
            for i in 0..<6 {
                let boss: Value = owners.isEmpty || rng.below(3) == 0 ? .null : .link(owners[rng.below(owners.count)].link)
                owners.append(try realm.dynamicCreate("Owner", values: [("name", .string(Self.names[i % 5])), ("boss", boss)]))
            }
            let tags = try (0..<3).map { i in try realm.dynamicCreate("Tag", values: [("label", .string("t\(i)"))]) }
            for _ in 0..<40 { _ = try createItem(realm, &rng, owners, tags) }
        }
        let observed = Self.queries()
        var tokens: [NotificationToken] = []
        defer { for t in tokens { t.invalidate() } }
        for o in observed {
            let results = o.make(try realm.objects("Item"))
            o.results = results
            tokens.append(try results.observeChanges(keyPaths: o.keyPaths) { o.calls.append($0) })
        }
        let sections = SectionsObserved(try realm.objects("Item"))
        tokens += try sections.observe()
        try realm.deliver()
        for o in observed {
            o.old = try XCTUnwrap(o.results).objectKeys()
            o.calls.removeAll()
        }
        try sections.start()

        for round in 0..<rounds {
            let context = "seed \(seed) round \(round)"
            var written = Written()
            let byOther = rng.below(2) == 0
            for _ in 0..<(byOther ? 1 + rng.below(3) : 1) {
                try write(byOther ? other : realm, &rng, &written)
            }
            try realm.deliver()
            for o in observed { try check(o, realm, written, context) }
            try sections.check(realm, written, context)
        }
    }

    @discardableResult
    private func createItem(_ realm: Realm, _ rng: inout SeededRandom, _ owners: [DynamicObject], _ tags: [DynamicObject]) throws -> DynamicObject {
        let pick = owners.isEmpty || rng.below(5) == 0 ? nil : owners[rng.below(owners.count)]
        let owner: Value = pick.map { $0.isInvalidated ? .null : .link($0.link) } ?? .null
        let item = try realm.dynamicCreate("Item", values: [
            ("name", .string(Self.names[rng.below(5)])), ("score", .int(Int64(rng.below(8)))),
            ("other", .int(Int64(rng.below(3)))), ("owner", owner), ("rank", Self.someValue("rank", &rng)),
            ("label", Self.someValue("label", &rng)), ("stamp", Self.someValue("stamp", &rng))])
        if rng.below(2) == 0 { try item.dynamicList("tags").append(.link(tags[rng.below(tags.count)].link)) }
        return item
    }

    /// One commit of one to five random writes, noted in `written`.
    private func write(_ realm: Realm, _ rng: inout SeededRandom, _ written: inout Written) throws {
        try realm.write {
            let items = try realm.objects("Item").elements()
            let owners = try realm.objects("Owner").elements()
            let tags = try realm.objects("Tag").elements()
            func someOwner() -> Value {
                guard !owners.isEmpty, rng.below(4) != 0 else { return .null }
                let o = owners[rng.below(owners.count)]
                return o.isInvalidated ? .null : .link(o.link)
            }
            for _ in 0..<(1 + rng.below(5)) {
                let item = items[rng.below(items.count)]
                let owner = owners.isEmpty ? nil : owners[rng.below(owners.count)]
                switch rng.below(16) {
                case 0, 1:
                    _ = try createItem(realm, &rng, owners, tags)
                case 2 where items.count > 10:
                    if !item.isInvalidated {
                        written.items[item.objectKey] = nil
                        try realm.delete(item)
                    }
                case 3, 4:
                    try set(item, "score", .int(Int64(rng.below(8))), &written)
                case 5:
                    try set(item, "name", .string(Self.names[rng.below(5)]), &written)
                case 6:
                    try set(item, "other", .int(Int64(rng.below(3))), &written)
                case 7:
                    try set(item, "owner", someOwner(), &written)
                case 8:
                    if let owner, !owner.isInvalidated {
                        try owner.setValue(.string(Self.names[rng.below(5)]), forKey: "name")
                        written.owners[owner.objectKey, default: []].insert("name")
                    }
                case 9:
                    if let owner, !owner.isInvalidated {
                        try owner.setValue(someOwner(), forKey: "boss")
                        written.owners[owner.objectKey, default: []].insert("boss")
                    }
                case 10:
                    _ = try realm.dynamicCreate("Owner", values: [("name", .string(Self.names[rng.below(5)])), ("boss", someOwner())])
                case 11 where owners.count > 3:
                    // Deleting an owner sets the links to it to null: a write of each.
                    guard let owner, !owner.isInvalidated else { break }
                    for i in try realm.objects("Item").filter("owner == %@", Value.link(owner.link)).elements() {
                        written.items[i.objectKey, default: []].insert("owner")
                    }
                    for o in try realm.objects("Owner").filter("boss == %@", Value.link(owner.link)).elements() where o.objectKey != owner.objectKey {
                        written.owners[o.objectKey, default: []].insert("boss")
                    }
                    written.owners[owner.objectKey] = nil
                    try realm.delete(owner)
                case 14, 15:
                    let property = ["rank", "label", "stamp"][rng.below(3)]
                    try set(item, property, Self.someValue(property, &rng), &written)
                case 12:
                    let tag = tags[rng.below(tags.count)]
                    try tag.setValue(.string("t\(rng.below(4))"), forKey: "label")
                    written.tags.insert(tag.objectKey)
                default:
                    if !item.isInvalidated {
                        try item.dynamicList("tags").append(.link(tags[rng.below(tags.count)].link))
                        written.items[item.objectKey, default: []].insert("tags")
                    }
                }
            }
        }
    }

    private func set(_ item: DynamicObject, _ property: String, _ value: Value, _ written: inout Written) throws {
        guard !item.isInvalidated else { return }
        try item.setValue(value, forKey: property)
        written.items[item.objectKey, default: []].insert(property)
    }

    /// Whether the item `key` changed in a way an observer with `keyPaths` sees: without key
    /// paths, a write of it, of its owner or its owner's bosses (the links up to four deep) or
    /// of one of its tags; with them, as they say.
    static func modified(_ key: Int64, _ keyPaths: [String]?, _ realm: Realm, _ written: Written) throws -> Bool {
        let own = written.items[key] ?? []
        guard let item = try realm.dynamicObject(ofType: "Item", objectKey: key) else { return false }
        var ownerKey: Int64?
        if case .link(let l) = try item["owner"] { ownerKey = l.objectKey }
        guard let keyPaths else {
            if !own.isEmpty { return true }
            var next = ownerKey
            for _ in 0..<4 {
                guard let o = next else { break }
                if written.owners[o] != nil { return true }
                guard let owner = try realm.dynamicObject(ofType: "Owner", objectKey: o), case .link(let b) = try owner["boss"] else { break }
                next = b.objectKey
            }
            return try item.dynamicList("tags").values().contains {
                if case .link(let t) = $0 { return written.tags.contains(t.objectKey) } else { return false }
            }
        }
        for path in keyPaths {
            if path == "owner.name" {
                if own.contains("owner") { return true }
                if let o = ownerKey, written.owners[o]?.contains("name") == true { return true }
            } else if own.contains(path) {
                return true
            }
        }
        return false
    }

    /// The checks of one observer after a delivery.
    private func check(_ o: Observed, _ realm: Realm, _ written: Written, _ context: String) throws {
        let context = "\(context): \(o.name)"
        let fresh = try o.make(try realm.objects("Item")).objectKeys()
        XCTAssertEqual(try XCTUnwrap(o.results).objectKeys(), fresh, "\(context): the observed results read the new rows")
        XCTAssertLessThanOrEqual(o.calls.count, 1, context)
        var changes = CollectionChangeSet()
        switch o.calls.last {
        case .update(let c)?: changes = c
        case .error(let e)?: XCTFail("\(context): \(e)")
        default: break
        }
        try Self.checkApplies(changes, old: o.old, new: fresh, context) { key in try Self.modified(key, o.keyPaths, realm, written) }
        o.old = fresh
        o.calls.removeAll()
    }

    /// That `changes` turn `old` into `new` and that the modifications are exactly the rows that
    /// stayed and `modified` says changed, with their old indices.
    static func checkApplies(_ changes: CollectionChangeSet, old: [Int64], new: [Int64], _ context: String,
                             oldIndices: Bool = true, modified: (Int64) throws -> Bool) throws {
        for (label, list) in [("deletions", changes.deletions), ("insertions", changes.insertions), ("modifications", changes.modifications)] {
            XCTAssertEqual(list, Array(Set(list)).sorted(), "\(context): \(label) ascending, each once")
        }
        XCTAssertEqual(CollectionChangeSet.apply(changes, to: old, new: new), new, "\(context): \(changes) applied to \(old)")
        let deleted = Set(changes.deletions), inserted = Set(changes.insertions)
        let stayedOld = old.indices.filter { !deleted.contains($0) }
        let stayedNew = new.indices.filter { !inserted.contains($0) }
        guard stayedOld.count == stayedNew.count else { return }
        var expected: [Int] = [], expectedOld: [Int] = []
        for (i, j) in zip(stayedOld, stayedNew) where try modified(new[j]) {
            expected.append(j)
            expectedOld.append(i)
        }
        XCTAssertEqual(changes.modifications, expected, "\(context): modifications")
        if oldIndices { XCTAssertEqual(changes.modificationsOld, expectedOld, "\(context): modifications' old indices") }
    }
}

/// Sectioned results (by name; by the owner's name, some items without an owner; by score
/// descending, filtered) and one section followed by its key, checked as a sectioned table view
/// applies their changes.
final class SectionsObserved {
    let all: Results<DynamicObject>
    let sectioned: [(name: String, make: (Results<DynamicObject>) throws -> SectionedResults<DynamicObject>)] = [
        ("by name", { try $0.sectioned(by: "name") }),
        ("by owner.name", { try $0.sectioned(by: "owner.name") }),
        ("by score descending, filtered", { try $0.filter("other != 2").sectioned(by: "score", ascending: false) }),
    ]
    var observed: [SectionedResults<DynamicObject>] = []
    var calls: [[SectionedChange]] = []
    var old: [[(key: Value, rows: [Value])]] = []
    /// Section "b" of the first, followed by its key.
    var sectionCalls: [SectionedChange] = []
    var oldSection: [Value] = []

    init(_ all: Results<DynamicObject>) {
        self.all = all
    }

    func observe() throws -> [NotificationToken] {
        var tokens: [NotificationToken] = []
        for (i, s) in sectioned.enumerated() {
            let results = try s.make(all)
            observed.append(results)
            calls.append([])
            tokens.append(try results.observeChanges { [unowned self] in calls[i].append($0) })
        }
        tokens.append(try ResultsSection(parent: observed[0], key: .string("b")).observeChanges { [unowned self] in sectionCalls.append($0) })
        return tokens
    }

    func start() throws {
        old = try observed.map { try $0.sectionRows() }
        oldSection = try observed[0].rows(ofKey: .string("b")) ?? []
        for i in calls.indices { calls[i].removeAll() }
        sectionCalls.removeAll()
    }

    func check(_ realm: Realm, _ written: IncrementalSortDifferentialTests.Written, _ context: String) throws {
        let modified = { (row: Value) throws -> Bool in
            guard case .link(let l) = row else { return false }
            return try IncrementalSortDifferentialTests.modified(l.objectKey, nil, realm, written)
        }
        for (i, s) in sectioned.enumerated() {
            let context = "\(context): sectioned \(s.name)"
            let fresh = try s.make(try realm.objects("Item")).sectionRows()
            let now = try observed[i].sectionRows()
            XCTAssertEqual(now.map(\.key), fresh.map(\.key), "\(context): keys read")
            XCTAssertEqual(now.map(\.rows), fresh.map(\.rows), "\(context): rows read")
            XCTAssertLessThanOrEqual(calls[i].count, 1, context)
            var sc = SectionedChangeSet()
            switch calls[i].last {
            case .update(let c)?: sc = c
            case .error(let e)?: XCTFail("\(context): \(e)")
            default: break
            }
            // Applied as a sectioned table view applies them: rows out, sections out, sections
            // in whole, rows in.
            for list in [sc.deletions, sc.insertions, sc.modifications] { XCTAssertEqual(list, Array(Set(list)).sorted(), context) }
            XCTAssertEqual(sc.sectionsToInsert, Array(Set(sc.sectionsToInsert)).sorted(), context)
            XCTAssertEqual(sc.sectionsToDelete, Array(Set(sc.sectionsToDelete)).sorted(), context)
            var rows = old[i].map(\.rows)
            var keys = old[i].map(\.key)
            for p in sc.deletions.sorted(by: >) { rows[p.section].remove(at: p.row) }
            for s in sc.sectionsToDelete.sorted(by: >) {
                rows.remove(at: s)
                keys.remove(at: s)
            }
            for s in sc.sectionsToInsert.sorted() {
                rows.insert(fresh[s].rows, at: s)
                keys.insert(fresh[s].key, at: s)
            }
            for p in sc.insertions.sorted() { rows[p.section].insert(fresh[p.section].rows[p.row], at: p.row) }
            XCTAssertEqual(keys, fresh.map(\.key), "\(context): \(sc) applied, keys")
            XCTAssertEqual(rows, fresh.map(\.rows), "\(context): \(sc) applied to \(old[i].map(\.rows))")
            // The modifications: the rows of sections that stayed, not inserted, that changed.
            let newSections = Set(sc.sectionsToInsert), inserted = Set(sc.insertions)
            var expected: [IndexPath] = []
            for (si, section) in fresh.enumerated() where !newSections.contains(si) {
                for (r, row) in section.rows.enumerated() where !inserted.contains(IndexPath(row: r, section: si)) {
                    if try modified(row) { expected.append(IndexPath(row: r, section: si)) }
                }
            }
            XCTAssertEqual(sc.modifications, expected, "\(context): modifications")
            old[i] = fresh
            calls[i].removeAll()
        }
        // Section "b" of the first: its rows only.
        let context = "\(context): section b"
        let newSection = try observed[0].rows(ofKey: .string("b")) ?? []
        XCTAssertLessThanOrEqual(sectionCalls.count, 1, context)
        var bc = SectionedChangeSet()
        if case .update(let c)? = sectionCalls.last { bc = c }
        XCTAssertTrue(bc.sectionsToInsert.isEmpty && bc.sectionsToDelete.isEmpty, context)
        XCTAssertTrue((bc.deletions + bc.insertions + bc.modifications).allSatisfy { $0.section == 0 }, context)
        let changes = CollectionChangeSet.from(bc)
        try IncrementalSortDifferentialTests.checkApplies(changes, old: oldSection.map(Self.key), new: newSection.map(Self.key), context,
                                                               oldIndices: false) {
            try modified(.link(ObjectLink(classKey: 0, objectKey: $0)))
        }
        oldSection = newSection
        sectionCalls.removeAll()
    }

    static func key(_ row: Value) -> Int64 {
        if case .link(let l) = row { return l.objectKey }
        return -1
    }
}

extension CollectionChangeSet {
    /// The row changes of a one-section change set (section 0); sections name no old indices of
    /// their modifications.
    static func from(_ section: SectionedChangeSet) -> CollectionChangeSet {
        var c = CollectionChangeSet()
        c.deletions = section.deletions.map(\.row)
        c.insertions = section.insertions.map(\.row)
        c.modifications = section.modifications.map(\.row)
        return c
    }
}
