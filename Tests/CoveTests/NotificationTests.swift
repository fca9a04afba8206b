// Notifications through the Swift API: the initial call, change sets that turn the old rows
// into the new ones, exact key-path filters, object changes with old and new values, merged
// commits, commits from another realm on the same file, re-entrancy, and a randomized property
// test over filtered and sorted results.
import XCTest
@testable import Cove
@testable import CoveCore
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

final class NotificationTests: CoveTestCase {
    static let schemaJSON = """
    {"Person": {"properties": {"name": "string", "age": "int", "dog": "Dog?", "tags": "string[]", "scores": "double{}",
                               "nums": "int<>"}},
     "Dog": {"properties": {"name": "string", "age": "int"}},
     "Other": {"properties": {"x": "int"}}}
    """

    private func open(_ name: String = "n.cove") throws -> Realm {
        try Realm(configuration: .init(path: "\(folder)/\(name)", durability: .noSync,
                                       schema: try Schema(jsonText: Self.schemaJSON), schemaVersion: 1))
    }

    private func names(_ results: Results<DynamicObject>) throws -> [String] {
        try results.elements().map { object -> String in
            guard case .string(let s) = try object["name"] else { return "?" }
            return s
        }
    }

    /// Collects what a collection observer receives.
    final class Log {
        var initial = 0
        var changes: [CollectionChangeSet] = []
        var errors: [CoveError] = []
        func record(_ change: CollectionChange) {
            switch change {
            case .initial: initial += 1
            case .update(let c): changes.append(c)
            case .error(let e): errors.append(e)
            }
        }
    }

    func testResultsInitialAndChangeSets() throws {
        let realm = try open()
        var people: [DynamicObject] = []
        try realm.write {
            for (name, age) in [("a", 30), ("b", 60), ("c", 45), ("d", 20)] {
                people.append(try realm.dynamicCreate("Person", values: [("name", .string(name)), ("age", .int(Int64(age)))]))
            }
        }
        let adults = try realm.objects("Person").filter("age > 25").sorted(byKeyPath: "age")
        let log = Log()
        let token = try adults.observeChanges { log.record($0) }
        XCTAssertEqual(log.initial, 0, "no call before a delivery")
        try realm.deliver()
        XCTAssertEqual(log.initial, 1)
        var before = try names(adults)                               // a 30, c 45, b 60
        XCTAssertEqual(before, ["a", "c", "b"])

        try realm.write {
            try people[3].setValue(.int(50), forKey: "age")          // d comes in between c and b
            try people[1].setValue(.string("B"), forKey: "name")     // b modified in place
            try realm.delete(people[0])                              // a leaves
        }
        try realm.deliver()
        XCTAssertEqual(log.changes.count, 1)
        var after = try names(adults)
        XCTAssertEqual(after, ["c", "d", "B"])
        let c = try XCTUnwrap(log.changes.last)
        XCTAssertEqual(c.deletions, [0])
        XCTAssertEqual(c.insertions, [1])
        XCTAssertEqual(c.modifications, [2])
        XCTAssertEqual(c.modificationsOld, [2])
        XCTAssertEqual(CollectionChangeSet.apply(c, to: before, new: after), after)

        // A write to a class the results do not depend on delivers nothing.
        try realm.write { try realm.dynamicCreate("Other", values: [("x", .int(1))]) }
        try realm.deliver()
        XCTAssertEqual(log.changes.count, 1)

        // Two commits before a delivery are one change set; a net no-op delivers nothing. (They
        // come from another realm: a write of this realm delivers first, as it begins.)
        before = after
        let other = try open()
        defer { other.close() }
        try other.write { try other.dynamicCreate("Person", values: [("name", .string("e")), ("age", .int(99))]) }
        try other.write { try other.dynamicCreate("Person", values: [("name", .string("f")), ("age", .int(26))]) }
        try realm.refresh()
        XCTAssertEqual(log.changes.count, 2)
        after = try names(adults)
        XCTAssertEqual(log.changes.last?.insertions, [0, 4])
        XCTAssertEqual(CollectionChangeSet.apply(log.changes[1], to: before, new: after), after)
        try realm.write {
            let g = try realm.dynamicCreate("Person", values: [("name", .string("g")), ("age", .int(70))])
            try realm.delete(g)
        }
        try realm.deliver()
        XCTAssertEqual(log.changes.count, 2)

        token.invalidate()
        try realm.write { try realm.delete(people[2]) }
        try realm.deliver()
        XCTAssertEqual(log.changes.count, 2, "nothing after invalidate")
        XCTAssertTrue(log.errors.isEmpty)
    }

