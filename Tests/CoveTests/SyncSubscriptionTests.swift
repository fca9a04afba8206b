// Subscriptions in the file: the set's rules for names and queries (realm-swift's), the query a
// Results subscribes with, what the set refuses, and object states and removals from a
// subscribed download applied to a file; then, against the server the test command starts
// (its schema has SubDog and SubPerson), subscriptions that download what they cover and
// follow the changes of others.
import FoundationEssentials
import XCTest
@_spi(CoveBindings) @testable import Cove
@testable import CoveCore
import CoveSyncCore

final class SyncSubscriptionTests: CoveTestCase {
    /// `nickname` is not in the server's schema: a query on it is refused there, not here.
    static let schemaJSON = """
    {"SubDog": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "color": "string?",
                "toys": "string[]", "nickname": "string?", "owner": "SubPerson?"}},
     "SubPerson": {"primaryKey": "id", "properties": {"id": "int", "name": "string", "dog": "SubDog?"}},
     "RuledNote": {"primaryKey": "id", "properties": {"id": "int", "owner": "string", "text": "string"}}}
    """

    private func open(_ name: String, url: String = "http://127.0.0.1:9", token: String = "t",
                      connected: Bool = false, batch: Int = 1000) throws -> Realm {
        let sync = SyncConfiguration(url: url, token: token, requestTimeout: 10, longPollSeconds: 2, changesetsPerTransaction: batch,
                                     startsConnected: connected)
        return try Realm(configuration: Realm.Configuration(path: "\(folder)/\(name)", durability: .noSync,
                                                            schema: try Schema(jsonText: Self.schemaJSON),
                                                            schemaVersion: 1, syncConfiguration: sync))
    }

    private func entries(_ realm: Realm) -> [String] {
        realm.subscriptions.map { "\($0.name ?? "-") \($0.objectClassName) \($0.queryString) \($0.arguments)" }
    }

    // MARK: In the file

    func testFiltersJoinIntoOneQueryWithArgumentsRenumbered() throws {
        let (one, oneArgs) = try SubscriptionQueryText.joined([("age > $0", [.value(.int(3))])])
        XCTAssertEqual(one, "age > $0")
        XCTAssertEqual(oneArgs, [.value(.int(3))])
        let (text, args) = try SubscriptionQueryText.joined([
            ("age > %@ AND name != '$0 %@'", [.value(.int(1))]),
            ("color == $1 OR color == $0 OR color == $1", [.value(.string("a")), .value(.string("b"))]),
        ])
        XCTAssertEqual(text, "(age > $0 AND name != '$0 %@') AND (color == $1 OR color == $2 OR color == $1)")
        XCTAssertEqual(args, [.value(.int(1)), .value(.string("b")), .value(.string("a"))])
        XCTAssertEqual(try SubscriptionQueryText.joined([]).0, "TRUEPREDICATE")
        assertThrows(.invalidArgument, containing: "uses argument 1") { _ = try SubscriptionQueryText.joined([("a == $1", [.value(.int(1))]), ("b == 1", [])]) }
        assertThrows(.querySyntax, containing: "unterminated") { _ = try SubscriptionQueryText.joined([("a == 'open", []), ("b == 1", [])]) }
    }

