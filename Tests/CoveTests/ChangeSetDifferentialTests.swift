// A randomized differential test of every kind of change set: results (filtered, sorted,
// distinct, limited, with and without key paths), lists of objects and of values with
// duplicates, moves and clears, a sorted view of a list, sets, maps, sectioned results and one
// observed section. After every delivery each change set, applied as a table view applies it
// (deletions, then insertions, then the modified rows read again), must give the new contents,
// and its modifications must name exactly the rows that stayed and whose observed properties
// (or, for lists and maps, whose slots) were written since the previous delivery.
import Synchronization
import XCTest
@testable import Cove
@testable import CoveCore

final class ChangeSetDifferentialTests: CoveTestCase {
    static let schemaJSON = """
    {"Item": {"properties": {"name": "string", "score": "int", "pool": "int", "tag": "Tag?"}},
     "Tag": {"properties": {"label": "string"}},
     "Owner": {"properties": {"items": "Item[]", "itemSet": "Item<>", "itemMap": "Item?{}",
                              "words": "string[]", "nums": "int<>"}}}
    """

    /// What the test knows of the writes since the last delivery.
    struct Written {
        /// Item keys and the properties written (a write of an equal value included).
        var items: [Int64: Set<String>] = [:]
        /// Tag keys whose label was written.
        var tags: Set<Int64> = []
        /// Slots (by identity) of the lists whose value was replaced.
        var slots: Set<Int> = []
        /// Map keys whose value was stored.
        var mapKeys: Set<String> = []
    }

    /// A list of the model: each slot an identity and a value.
    struct ModelList {
        var slots: [(id: Int, value: Value)] = []
        var cleared = false
    }

    /// One observer: what it last saw and what it was told since.
    final class Observed {
        let name: String
        var calls: [CollectionChange] = []
        var old: [Value] = []
        var oldIDs: [Int] = []
        init(_ name: String) { self.name = name }
    }

    func testEveryChangeSetAppliesAndNamesExactlyTheModifiedRows() throws {
        let seeds: [UInt64] = (1...12).map { $0 &* 0x9E37_79B9 }
        for seed in seeds { try run(seed: seed, rounds: 30) }
    }