    func testKeyPathFiltersAreExactPerCallback() throws {
        let realm = try open()
        let (ann, rex) = try realm.write { () -> (DynamicObject, DynamicObject) in
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex")), ("age", .int(3))])
            let ann = try realm.dynamicCreate("Person", values: [("name", .string("Ann")), ("age", .int(30)), ("dog", .link(rex.link))])
            return (ann, rex)
        }
        let people = try realm.objects("Person")
        let all = Log(), ages = Log(), none = Log(), dogNames = Log()
        let t1 = try people.observeChanges { all.record($0) }
        let t2 = try people.observeChanges(keyPaths: ["age"]) { ages.record($0) }
        let t3 = try people.observeChanges(keyPaths: []) { none.record($0) }
        let t4 = try people.observeChanges(keyPaths: ["dog.name"]) { dogNames.record($0) }
        try realm.deliver()
        try realm.write { try ann.setValue(.string("Anna"), forKey: "name") }
        try realm.deliver()
        XCTAssertEqual(all.changes.map(\.modifications), [[0]])
        XCTAssertEqual(ages.changes.count, 0, "a filtered callback never fires for a property outside its paths")
        XCTAssertEqual(none.changes.count, 0)
        XCTAssertEqual(dogNames.changes.count, 0)
        try realm.write { try rex.setValue(.string("Max"), forKey: "name") }          // deep change
        try realm.deliver()
        XCTAssertEqual(all.changes.count, 2)
        XCTAssertEqual(dogNames.changes.map(\.modifications), [[0]])
        XCTAssertEqual(ages.changes.count, 0)
        try realm.write { try rex.setValue(.int(4), forKey: "age") }
        try realm.deliver()
        XCTAssertEqual(all.changes.count, 3)
        XCTAssertEqual(dogNames.changes.count, 1)
        try realm.write { try realm.dynamicCreate("Person", values: [("name", .string("Bob"))]) }
        try realm.deliver()
        XCTAssertEqual(none.changes.map(\.insertions), [[1]], "an empty key path list still sees insertions")
        assertThrows(.invalidArgument, containing: "class 'Dog' has no property 'nope'") {
            _ = try people.observeChanges(keyPaths: ["dog.nope"]) { _ in }
        }
        withExtendedLifetime([t1, t2, t3, t4]) {}
    }

    func testObjectChangesCarryOldAndNewValues() throws {
        let realm = try open()
        let (ann, rex) = try realm.write { () -> (DynamicObject, DynamicObject) in
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
            let ann = try realm.dynamicCreate("Person", values: [("name", .string("Ann")), ("age", .int(30)), ("dog", .link(rex.link))])
            return (ann, rex)
        }
        var changes: [ObjectChange<DynamicObject>] = []
        let token = try ann.observeChanges { changes.append($0) }
        var ageOnly: [ObjectChange<DynamicObject>] = []
        let token2 = try ann.observeChanges(keyPaths: ["age"]) { ageOnly.append($0) }
        try realm.deliver()
        XCTAssertTrue(changes.isEmpty, "no initial call")
        try realm.write {
            try ann.setValue(.int(31), forKey: "age")
            try ann.setValue(.string("Ann"), forKey: "name")          // equal value: still reported
            try ann.dynamicList("tags").append(.string("x"))
        }
        try realm.deliver()
        guard case .change(_, let props)? = changes.last else { return XCTFail("no change") }
        XCTAssertEqual(props.map(\.name), ["name", "age", "tags"])
        XCTAssertEqual(props[1].storedOldValue, .int(30))
        XCTAssertEqual(props[1].storedNewValue, .int(31))
        XCTAssertEqual(props[0].storedOldValue, props[0].storedNewValue)
        guard case .change(_, let onlyAge)? = ageOnly.last else { return XCTFail("no change") }
        XCTAssertEqual(onlyAge.map(\.name), ["age"])
        try realm.write { try rex.setValue(.string("Max"), forKey: "name") }
        try realm.deliver()
        guard case .change(_, let viaLink)? = changes.last else { return XCTFail("no change") }
        XCTAssertEqual(viaLink.map(\.name), ["dog"], "a change along the link is a change of the link")
        XCTAssertEqual(ageOnly.count, 1)
        try realm.write { try realm.delete(ann) }
        try realm.deliver()
        guard case .deleted? = changes.last else { return XCTFail("no deletion") }
        let count = changes.count
        try realm.write { try realm.dynamicCreate("Person", values: [("name", .string("x"))]) }
        try realm.deliver()
        XCTAssertEqual(changes.count, count, "deletion is reported once")
        withExtendedLifetime([token, token2]) {}
    }