    func testSubscribeFollowsTheRulesForNamesAndQueries() async throws {
        let realm = try open("a.cove")
        defer { realm.close() }
        XCTAssertEqual(realm.subscriptions.version, 0)
        let adults = try realm.objects("SubDog", where: "age > 1")
        _ = try await adults.subscribe(waitForSync: .never)
        _ = try await adults.subscribe(waitForSync: .never)
        XCTAssertEqual(entries(realm), ["- SubDog age > 1 []"], "an unnamed query subscribed twice is one subscription")
        XCTAssertEqual(realm.subscriptions.version, 1)
        XCTAssertEqual(realm.subscriptions.state, .pending)
        // The seed's example: adults, overOne and an unnamed one; unsubscribing overOne leaves
        // the others.
        let r1 = try await realm.objects("SubDog", where: "age > 1").subscribe(name: "adults", waitForSync: .never)
        let r2 = try await realm.objects("SubDog", where: "age > 1").subscribe(name: "overOne", waitForSync: .never)
        XCTAssertEqual(entries(realm), ["- SubDog age > 1 []", "adults SubDog age > 1 []", "overOne SubDog age > 1 []"])
        r2.unsubscribe()
        XCTAssertEqual(entries(realm), ["- SubDog age > 1 []", "adults SubDog age > 1 []"])
        // A name in use: the same query adds nothing; another query replaces it.
        let version = realm.subscriptions.version
        _ = try await realm.objects("SubDog", where: "age > 1").subscribe(name: "adults", waitForSync: .never)
        XCTAssertEqual(realm.subscriptions.version, version)
        let created = try XCTUnwrap(realm.subscriptions.first(named: "adults")).createdAt
        _ = try await realm.objects("SubDog", where: "age > %@", .int(5)).subscribe(name: "adults", waitForSync: .never)
        XCTAssertEqual(entries(realm), ["- SubDog age > 1 []", "adults SubDog age > $0 [CoveCore.QueryArgument.value(5)]"])
        XCTAssertEqual(realm.subscriptions.version, version + 1)
        XCTAssertEqual(try XCTUnwrap(realm.subscriptions.first(named: "adults")).createdAt, created)
        // Sorting and DISTINCT do not change what is subscribed to; filters are joined.
        let sorted = try realm.objects("SubDog", where: "age > 1").sorted(byKeyPath: "name").filter("color == %@", .string("red"))
        _ = try await sorted.subscribe(waitForSync: .never)
        XCTAssertEqual(realm.subscriptions.first(ofClass: "SubDog", where: "(age > 1) AND (color == $0)")?.arguments, [.value(.string("red"))])
        sorted.unsubscribe()
        adults.unsubscribe()
        r1.unsubscribe()
        XCTAssertEqual(entries(realm), ["adults SubDog age > $0 [CoveCore.QueryArgument.value(5)]"],
                       "r1 made 'adults' with another query than it has now: it stays")
        // Persisted: a new realm on the file reads the same set.
        let again = try open("a.cove")
        XCTAssertEqual(entries(again), entries(realm))
        again.close()
    }

    func testTheSetChangesOnlyInsideUpdateAndRefusesWhatAServerCannotAnswer() async throws {
        let realm = try open("a.cove")
        defer { realm.close() }
        assertThrows(.invalidArgument, containing: "only inside subscriptions.update") { try realm.subscriptions.append(className: "SubDog") }
        try realm.subscriptions.update({
            try realm.subscriptions.append(className: "SubDog", where: "age > $0", arguments: [.value(.int(2))], name: "a")
            try realm.subscriptions.append(className: "SubPerson")
        }, onComplete: nil)
        XCTAssertEqual(realm.subscriptions.count, 2)
        XCTAssertEqual(realm.subscriptions.version, 1)
        // A block that throws commits nothing.
        struct Stop: Error {}
        XCTAssertThrowsError(try realm.subscriptions.update({
            try realm.subscriptions.removeAll()
            throw Stop()
        }, onComplete: nil))
        XCTAssertEqual(realm.subscriptions.count, 2)
        try realm.subscriptions.update({ try realm.subscriptions.remove(named: "a") }, onComplete: nil)
        XCTAssertEqual(entries(realm), ["- SubPerson TRUEPREDICATE []"])
        // By the subscription read back, by class, and the unnamed ones only.
        try realm.subscriptions.update({
            try realm.subscriptions.append(QuerySubscription<SubDogModel>(name: "n", where: "age > 1"))
            try realm.subscriptions.append(className: "SubDog", where: "age < 1")
        }, onComplete: nil)
        let person = try XCTUnwrap(realm.subscriptions.first(ofClass: "SubPerson", where: "TRUEPREDICATE"))
        try realm.subscriptions.update({ try realm.subscriptions.remove(person) }, onComplete: nil)
        XCTAssertEqual(entries(realm), ["n SubDog age > 1 []", "- SubDog age < 1 []"])
        assertThrows(.notFound, containing: "holds no subscription to SubPerson") {
            try realm.subscriptions.update({ try realm.subscriptions.remove(person) }, onComplete: nil)
        }
        try realm.subscriptions.update({ try realm.subscriptions.removeAll(unnamedOnly: true) }, onComplete: nil)
        XCTAssertEqual(entries(realm), ["n SubDog age > 1 []"])
        try realm.subscriptions.update({ try realm.subscriptions.removeAll(ofType: SubDogModel.self) }, onComplete: nil)
        XCTAssertTrue(realm.subscriptions.isEmpty)
        assertThrows(.notFound, containing: "no subscription is named 'zz'") {
            try realm.subscriptions.update { try realm.subscriptions.remove(named: "zz") }
        }
        // Outside the subset subscriptions take.
        for (query, message) in [("age > 1 SORT(name ASC)", "SORT"), ("owner.name == 'x'", "key path"), ("toys.@count > 1", "not allowed")] {
            do {
                _ = try await realm.objects("SubDog", where: query).subscribe(waitForSync: .never)
                XCTFail(query)
            } catch let error as CoveError {
                XCTAssertTrue([.invalidArgument, .querySyntax].contains(error.code), "\(query): \(error)")
                XCTAssertTrue(error.message.contains(message), "\(query): \(error.message)")
            }
        }
        assertThrows(.invalidArgument, containing: "no such class") {
            try realm.subscriptions.update { try realm.subscriptions.append(className: "Cat") }
        }
        // Inside a write, or on a realm that does not sync.
        try realm.beginWrite()
        assertThrows(.inWrite, containing: "inside a write") { try realm.subscriptions.update {} }
        try realm.cancelWrite()
        let plain = try Realm(configuration: Realm.Configuration(path: "\(folder)/plain.cove", schema: try Schema(jsonText: Self.schemaJSON)))
        defer { plain.close() }
        do {
            _ = try await plain.objects("SubDog").subscribe()
            XCTFail("a realm that does not sync has no subscriptions")
        } catch let error as CoveError {
            XCTAssertEqual(error.code, .invalidArgument)
        }
        try plain.objects("SubDog").unsubscribe()
        // A wait that ends: the session is paused here.
        do {
            _ = try await realm.objects("SubDog", where: "age == 7").subscribe(waitForSync: .always, timeout: 0.2)
            XCTFail("nothing downloads while paused")
        } catch let error as CoveError {
            XCTAssertEqual(error.code, .sync)
            XCTAssertTrue(error.message.contains("within 0.2 s"), error.message)
        }
        // The wait ran on a thread of its own: this task may go on on another thread.
        try realm.moveToCurrentThread()
        XCTAssertNotNil(realm.subscriptions.first(ofClass: "SubDog", where: "age == 7"), "a wait that times out cancels nothing")
    }