    /// Sorted results whose change sets come from what each commit touched (not from sorting
    /// again): after every delivery the change applies, and the rows are those a fresh
    /// evaluation gives, ties in object-key order included.
    func testIncrementallySortedResultsMatchAFullEvaluation() throws {
        let schema = try Schema(jsonText: #"{"Item": {"properties": {"name": "string", "score": "int", "other": "int"}}}"#)
        let names = ["a", "b", "c", "d", "e"]
        let before = CollectionDiffer.incrementallySorted.load(ordering: .relaxed)
        for seed in (1...8).map({ UInt64($0) &* 0x5DEE_CE66 }) {
            let config = Realm.Configuration(path: "\(folder)/s\(seed).cove", durability: .noSync, schema: schema, schemaVersion: 1)
            let realm = try Realm(configuration: config)
            let other = try Realm(configuration: config)
            var rng = SeededRandom(seed: seed)
            try realm.write {
                for _ in 0..<40 {
                    _ = try realm.dynamicCreate("Item", values: [("name", .string(names[rng.below(5)])), ("score", .int(Int64(rng.below(10))))])
                }
            }
            let queries: [(String, (Results<DynamicObject>) -> Results<DynamicObject>)] = [
                ("sorted by score", { $0.sorted(byKeyPath: "score") }),
                ("sorted by name, score descending", { $0.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "score", ascending: false)]) }),
                ("SORT in the query", { $0.filter("score > 2 SORT(name DESC, score ASC)") }),
                ("filtered, then sorted", { $0.filter("name != 'c'").sorted(byKeyPath: "score", ascending: false) }),
            ]
            var observed: [(name: String, results: Results<DynamicObject>, fresh: () throws -> [Int64], old: [Int64], log: Observed)] = []
            var tokens: [NotificationToken] = []
            for (name, make) in queries {
                let results = make(try realm.objects("Item"))
                let log = Observed(name)
                tokens.append(try results.observeChanges { log.calls.append($0) })
                observed.append((name, results, { try make(try realm.objects("Item")).objectKeys() }, [], log))
            }
            try realm.deliver()
            for i in observed.indices {
                observed[i].old = try observed[i].results.objectKeys()
                observed[i].log.calls.removeAll()
            }
            for round in 0..<40 {
                let writer = rng.below(2) == 0 ? realm : other
                try writer.write {
                    let items = try writer.objects("Item").elements()
                    for _ in 0..<(1 + rng.below(6)) {
                        switch rng.below(6) {
                        case 0: _ = try writer.dynamicCreate("Item", values: [("name", .string(names[rng.below(5)])), ("score", .int(Int64(rng.below(10))))])
                        case 1 where items.count > 5:
                            let doomed = items[rng.below(items.count)]
                            if !doomed.isInvalidated { try writer.delete(doomed) }
                        case 2, 3:
                            let o = items[rng.below(items.count)]
                            if !o.isInvalidated { try o.setValue(.int(Int64(rng.below(10))), forKey: "score") }
                        case 4:
                            let o = items[rng.below(items.count)]
                            if !o.isInvalidated { try o.setValue(.string(names[rng.below(5)]), forKey: "name") }
                        default:
                            let o = items[rng.below(items.count)]
                            if !o.isInvalidated { try o.setValue(.int(Int64(rng.below(3))), forKey: "other") }
                        }
                    }
                }
                try realm.deliver()
                for i in observed.indices {
                    let context = "seed \(seed) round \(round): \(observed[i].name)"
                    let fresh = try observed[i].fresh()
                    XCTAssertEqual(try observed[i].results.objectKeys(), fresh, context)
                    XCTAssertLessThanOrEqual(observed[i].log.calls.count, 1, context)
                    var changes = CollectionChangeSet()
                    if case .update(let c)? = observed[i].log.calls.last { changes = c }
                    XCTAssertEqual(CollectionChangeSet.apply(changes, to: observed[i].old, new: fresh), fresh, "\(context): \(changes)")
                    XCTAssertTrue(Set(changes.modifications).isDisjoint(with: changes.insertions), context)
                    observed[i].old = fresh
                    observed[i].log.calls.removeAll()
                }
            }
            for t in tokens { t.invalidate() }
        }
        XCTAssertGreaterThan(CollectionDiffer.incrementallySorted.load(ordering: .relaxed) - before, 100,
                             "the sorted results took the incremental path")
    }

    private func run(seed: UInt64, rounds: Int) throws {
        let path = "\(folder)/d\(seed).cove"
        let config = Realm.Configuration(path: path, durability: .noSync, schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1)
        let realm = try Realm(configuration: config)
        let other = try Realm(configuration: config)
        var rng = SeededRandom(seed: seed)
        let names = ["a", "b", "c", "d"]

        // Tags, items of pool 0 (kept: the collections hold them) and of pool 1 (deleted too).
        var tags: [DynamicObject] = []
        var kept: [DynamicObject] = []
        let owner = try realm.write { () -> DynamicObject in
            for label in ["x", "y", "z"] { tags.append(try realm.dynamicCreate("Tag", values: [("label", .string(label))])) }
            for i in 0..<8 {
                kept.append(try realm.dynamicCreate("Item", values: [
                    ("name", .string(names[i % 4])), ("score", .int(Int64(i % 5))), ("pool", .int(0)),
                    ("tag", .link(tags[i % 3].link))]))
            }
            return try realm.dynamicCreate("Owner", values: [])
        }
        let items = try owner.dynamicList("items")
        let words = try owner.dynamicList("words")
        let itemSet = try owner.dynamicMutableSet("itemSet")
        let nums = try owner.dynamicMutableSet("nums")
        let itemMap = try owner.dynamicMap("itemMap")

        // Results and their observers, each with how it reads its rows.
        let all = try realm.objects("Item")
        let results: [(Observed, Results<DynamicObject>, [String]?)] = [
            (Observed("filtered"), all.filter("score > 1"), nil),
            (Observed("sorted"), all.filter("score >= 1").sorted(byKeyPath: "score"), nil),
            (Observed("sorted by two, key paths [name]"), all.sorted(by: [SortDescriptor(keyPath: "name"), SortDescriptor(keyPath: "score", ascending: false)]), ["name"]),
            (Observed("distinct"), all.distinct(by: ["name"]), nil),
            (Observed("limited"), all.filter("score < 4 SORT(score DESC) LIMIT(3)"), nil),
            (Observed("key paths [tag.label]"), all.filter("pool == 1"), ["tag.label"]),
            (Observed("key paths []"), all, []),
        ]
        var tokens: [NotificationToken] = []
        for (observed, r, keyPaths) in results {
            tokens.append(try r.observeChanges(keyPaths: keyPaths) { observed.calls.append($0) })
        }
        let listObserved = Observed("list of objects")
        tokens.append(try items.observeChanges { listObserved.calls.append($0) })
        let wordsObserved = Observed("list of values")
        tokens.append(try words.observeChanges { wordsObserved.calls.append($0) })
        let sortedList = items.asResults().sorted(byKeyPath: "score")
        let sortedListObserved = Observed("sorted view of the list")
        tokens.append(try sortedList.observeChanges { sortedListObserved.calls.append($0) })
        let setObserved = Observed("set of objects")
        tokens.append(try itemSet.observeChanges { setObserved.calls.append($0) })
        let numsObserved = Observed("set of values")
        tokens.append(try nums.observeChanges { numsObserved.calls.append($0) })
        var mapCalls: [RealmMapChange] = []
        tokens.append(try itemMap.observeChanges { mapCalls.append($0) })
        let sectioned = try all.sectioned(by: "name")
        var sectionedCalls: [SectionedChange] = []
        tokens.append(try sectioned.observeChanges { sectionedCalls.append($0) })
        let sectionB = ResultsSection(parent: sectioned, key: .string("b"))
        var sectionBCalls: [SectionedChange] = []
        tokens.append(try sectionB.observeChanges { sectionBCalls.append($0) })
        defer { for t in tokens { t.invalidate() } }

        try realm.deliver()
        var model = (items: ModelList(), words: ModelList())
        var nextSlot = 0
        var written = Written()
        func read(_ r: Results<DynamicObject>) throws -> [Value] {
            try r.objectKeys().map { .link(ObjectLink(classKey: kept[0].link.classKey, objectKey: $0)) }
        }
        for (observed, r, _) in results { observed.old = try read(r) }
        listObserved.old = try items.values()
        wordsObserved.old = try words.values()
        sortedListObserved.old = try sortedList.elements()
        setObserved.old = try itemSet.values()
        numsObserved.old = try nums.values()
        var oldMap = Dictionary(uniqueKeysWithValues: try itemMap.entries().map { ($0.key, $0.value) })
        var oldSections = try sectioned.sectionRows()
        var oldSectionB = try sectioned.rows(ofKey: .string("b")) ?? []
        listObserved.oldIDs = []
        wordsObserved.oldIDs = []
        for o in [listObserved, wordsObserved, sortedListObserved, setObserved, numsObserved] + results.map(\.0) {
            o.calls.removeAll()
        }
        mapCalls.removeAll()
        sectionedCalls.removeAll()
        sectionBCalls.removeAll()

        for round in 0..<rounds {
            let context = "seed \(seed) round \(round)"
            // One commit by the observing realm, or one to three by another realm of the file,
            // merged into one delivery (a write of the observing realm delivers what is pending
            // before it begins, so its commits are never merged).
            let byOther = rng.below(3) != 0
            for _ in 0..<(byOther ? 1 + rng.below(3) : 1) {
                let writer = byOther ? other : realm
                try writer.write {
                    func local(_ o: DynamicObject) throws -> DynamicObject {
                        guard byOther else { return o }
                        return try XCTUnwrap(other.dynamicObject(ofType: o.objectSchema.className, objectKey: o.objectKey))
                    }
                    let w = try local(owner)
                    let wItems = try w.dynamicList("items"), wWords = try w.dynamicList("words")
                    for _ in 0..<1 + rng.below(5) {
                        switch rng.below(18) {
                        case 0, 1:
                            _ = try writer.dynamicCreate("Item", values: [
                                ("name", .string(names[rng.below(4)])), ("score", .int(Int64(rng.below(6)))),
                                ("pool", .int(1)), ("tag", .link(tags[rng.below(3)].link))])
                        case 2:
                            let doomed = try writer.objects("Item").filter("pool == 1").elements()
                            if let d = doomed.isEmpty ? nil : doomed[rng.below(doomed.count)] {
                                written.items[d.objectKey] = nil
                                try writer.delete(d)
                            }
                        case 3, 4, 5:
                            let pool = try writer.objects("Item").elements()
                            let o = pool[rng.below(pool.count)]
                            let property = rng.below(2) == 0 ? "score" : "name"
                            let value: Value = property == "score" ? .int(Int64(rng.below(6))) : .string(names[rng.below(4)])
                            try o.setValue(value, forKey: property)          // an equal value counts too
                            written.items[o.objectKey, default: []].insert(property)
                        case 6:
                            let t = tags[rng.below(3)]
                            try local(t).setValue(.string(["x", "y", "z"][rng.below(3)]), forKey: "label")
                            written.tags.insert(t.objectKey)
                        case 7:
                            let o = kept[rng.below(8)]
                            let at = rng.below(model.items.slots.count + 1)
                            try wItems.insert(.link(o.link), at: at)
                            model.items.slots.insert((nextSlot, .link(o.link)), at: at)
                            nextSlot += 1
                        case 8 where !model.items.slots.isEmpty:
                            let at = rng.below(model.items.slots.count)
                            try wItems.remove(at: at)
                            model.items.slots.remove(at: at)
                        case 9 where model.items.slots.count > 1:
                            let from = rng.below(model.items.slots.count)
                            let to = rng.below(model.items.slots.count)
                            try wItems.move(from: from, to: to)
                            let slot = model.items.slots.remove(at: from)
                            model.items.slots.insert(slot, at: to)
                        case 10 where !model.items.slots.isEmpty:
                            let at = rng.below(model.items.slots.count)
                            let o = rng.below(2) == 0 ? kept[rng.below(8)].link : {
                                guard case .link(let l) = model.items.slots[at].value else { return kept[0].link }
                                return l
                            }()
                            try wItems.replace(index: at, with: .link(o))
                            model.items.slots[at].value = .link(o)
                            written.slots.insert(model.items.slots[at].id)
                        case 11:
                            if rng.below(6) == 0 {
                                try wItems.removeAll()         // a clear of an empty list changes nothing
                                if !model.items.slots.isEmpty { model.items.cleared = true }
                                model.items.slots.removeAll()
                            } else {
                                let word = Value.string(names[rng.below(4)])
                                let at = rng.below(model.words.slots.count + 1)
                                try wWords.insert(word, at: at)
                                model.words.slots.insert((nextSlot, word), at: at)
                                nextSlot += 1
                            }
                        case 12 where !model.words.slots.isEmpty:
                            switch rng.below(4) {
                            case 0:
                                let at = rng.below(model.words.slots.count)
                                try wWords.remove(at: at)
                                model.words.slots.remove(at: at)
                            case 1:
                                let from = rng.below(model.words.slots.count)
                                let to = rng.below(model.words.slots.count)
                                try wWords.move(from: from, to: to)
                                let slot = model.words.slots.remove(at: from)
                                model.words.slots.insert(slot, at: to)
                            case 2:
                                let at = rng.below(model.words.slots.count)
                                let word = Value.string(names[rng.below(4)])
                                try wWords.replace(index: at, with: word)
                                model.words.slots[at].value = word
                                written.slots.insert(model.words.slots[at].id)
                            default:
                                try wWords.removeAll()
                                model.words.cleared = true
                                model.words.slots.removeAll()
                            }
                        case 13:
                            let o = kept[rng.below(8)]
                            let s = try w.dynamicMutableSet("itemSet")
                            if rng.below(3) == 0 { _ = try s.remove(.link(o.link)) } else { _ = try s.insert(.link(o.link)) }
                        case 14:
                            let s = try w.dynamicMutableSet("nums")
                            let n = Value.int(Int64(rng.below(7)))
                            if rng.below(3) == 0 { _ = try s.remove(n) } else { _ = try s.insert(n) }
                        case 15, 16:
                            let m = try w.dynamicMap("itemMap")
                            let key = names[rng.below(4)]
                            if rng.below(4) == 0 {
                                if try m.removeValue(forKey: key) { written.mapKeys.remove(key) }
                            } else {
                                try m.setValue(.link(kept[rng.below(8)].link), forKey: key)
                                written.mapKeys.insert(key)
                            }
                        default:
                            break
                        }
                    }
                }
            }
            try realm.deliver()

            // The items whose observed properties changed, for a filter.
            func modified(_ row: Value, _ keyPaths: [String]?) throws -> Bool {
                guard case .link(let l) = row else { return false }
                let props = written.items[l.objectKey] ?? []
                guard let keyPaths else {
                    if !props.isEmpty { return true }
                    guard let o = try realm.dynamicObject(ofType: "Item", objectKey: l.objectKey),
                          case .link(let t) = try o["tag"] else { return false }
                    return written.tags.contains(t.objectKey)
                }
                for path in keyPaths {
                    if path == "tag.label" {
                        guard let o = try realm.dynamicObject(ofType: "Item", objectKey: l.objectKey),
                              case .link(let t) = try o["tag"] else { continue }
                        if written.tags.contains(t.objectKey) || props.contains("tag") { return true }
                    } else if props.contains(path) {
                        return true
                    }
                }
                return false
            }

            func check(_ o: Observed, new: [Value], newIDs: [Int]? = nil, slotWritten: (Int) -> Bool = { _ in false },
                       keyPaths: [String]? = nil, cleared: Bool = false) throws {
                XCTAssertLessThanOrEqual(o.calls.count, 1, "\(context): \(o.name): one call a delivery")
                var changes = CollectionChangeSet()
                if case .update(let c)? = o.calls.last { changes = c }
                if case .error(let e)? = o.calls.last { XCTFail("\(context): \(o.name): \(e)") }
                for (label, list) in [("deletions", changes.deletions), ("insertions", changes.insertions), ("modifications", changes.modifications)] {
                    XCTAssertEqual(list, Array(Set(list)).sorted(), "\(context): \(o.name): \(label) ascending, each once")
                }
                for m in changes.moves {
                    XCTAssertTrue(changes.deletions.contains(m.from) && changes.insertions.contains(m.to), "\(context): \(o.name): a move is a deletion and an insertion")
                }
                XCTAssertEqual(changes.cleared, cleared, "\(context): \(o.name): cleared")
                XCTAssertEqual(CollectionChangeSet.apply(changes, to: o.old, new: new), new,
                               "\(context): \(o.name): \(changes) applied to \(o.old)")
                // The rows that stayed, old index to new index, and which of them changed.
                let deleted = Set(changes.deletions), inserted = Set(changes.insertions)
                let stayedOld = o.old.indices.filter { !deleted.contains($0) }
                let stayedNew = new.indices.filter { !inserted.contains($0) }
                guard stayedOld.count == stayedNew.count else { return }
                var expected: [Int] = [], expectedOld: [Int] = []
                for (i, j) in zip(stayedOld, stayedNew) {
                    if let newIDs {
                        XCTAssertEqual(o.oldIDs[i], newIDs[j], "\(context): \(o.name): row \(i) -> \(j) is the same slot")
                    }
                    if try (newIDs.map { slotWritten($0[j]) } ?? false) || modified(new[j], keyPaths) {
                        expected.append(j)
                        expectedOld.append(i)
                    }
                }
                XCTAssertEqual(changes.modifications, expected, "\(context): \(o.name): modifications")
                XCTAssertEqual(changes.modificationsOld, expectedOld, "\(context): \(o.name): modifications' old indices")
                o.old = new
                o.oldIDs = newIDs ?? []
                o.calls.removeAll()
            }

            for (observed, r, keyPaths) in results { try check(observed, new: try read(r), keyPaths: keyPaths) }
            try check(listObserved, new: try items.values(), newIDs: model.items.slots.map(\.id),
                      slotWritten: { written.slots.contains($0) }, cleared: model.items.cleared)
            XCTAssertEqual(try items.values(), model.items.slots.map(\.value), context)
            try check(wordsObserved, new: try words.values(), newIDs: model.words.slots.map(\.id),
                      slotWritten: { written.slots.contains($0) }, cleared: model.words.cleared)
            try check(sortedListObserved, new: try sortedList.elements())
            try check(setObserved, new: try itemSet.values())
            try check(numsObserved, new: try nums.values())

            // The map, by key.
            let newMap = Dictionary(uniqueKeysWithValues: try itemMap.entries().map { ($0.key, $0.value) })
            XCTAssertLessThanOrEqual(mapCalls.count, 1, context)
            var mapChanges = MapChangeSet()
            if case .update(let c)? = mapCalls.last { mapChanges = c }
            XCTAssertEqual(Set(mapChanges.deletions), Set(oldMap.keys).subtracting(newMap.keys), "\(context): map deletions")
            XCTAssertEqual(Set(mapChanges.insertions), Set(newMap.keys).subtracting(oldMap.keys), "\(context): map insertions")
            var mapModified = Set<String>()
            for (key, value) in newMap where oldMap[key] != nil {
                if try written.mapKeys.contains(key) || modified(value, nil) { mapModified.insert(key) }
            }
            XCTAssertEqual(Set(mapChanges.modifications), mapModified, "\(context): map modifications")
            oldMap = newMap
            mapCalls.removeAll()

            // Sectioned results, applied as a sectioned table view applies them.
            let newSections = try sectioned.sectionRows()
            XCTAssertLessThanOrEqual(sectionedCalls.count, 1, context)
            var sc = SectionedChangeSet()
            if case .update(let c)? = sectionedCalls.last { sc = c }
            var rows = oldSections.map(\.rows)
            for p in sc.deletions.sorted(by: >) { rows[p.section].remove(at: p.row) }
            for s in sc.sectionsToDelete.sorted(by: >) { rows.remove(at: s) }
            for s in sc.sectionsToInsert.sorted() { rows.insert(newSections[s].rows, at: s) }
            for p in sc.insertions.sorted() { rows[p.section].insert(newSections[p.section].rows[p.row], at: p.row) }
            XCTAssertEqual(rows, newSections.map(\.rows), "\(context): sectioned: \(sc)")
            let insertedPaths = Set(sc.insertions)
            let newSectionSet = Set(sc.sectionsToInsert)
            var expectedPaths: [IndexPath] = []
            // A row that stayed in its section and changed (sections by name: a name written
            // moves the row; a score written modifies it).
            let oldPosition = Dictionary(uniqueKeysWithValues: oldSections.enumerated().map { ($1.key, $0) })
            for (s, section) in newSections.enumerated() where !newSectionSet.contains(s) {
                guard let was = oldPosition[section.key] else { continue }
                let deletedRows = Set(sc.deletions.filter { $0.section == was }.map(\.row))
                let stayedOld = oldSections[was].rows.indices.filter { !deletedRows.contains($0) }
                let stayedNew = section.rows.indices.filter { !insertedPaths.contains(IndexPath(row: $0, section: s)) }
                XCTAssertEqual(stayedOld.map { oldSections[was].rows[$0] }, stayedNew.map { section.rows[$0] }, context)
                for j in stayedNew where try modified(section.rows[j], nil) { expectedPaths.append(IndexPath(row: j, section: s)) }
            }
            XCTAssertEqual(sc.modifications, expectedPaths, "\(context): sectioned modifications")
            oldSections = newSections
            sectionedCalls.removeAll()

            // One section followed by its key: rows only, the section itself always there.
            let newB = try sectioned.rows(ofKey: .string("b")) ?? []
            var bc = SectionedChangeSet()
            if case .update(let c)? = sectionBCalls.last { bc = c }
            XCTAssertTrue(bc.sectionsToInsert.isEmpty && bc.sectionsToDelete.isEmpty, context)
            var bRows = oldSectionB
            for p in bc.deletions.sorted(by: >) { bRows.remove(at: p.row) }
            for p in bc.insertions.sorted() { bRows.insert(newB[p.row], at: p.row) }
            XCTAssertEqual(bRows, newB, "\(context): section b: \(bc)")
            oldSectionB = newB
            sectionBCalls.removeAll()

            written = Written()
            model.items.cleared = false
            model.words.cleared = false
        }
    }
}