    func testCommitsFromAnotherRealmAndReentrancy() throws {
        let realm = try open()
        let other = try open()
        defer { other.close() }
        let people = try realm.objects("Person")
        let log = Log()
        var tokens: [NotificationToken] = []
        var inner: Log?
        var selfToken: NotificationToken?
        selfToken = try people.observeChanges { change in
            log.record(change)
            if case .update = change {
                // A callback may release its own token and register another.
                selfToken?.invalidate()
                let l = Log()
                inner = l
                if let t = try? people.observeChanges({ l.record($0) }) { tokens.append(t) }
            }
        }
        try realm.deliver()
        try other.write { try other.dynamicCreate("Person", values: [("name", .string("x"))]) }
        XCTAssertTrue(try realm.refresh())                          // refresh advances and delivers
        XCTAssertEqual(log.changes.map(\.insertions), [[0]])
        XCTAssertEqual(inner?.initial ?? 0, 0, "a callback added during delivery fires next cycle")
        try realm.deliver()
        XCTAssertEqual(inner?.initial, 1)
        try other.write { try other.dynamicCreate("Person", values: [("name", .string("y"))]) }
        // The start of a write delivers first (never inside the write).
        try realm.write {}
        XCTAssertEqual(inner?.changes.map(\.insertions), [[1]])
        XCTAssertEqual(log.changes.count, 1, "the released token heard nothing more")

        assertThrows(.inWrite, containing: "inside a write") {
            try realm.write { _ = try people.observeChanges { _ in } }
        }
        let frozen = try people.checkedFreeze()
        assertThrows(.frozen, containing: "cannot be observed") { _ = try frozen.observeChanges { _ in } }
        frozen.sourceRealm.close()
        withExtendedLifetime(tokens) {}
    }

    /// A token invalidated on another thread stops its callbacks: the realm's next delivery calls
    /// nothing, and lets go of the callback (and what it holds) there.
    func testATokenInvalidatedOnAnotherThread() throws {
        let realm = try open()
        defer { realm.close() }
        let people = try realm.objects("Person")
        final class Held {}
        final class TokenBox: @unchecked Sendable {
            let token: NotificationToken
            init(_ token: NotificationToken) { self.token = token }
        }
        let log = Log()
        weak var held: Held?
        let token: NotificationToken = try {
            let h = Held()
            held = h
            return try people.observeChanges { change in withExtendedLifetime(h) { log.record(change) } }
        }()
        try realm.deliver()
        XCTAssertEqual(log.initial, 1)
        let box = Unmanaged.passRetained(TokenBox(token)).toOpaque()
        var thread = pthread_t()
        XCTAssertEqual(pthread_create(&thread, nil, { context in
            Unmanaged<TokenBox>.fromOpaque(context!).takeRetainedValue().token.invalidate()
            return nil
        }, box), 0)
        pthread_join(thread, nil)
        XCTAssertNotNil(held, "the realm keeps the callback until its next delivery point")
        try realm.write { _ = try realm.dynamicCreate("Person", values: [("name", .string("x"))]) }
        try realm.deliver()
        XCTAssertEqual(log.changes.count, 0, "no callback after the invalidation")
        XCTAssertNil(held, "the delivery let go of the callback")
        withExtendedLifetime(token) {}
    }