    func testObjectStatesAndRemovalsFromADownloadShowInTheFile() throws {
        let a = try open("a.cove")
        let b = try open("b.cove")
        defer { a.close(); b.close() }
        try a.write {
            let rex = try a.dynamicCreate("SubDog", primaryKey: .string("rex"), values: [("age", .int(3)), ("color", .string("red"))])
            try rex.dynamicList("toys").append(.string("ball"))
            try a.dynamicCreate("SubPerson", primaryKey: .int(1), values: [("name", .string("Ann")), ("dog", .link(rex.link))])
        }
        func line(_ realm: Realm, _ cls: String, _ pk: Value) throws -> SyncStateLine {
            let store = try realm.objectStore()
            let schema = try store.objectSchema(cls)
            let state = try store.loadState(try store.classKey(of: schema), pk)
            return .object(try store.ref(schema, pk), state.merge)
        }
        let rexLine = try line(a, "SubDog", .string("rex"))
        let annLine = try line(a, "SubPerson", .int(1))
        try b.applyStates([annLine, rexLine], cursor: 5)
        let rex = try XCTUnwrap(try b.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("rex")))
        XCTAssertEqual(try rex["age"], .int(3))
        XCTAssertEqual(try rex.dynamicList("toys").values(), [.string("ball")])
        XCTAssertEqual(try b.dynamicObject(ofType: "SubPerson", forPrimaryKey: .int(1))?.linkedObject("dog")?["name"], .string("rex"))
        XCTAssertEqual(try b.syncRecord().downloadCursor, 5)
        XCTAssertTrue(try b.readSyncQueue(limit: 10, maxBytes: 1 << 20).1.isEmpty, "what a download brings is not uploaded")
        // Merged with what the file holds: a later local write stays.
        try b.write { try rex.setValue(.int(4), forKey: "age") }
        try b.applyStates([rexLine], cursor: 6)
        XCTAssertEqual(try rex["age"], .int(4))
        // Removed: out of the file, not deleted; the link to it waits and shows again.
        try b.applyStates([.remove(rexLine.object)], cursor: 7)
        XCTAssertNil(try b.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("rex")))
        XCTAssertNil(try b.dynamicObject(ofType: "SubPerson", forPrimaryKey: .int(1))?.linkedObject("dog"))
        let queued = try b.readSyncQueue(limit: 10, maxBytes: 1 << 20).1
        XCTAssertEqual(queued.count, 1, "only the local write is queued, no delete")
        try b.applyStates([rexLine], cursor: 8)
        XCTAssertEqual(try b.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("rex"))?["age"], .int(3),
                       "its state went with it: it comes back as the server has it")
        XCTAssertEqual(try b.dynamicObject(ofType: "SubPerson", forPrimaryKey: .int(1))?.linkedObject("dog")?["name"], .string("rex"))
        // A bootstrap's end keeps what it sent and what has changes to upload.
        try b.write { try b.dynamicCreate("SubDog", primaryKey: .string("mine"), values: [("age", .int(1))]) }
        try b.finishBootstrap(set: 3, keep: [annLine.object], cursor: 20)
        XCTAssertEqual(Set(try b.dynamicObjects("SubDog").map { try $0["name"] }.map { "\($0)" }), Set([Value.string("mine"), .string("rex")].map { "\($0)" }),
                       "rex has a local change to upload: it stays")
        try b.acknowledgeUploads(upTo: try b.syncRecord().localVersion)
        try b.finishBootstrap(set: 3, keep: [annLine.object], cursor: 20)
        XCTAssertEqual(try b.dynamicObjects("SubDog").count, 0, "once uploaded, what the bootstrap did not send leaves")
        XCTAssertEqual(try b.dynamicObjects("SubPerson").count, 1)
        XCTAssertEqual(try b.syncRecord().downloadCursor, 20)
        XCTAssertEqual(try b.objectStore().syncSubscriptions().completeVersion, 3)
    }

    // MARK: Through the server

    private func names(_ realm: Realm, _ cls: String = "SubDog", tag: String) throws -> [String] {
        try realm.moveToCurrentThread()
        try realm.refresh()
        return try realm.dynamicObjects(cls).compactMap { o -> String? in
            guard case .string(let name) = try o["name"], name.hasPrefix(tag) else { return nil }
            return String(name.dropFirst(tag.count))
        }.sorted()
    }

    func testASubscriptionDownloadsWhatItCoversAndFollowsOthersChanges() async throws {
        let server = try SyncTestServer.fromEnvironment()
        let tag = "s\(UInt32.random(in: 0...UInt32.max))-"
        let writer = try open("w.cove", url: server.url, token: server.token, connected: true)
        defer { writer.close() }
        try writer.write {
            for age in 1...6 {
                try writer.dynamicCreate("SubDog", primaryKey: .string("\(tag)\(age)"), values: [("age", .int(Int64(age))), ("color", .string(tag))])
            }
        }
        try writer.syncSession!.wait(for: .upload, timeout: 30)
        let reader = try open("r.cove", url: server.url, token: server.token, connected: true)
        defer { reader.close() }
        let old = try reader.objects("SubDog", where: "color == $0 AND age > 3", .string(tag))
        _ = try await old.subscribe(name: "old")
        XCTAssertEqual(try names(reader, tag: tag), ["4", "5", "6"])
        XCTAssertEqual(reader.subscriptions.state, .complete)
        XCTAssertEqual(try reader.dynamicObjects("SubDog").count, 3, "nothing but what the subscription covers")
        // Others' changes: 4 leaves (age 1), 2 enters (age 9), 5 is deleted, 6 changes.
        try writer.moveToCurrentThread()
        try writer.write {
            try writer.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)4"))!.setValue(.int(1), forKey: "age")
            try writer.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)2"))!.setValue(.int(9), forKey: "age")
            try writer.delete(try writer.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)5"))!)
            try writer.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)6"))!.dynamicList("toys").append(.string("ball"))
        }
        try writer.syncSession!.wait(for: .upload, timeout: 30)
        try reader.moveToCurrentThread()
        try reader.syncSession!.wait(for: .download, timeout: 30)
        XCTAssertEqual(try names(reader, tag: tag), ["2", "6"])
        XCTAssertEqual(try reader.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)6"))?.dynamicList("toys").values(), [.string("ball")])
        // A write here reaches the writer as any synced write does.
        try reader.write { try reader.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)6"))!.setValue(.int(10), forKey: "age") }
        try reader.syncSession!.wait(for: .upload, timeout: 30)
        try writer.moveToCurrentThread()
        try writer.syncSession!.wait(for: .download, timeout: 30)
        try writer.refresh()
        XCTAssertEqual(try writer.dynamicObject(ofType: "SubDog", forPrimaryKey: .string("\(tag)6"))?["age"], .int(10))
        // Another query: what only the old one covered leaves once the new one's objects are in.
        try reader.moveToCurrentThread()
        old.unsubscribe()
        _ = try await reader.objects("SubDog", where: "color == $0 AND age < 3", .string(tag)).subscribe(waitForSync: .always)
        XCTAssertEqual(try names(reader, tag: tag), ["1", "4"])
        XCTAssertEqual(reader.subscriptions.count, 1)
        // A file that downloaded everything holds only what it subscribes to once it does.
        try writer.moveToCurrentThread()
        try await writer.subscriptions.update {
            try writer.subscriptions.append(className: "SubDog", where: "color == $0 AND age >= 9", arguments: [.value(.string(tag))])
        }
        XCTAssertEqual(try names(writer, tag: tag), ["2", "6"])
        XCTAssertEqual(try writer.dynamicObjects("SubDog").count, 2)
        XCTAssertEqual(writer.subscriptions.state, .complete)
    }

    func testAQueryTheServerRefusesPutsTheSetInErrorAndKeepsTheOneBefore() async throws {
        let server = try SyncTestServer.fromEnvironment()
        let tag = "e\(UInt32.random(in: 0...UInt32.max))-"
        let realm = try open("a.cove", url: server.url, token: server.token, connected: true)
        defer { realm.close() }
        try realm.write { try realm.dynamicCreate("SubDog", primaryKey: .string("\(tag)1"), values: [("age", .int(1)), ("color", .string(tag))]) }
        _ = try await realm.objects("SubDog", where: "color == $0", .string(tag)).subscribe(name: "mine")
        try realm.moveToCurrentThread()
        let before = realm.subscriptions.version
        // The server's schema has no nickname: the file's does, so only the server refuses.
        do {
            _ = try await realm.objects("SubDog", where: "nickname == 'x'").subscribe()
            XCTFail("the server has no SubDog.nickname")
        } catch let error as CoveError {
            XCTAssertEqual(error.code, .sync)
            XCTAssertTrue(error.message.contains("refused the subscription set") && error.message.contains("nickname"), error.message)
        }
        try realm.moveToCurrentThread()
        XCTAssertEqual(realm.subscriptions.version, before + 1)
        guard case .error(let error) = realm.subscriptions.state else { return XCTFail("\(realm.subscriptions.state)") }
        XCTAssertTrue(error.message.contains("bad_query"), error.message)
        XCTAssertEqual(try names(realm, tag: tag), ["1"], "the set before stays in force")
        // A set that mends it is taken.
        try await realm.subscriptions.update { try realm.subscriptions.removeAll(unnamedOnly: true) }
        try realm.moveToCurrentThread()
        XCTAssertEqual(realm.subscriptions.state, .complete)
        XCTAssertEqual(try names(realm, tag: tag), ["1"])
    }

    /// Dogs `tag` + 1...count with those ages, uploaded by a file of their own.
    private func uploadDogs(_ server: SyncTestServer, _ tag: String, count: Int) throws {
        let writer = try open("w-\(tag).cove", url: server.url, token: server.token, connected: true)
        defer { writer.close() }
        try writer.write {
            for age in 1...count {
                try writer.dynamicCreate("SubDog", primaryKey: .string("\(tag)\(age)"), values: [("age", .int(Int64(age))), ("color", .string(tag))])
            }
        }
        try writer.syncSession!.wait(for: .upload, timeout: 60)
    }

    func testSubscriptionsChangedOfflineAreSentWhenTheSessionComesBack() throws {
        let server = try SyncTestServer.fromEnvironment()
        let tag = "o\(UInt32.random(in: 0...UInt32.max))-"
        try uploadDogs(server, tag, count: 5)
        let realm = try open("r.cove", url: server.url, token: server.token, connected: false)
        defer { realm.close() }
        try realm.subscriptions.update({
            try realm.subscriptions.append(className: "SubDog", where: "color == $0 AND age > 3", arguments: [.value(.string(tag))], name: "a")
        }, onComplete: nil)
        try realm.subscriptions.update({
            try realm.subscriptions.append(className: "SubDog", where: "color == $0 AND age < 2", arguments: [.value(.string(tag))], name: "a")
        }, onComplete: nil)
        XCTAssertEqual(realm.subscriptions.state, .pending)
        XCTAssertEqual(try names(realm, tag: tag), [])
        realm.syncSession!.resume()
        try Realm.waitForSubscriptions(realm.syncSession, version: 2, download: false, timeout: 30)
        XCTAssertEqual(try names(realm, tag: tag), ["1"])
        XCTAssertEqual(realm.subscriptions.state, .complete)
    }

    func testASetChangedDuringItsBootstrapEndsWithTheNewSetsObjects() throws {
        let server = try SyncTestServer.fromEnvironment()
        let tag = "b\(UInt32.random(in: 0...UInt32.max))-"
        try uploadDogs(server, tag, count: 300)
        // Ten objects a batch: the first set's bootstrap takes 30 requests.
        let realm = try open("r.cove", url: server.url, token: server.token, connected: true, batch: 10)
        defer { realm.close() }
        try realm.subscriptions.update({
            try realm.subscriptions.append(className: "SubDog", where: "color == $0", arguments: [.value(.string(tag))])
        }, onComplete: nil)
        usleep(30_000)
        try realm.subscriptions.update({
            try realm.subscriptions.removeAll()
            try realm.subscriptions.append(className: "SubDog", where: "color == $0 AND age > 295", arguments: [.value(.string(tag))])
        }, onComplete: nil)
        try Realm.waitForSubscriptions(realm.syncSession, version: 2, download: true, timeout: 60)
        XCTAssertEqual(try names(realm, tag: tag), ["296", "297", "298", "299", "300"])
        XCTAssertEqual(realm.subscriptions.state, .complete)
    }

    func testWritesTheServerRefusesAreUndoneAndReported() async throws {
        let server = try SyncTestServer.fromEnvironment()
        let tag = "c\(UInt32.random(in: 0...UInt32.max))-"
        let realm = try open("r.cove", url: server.url, token: server.token, connected: true)
        defer { realm.close() }
        _ = try await realm.objects("SubDog", where: "color == $0 AND age > 3", .string(tag)).subscribe()
        try realm.moveToCurrentThread()
        // A dog its subscriptions do not cover, and a note the write rule (owner == $user, the
        // token's user alice) refuses.
        let note = Int64.random(in: 1...Int64.max)
        try realm.write {
            try realm.dynamicCreate("SubDog", primaryKey: .string("\(tag)1"), values: [("age", .int(1)), ("color", .string(tag))])
            try realm.dynamicCreate("SubDog", primaryKey: .string("\(tag)5"), values: [("age", .int(5)), ("color", .string(tag))])
        }
        try realm.syncSession!.wait(for: .upload, timeout: 30)
        try realm.syncSession!.wait(for: .download, timeout: 30)
        XCTAssertEqual(try names(realm, tag: tag), ["5"], "the dog outside the subscriptions is undone")
        let refused = realm.syncSession!.compensatingWrites
        XCTAssertEqual(refused.map(\.objectClassName), ["SubDog"])
        XCTAssertEqual(refused.first?.primaryKey, .string("\(tag)1"))
        XCTAssertTrue(refused.first?.reason.contains("outside") ?? false, "\(refused)")
        // The write rule's refusal (classes with read rules reach files through subscriptions).
        let plain = try open("p.cove", url: server.url, token: server.token, connected: true)
        defer { plain.close() }
        _ = try await plain.objects("RuledNote").subscribe()
        try plain.moveToCurrentThread()
        try plain.write {
            try plain.dynamicCreate("RuledNote", primaryKey: .int(note), values: [("owner", .string("bob")), ("text", .string("not mine"))])
            try plain.dynamicCreate("RuledNote", primaryKey: .int(note &- 1), values: [("owner", .string("alice")), ("text", .string("mine"))])
        }
        try plain.syncSession!.wait(for: .upload, timeout: 30)
        try plain.syncSession!.wait(for: .download, timeout: 30)
        try plain.refresh()
        XCTAssertNil(try plain.dynamicObject(ofType: "RuledNote", forPrimaryKey: .int(note)), "undone by the server")
        XCTAssertNotNil(try plain.dynamicObject(ofType: "RuledNote", forPrimaryKey: .int(note &- 1)))
        XCTAssertEqual(plain.syncSession!.compensatingWrites.map(\.primaryKey), [.int(note)])
        XCTAssertTrue(plain.syncSession!.compensatingWrites.first?.reason.contains("write rule") ?? false)
        XCTAssertEqual(plain.syncSession!.compensatingWriteCount, 1)
    }
}

/// A model named as the test schema's class, for the typed subscription calls.
final class SubDogModel: Object {
    override class var className: String { "SubDog" }
}