    func testListsSetsAndMaps() throws {
        let realm = try open()
        let other = try open()
        defer { other.close() }
        let (ann, rex) = try realm.write { () -> (DynamicObject, DynamicObject) in
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
            let ann = try realm.dynamicCreate("Person", values: [("name", .string("Ann"))])
            for t in ["a", "b", "c", "d"] { try ann.dynamicList("tags").append(.string(t)) }
            return (ann, rex)
        }
        _ = rex
        let tags = try ann.dynamicList("tags")
        let log = Log()
        let token = try tags.observeChanges { log.record($0) }
        try realm.deliver()
        XCTAssertEqual(log.initial, 1)
        let before = try tags.values()
        // Several operations in one commit, from another realm: a move, an insert, a set, an erase.
        try other.refresh()
        let otherAnn = try XCTUnwrap(other.dynamicObject(ofType: "Person", objectKey: ann.objectKey))
        try other.write {
            let list = try otherAnn.dynamicList("tags")
            try list.move(from: 0, to: 3)          // b c d a
            try list.insert(.string("x"), at: 1)   // b x c d a
            try list.replace(index: 2, with: .string("C"))   // b x C d a
            try list.remove(at: 3)                 // b x C a
        }
        try realm.refresh()
        // The moved element is deleted at 0 and inserted at 3 as well as moved.
        let c = try XCTUnwrap(log.changes.last)
        XCTAssertEqual(c.deletions, [0, 3])
        XCTAssertEqual(c.insertions, [1, 3])
        XCTAssertEqual(c.modifications, [2])
        XCTAssertEqual(c.modificationsOld, [2])
        XCTAssertEqual(c.moves.map(\.from), [0])
        XCTAssertEqual(c.moves.map(\.to), [3])
        XCTAssertEqual(CollectionChangeSet.apply(c, to: before, new: try tags.values()), try tags.values())
        try realm.write { try tags.removeAll() }
        try realm.deliver()
        XCTAssertEqual(log.changes.last?.cleared, true)
        XCTAssertEqual(log.changes.last?.deletions, [0, 1, 2, 3])

        // A map, by key; a set, by position in its order.
        var mapChanges: [MapChangeSet] = []
        let scores = try ann.dynamicMap("scores")
        try realm.write {
            try scores.setValue(.double(1), forKey: "a")
            try scores.setValue(.double(2), forKey: "b")
        }
        let mapToken = try scores.observeChanges { if case .update(let c) = $0 { mapChanges.append(c) } }
        let setLog = Log()
        let nums = try ann.dynamicMutableSet("nums")
        let setToken = try nums.observeChanges { setLog.record($0) }
        try realm.deliver()
        try realm.write {
            try scores.setValue(.double(3), forKey: "c")
            try scores.setValue(.double(9), forKey: "a")
            try scores.removeValue(forKey: "b")
            try nums.insert(.int(5))
            try nums.insert(.int(1))
        }
        try realm.deliver()
        XCTAssertEqual(mapChanges.last?.insertions, ["c"])
        XCTAssertEqual(mapChanges.last?.deletions, ["b"])
        XCTAssertEqual(mapChanges.last?.modifications, ["a"])
        XCTAssertEqual(setLog.changes.last?.insertions, [0, 1])
        try realm.write { try realm.delete(ann) }
        try realm.deliver()
        XCTAssertEqual(log.changes.last?.ownerDeleted, true)
        XCTAssertEqual(mapChanges.last?.ownerDeleted, true)
        withExtendedLifetime([token, mapToken, setToken]) {}
    }

    func testNotificationDescriptorAndWaitForChange() throws {
        let realm = try open()
        let other = try open()
        defer { other.close() }
        let fd = try realm.notificationFileDescriptor()
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        XCTAssertEqual(poll(&poller, 1, 0), 0, "nothing to read yet")
        XCTAssertFalse(try realm.waitForChange(timeoutMilliseconds: 20))
        try other.write { try other.dynamicCreate("Other", values: [("x", .int(1))]) }
        XCTAssertEqual(poll(&poller, 1, 2000), 1, "readable once another realm commits")
        XCTAssertTrue(try realm.waitForChange(timeoutMilliseconds: 0))
        XCTAssertTrue(try realm.refresh())
        poller.revents = 0
        XCTAssertEqual(poll(&poller, 1, 50), 0, "drained by the delivery")
        assertThrows(.frozen, containing: "never changes") { _ = try realm.freeze().notificationFileDescriptor() }
    }

    func testFreezeThawAndAsyncChanges() async throws {
        let realm = try open()
        let ann = try realm.write { try realm.dynamicCreate("Person", values: [("name", .string("Ann")), ("age", .int(3))]) }
        let frozen = try ann.freeze()
        XCTAssertTrue(frozen.realm.isFrozen)
        try realm.write { try ann.setValue(.int(4), forKey: "age") }
        XCTAssertEqual(try frozen["age"], .int(3))
        XCTAssertEqual(try frozen.thaw(in: realm)?["age"], .int(4))
        assertThrows(.frozen, containing: "cannot be written") { try frozen.setValue(.int(1), forKey: "age") }
        let frozenTags = try ann.dynamicList("tags").freeze()
        XCTAssertTrue(frozenTags.realm.isFrozen)
        try realm.write { try realm.delete(ann) }
        XCTAssertNil(try frozen.thaw(in: realm))
        XCTAssertNil(try frozenTags.thaw(in: realm))
        assertThrows(.inWrite, containing: "inside a write") { try realm.write { _ = try realm.freeze() } }

        let stream = try realm.objects("Person").changes()
        var iterator = stream.makeAsyncIterator()
        try realm.deliver()
        guard case .initial? = await iterator.next() else { return XCTFail("no initial") }
        try realm.write { try realm.dynamicCreate("Person", values: [("name", .string("Bob"))]) }
        try realm.deliver()
        guard case .update(let c)? = await iterator.next() else { return XCTFail("no update") }
        XCTAssertEqual(c.insertions, [0])
        // The same on a dispatch queue.
        let delivered = expectation(description: "delivered on the queue")
        let queue = DispatchQueue(label: "observer")
        let token = try realm.objects("Person").observe(on: queue) { change in
            // On the queue, the results are a frozen copy, readable there.
            if case .initial(let people) = change, people.isFrozen, people.count == 1 { delivered.fulfill() }
        }
        try realm.deliver()
        await fulfillment(of: [delivered], timeout: 5)
        token.invalidate()
        frozen.realm.close()
        frozenTags.realm.close()
    }

    /// A filter that reads only the object's own properties is followed from the writes alone:
    /// an object moves in or out only when a property the filter reads is written; a write to
    /// any other property is a modification and nothing more.
    func testFilteredResultsFollowOnlyThePropertiesTheFilterReads() throws {
        let realm = try open()
        var people: [DynamicObject] = []
        try realm.write {
            for (name, age) in [("a", 30), ("b", 60), ("c", 40)] {
                people.append(try realm.dynamicCreate("Person", values: [("name", .string(name)), ("age", .int(Int64(age)))]))
            }
        }
        let results = try realm.objects("Person").filter("age > 50 OR name == 'x'")
        let log = Log()
        let token = try results.observeChanges { log.record($0) }
        try realm.deliver()
        XCTAssertEqual(try names(results), ["b"])
        // The second property the filter reads brings c in.
        try realm.write { try people[2].setValue(.string("x"), forKey: "name") }
        try realm.deliver()
        XCTAssertEqual(try names(results), ["b", "x"])
        XCTAssertEqual(log.changes.last?.insertions, [1])
        XCTAssertEqual(log.changes.last?.deletions, [])
        // A list the filter does not read: b is modified and stays.
        try realm.write { try people[1].dynamicList("tags").append(.string("t")) }
        try realm.deliver()
        XCTAssertEqual(log.changes.last?.modifications, [0])
        XCTAssertEqual(log.changes.last?.insertions, [])
        XCTAssertEqual(log.changes.last?.deletions, [])
        // The first property takes b out; the same write to a, outside, changes nothing.
        try realm.write {
            try people[1].setValue(.int(10), forKey: "age")
            try people[0].setValue(.int(20), forKey: "age")
        }
        try realm.deliver()
        XCTAssertEqual(try names(results), ["x"])
        XCTAssertEqual(log.changes.last?.deletions, [0])
        XCTAssertEqual(log.changes.count, 3)
        token.invalidate()
    }

    /// A filter naming an object by primary key finds it again at every change set: the object
    /// may be created after the observer started.
    func testFilterOnAnObjectByPrimaryKeySeesItCreatedLater() throws {
        let schema = try Schema(jsonText: """
            {"Owner": {"primaryKey": "id", "properties": {"id": "int"}},
             "Pet": {"properties": {"name": "string", "owner": "Owner?"}}}
            """)
        let realm = try Realm(configuration: .init(path: "\(folder)/pk.cove", durability: .noSync, schema: schema, schemaVersion: 1))
        var pets: [DynamicObject] = []
        try realm.write {
            for name in ["p", "q"] { pets.append(try realm.dynamicCreate("Pet", values: [("name", .string(name))])) }
        }
        let owned = try realm.objects("Pet").filter("owner == obj('Owner', 7)")
        let log = Log()
        let token = try owned.observeChanges { log.record($0) }
        try realm.deliver()
        // A change set while owner 7 does not exist yet, then owner 7, then a pet of it.
        try realm.write { try pets[0].setValue(.string("p2"), forKey: "name") }
        try realm.deliver()
        let owner = try realm.write { try realm.dynamicCreate("Owner", primaryKey: .int(7)) }
        try realm.deliver()
        try realm.write { try pets[1].setValue(.link(owner.link), forKey: "owner") }
        try realm.deliver()
        XCTAssertEqual(try owned.checkedCount(), 1)
        XCTAssertEqual(log.changes.last?.insertions, [0])
        token.invalidate()
        realm.close()
    }

    /// Random write transactions over people; after each delivery (one commit or several), the
    /// change set applied to the previous rows gives exactly the new rows, and a row is
    /// reported modified only if a property its callback depends on was written.
    func testRandomizedChangeSetsReproduceTheNewRows() throws {
        for seed in [UInt64(5), 6] { try runRandomized(seed: seed) }
    }

    /// The same, delivering when the notification descriptor says the change sets are ready:
    /// the notification thread computed them, and the results read after delivery are the rows
    /// it computed.
    func testChangeSetsComputedOnTheNotificationThreadReproduceTheNewRows() throws {
        for seed in [UInt64(7), 8] { try runRandomized(seed: seed, waitForReady: true) }
    }

    private func runRandomized(seed: UInt64, waitForReady: Bool = false) throws {
        let realm = try open("r\(seed).cove")
        // The writes go through a second realm on the file, so that the observing realm hears
        // of them at its refresh, one or several commits at a time.
        let writer = try open("r\(seed).cove")
        defer { writer.close() }
        var state = seed &* 0x9E37_79B9_7F4A_7C15
        func random(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        try realm.write {
            for i in 0..<40 { try realm.dynamicCreate("Person", values: [("name", .string("p\(i)")), ("age", .int(Int64(random(100))))]) }
        }
        func makeQueries() throws -> [Results<DynamicObject>] {
            [try realm.objects("Person").filter("age > 50"),
             try realm.objects("Person").filter("age > 20").sorted(byKeyPath: "age", ascending: false),
             try realm.objects("Person").distinct(by: ["age"]),
             try realm.objects("Person").sorted(by: [SortDescriptor(keyPath: "name")])]
        }
        let queries = try makeQueries()
        var rows: [[Int64]] = try queries.map { try $0.objectKeys() }
        var received: [[CollectionChangeSet]] = Array(repeating: [], count: queries.count)
        var ageWritten = Set<Int64>()
        var tokens: [NotificationToken] = []
        for (q, results) in queries.enumerated() {
            tokens.append(try results.observeChanges(keyPaths: ["age"]) { change in
                if case .update(let c) = change { received[q].append(c) }
            })
        }
        try realm.deliver()
        for round in 0..<60 {
            for _ in 0..<(1 + random(3)) {
                try writer.write {
                    let people = try writer.objects("Person").elements()
                    for _ in 0..<(1 + random(4)) {
                        switch random(5) {
                        case 0: try writer.dynamicCreate("Person", values: [("name", .string("n\(round)")), ("age", .int(Int64(random(100))))])
                        case 1 where !people.isEmpty:
                            let p = people[random(people.count)]
                            if !p.isInvalidated { try writer.delete(p) }
                        case 2 where !people.isEmpty:
                            let p = people[random(people.count)]
                            try p.setValue(.string("r\(random(99))"), forKey: "name")
                        default:
                            guard !people.isEmpty else { continue }
                            let p = people[random(people.count)]
                            if !p.isInvalidated {
                                try p.setValue(.int(Int64(random(100))), forKey: "age")
                                ageWritten.insert(p.objectKey)
                            }
                        }
                    }
                }
            }
            for q in queries.indices { received[q].removeAll() }
            if waitForReady {
                var p = pollfd(fd: try realm.notificationFileDescriptor(), events: Int16(POLLIN), revents: 0)
                XCTAssertEqual(poll(&p, 1, 10_000), 1, "the descriptor never became readable in round \(round)")
                XCTAssertTrue(realm.waitForChangeSetsAhead(timeoutMs: 10_000), "the change sets of round \(round) were never ready")
            }
            try realm.refresh()
            // Results made now run their queries here: what the observed ones show after the
            // delivery (rows computed on the notification thread, with a worker) must match.
            let fresh = try makeQueries().map { try $0.objectKeys() }
            for (q, results) in queries.enumerated() {
                let new = try results.objectKeys()
                XCTAssertEqual(new, fresh[q], "seed \(seed) round \(round) query \(q)")
                let changes = received[q].reduce(into: CollectionChangeSet?.none) { acc, c in
                    XCTAssertNil(acc, "one change set per delivery (seed \(seed), round \(round))")
                    acc = c
                }
                if let changes {
                    XCTAssertEqual(CollectionChangeSet.apply(changes, to: rows[q], new: new), new, "seed \(seed) round \(round) query \(q)")
                    for m in changes.modifications {
                        XCTAssertTrue(ageWritten.contains(new[m]), "modified without an age write (seed \(seed), round \(round))")
                    }
                } else {
                    XCTAssertEqual(rows[q], new, "rows changed without a change set (seed \(seed), round \(round), query \(q))")
                }
                rows[q] = new
            }
            ageWritten.removeAll()
        }
        if waitForReady {
            // Every delivery takes the notification thread's change sets (the initial calls
            // too, when it ran the queries before the realm delivered them).
            let served = realm.changeSetsComputedAhead
            XCTAssertTrue((60 * queries.count)...(61 * queries.count) ~= served, "seed \(seed): \(served) served")
        }
        withExtendedLifetime(tokens) {}
        realm.close()
    }
}

final class RowKeysCacheTests: XCTestCase {
    /// The cache answers for the very rows it was given (the same storage, as a delivery hands
    /// them back) and for nothing else, not even equal rows in other storage.
    func testKeysAreFoundByTheRowsStorage() {
        let cache = RowKeysCache()
        let rows: [Value] = (1...5).map { .link(ObjectLink(classKey: 1, objectKey: Int64($0))) }
        XCTAssertNil(cache.keys(of: rows))
        cache.remember(rows, SortedKeys([1, 2, 3, 4, 5]))
        let handedBack = rows
        XCTAssertEqual(cache.keys(of: handedBack)?.keys, [1, 2, 3, 4, 5])
        let equalElsewhere: [Value] = (1...5).map { .link(ObjectLink(classKey: 1, objectKey: Int64($0))) }
        XCTAssertNil(cache.keys(of: equalElsewhere))
        var edited = rows
        edited[0] = .link(ObjectLink(classKey: 1, objectKey: 9))
        XCTAssertNil(cache.keys(of: edited), "a written copy has storage of its own")
        XCTAssertNil(cache.keys(of: Array(rows.prefix(3))))
        XCTAssertNil(cache.keys(of: []))
    }

    /// The fenced search finds every key at its index and nothing between, before or after
    /// them, at every size around the block of 32.
    func testSortedKeysFindEveryKeyAndNothingElse() {
        for count in [0, 1, 2, 31, 32, 33, 64, 65, 1000] {
            let keys = (0..<count).map { Int64($0) * 3 + 1 }
            let sorted = SortedKeys(keys)
            for (i, k) in keys.enumerated() {
                XCTAssertEqual(sorted.position(of: k), i, "count \(count) key \(k)")
                XCTAssertNil(sorted.position(of: k + 1))
                XCTAssertNil(sorted.position(of: k - 1))
            }
            XCTAssertNil(sorted.position(of: Int64.min))
            XCTAssertNil(sorted.position(of: Int64.max))
        }
    }
}
