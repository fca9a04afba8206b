// The sync client in the file: local writes become queued changesets in the same commit, and
// changesets applied to another file make it show the same objects. Files exchange their queues
// directly here (no server), in every order, with concurrent edits of the same objects; the
// last tests sync two files through a running server when the test command gives one
// (COVE_SYNC_TEST_URL and COVE_SYNC_TEST_TOKEN).
import FoundationEssentials
import Glibc
import XCTest
@testable import Cove
@testable import CoveCore
import CoveSyncCore

final class SyncClientTests: CoveTestCase {
    static let schemaJSON = """
    {"Dog": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "weight": "double?",
             "owner": "Person?", "tags": "string[]", "friends": "Dog[]", "toys": "string<>", "scores": "int{}"}},
     "Person": {"primaryKey": "id", "properties": {"id": "int", "name": "string"}}}
    """

    private func open(_ name: String, url: String = "http://127.0.0.1:9", token: String = "t",
                      connected: Bool = false, reset: ClientResetMode = .recoverUnsyncedChanges) throws -> Realm {
        let sync = SyncConfiguration(url: url, token: token, requestTimeout: 5, longPollSeconds: 2, startsConnected: connected,
                                     clientResetMode: reset)
        return try Realm(configuration: Realm.Configuration(path: "\(folder)/\(name)", durability: .noSync,
                                                            schema: try Schema(jsonText: Self.schemaJSON),
                                                            schemaVersion: 1, syncConfiguration: sync))
    }

    /// The changesets `realm` has queued.
    private func queued(_ realm: Realm) throws -> [Changeset] {
        let (_, lines) = try realm.readSyncQueue(limit: 100_000, maxBytes: 1 << 30)
        return try lines.map { try ChangesetLines.decodeLine(String(decoding: $0.line, as: UTF8.self)) }
    }

    /// What a realm shows, one line per object, for comparing files.
    private func picture(_ realm: Realm) throws -> String {
        try realm.refresh()
        var lines: [String] = []
        for cls in ["Dog", "Person"] {
            for o in try realm.dynamicObjects(cls) {
                var parts: [String] = []
                for p in o.objectSchema.properties where !p.isBacklinks {
                    switch p.collection {
                    case .none:
                        if p.isLink, let link = try o.linkedObject(p.name) { parts.append("\(p.name)=>\(try link["name"]) \(try link["id"])") }
                        else { parts.append("\(p.name)=\(try o[p.name])") }
                    case .list:
                        let list = try o.dynamicList(p.name)
                        var items: [String] = []
                        for i in 0..<(try list.count) {
                            if p.isLink { items.append("\(try list.object(at: i).map { try $0["name"] } ?? .null)") } else { items.append("\(try list.value(at: i))") }
                        }
                        parts.append("\(p.name)=[\(items.joined(separator: ","))]")
                    case .set:
                        parts.append("\(p.name)=<\(try o.dynamicMutableSet(p.name).values().map { "\($0)" }.sorted().joined(separator: ","))>")
                    case .map:
                        parts.append("\(p.name)={\(try o.dynamicMap(p.name).entries().map { "\($0.key):\($0.value)" }.sorted().joined(separator: ","))}")
                    }
                }
                lines.append("\(cls) " + parts.joined(separator: " "))
            }
        }
        return lines.sorted().joined(separator: "\n")
    }

    func testAWriteIsQueuedAsAChangesetInItsOwnCommit() throws {
        let a = try open("a.cove")
        defer { a.close() }
        XCTAssertEqual(try queued(a).count, 0)
        try a.write {
            let p = try a.dynamicCreate("Person", primaryKey: .int(1), values: [("name", .string("Ann"))])
            let d = try a.dynamicCreate("Dog", primaryKey: .string("rex"), values: [("age", .int(3)), ("owner", .link(p.link))])
            try d.dynamicList("tags").append(.string("good"))
            _ = try d.dynamicMutableSet("toys").insert(.string("ball"))
            try d.dynamicMap("scores").setValue(.int(10), forKey: "agility")
        }
        let changesets = try queued(a)
        XCTAssertEqual(changesets.count, 1)
        let record = try a.syncRecord()
        XCTAssertEqual(changesets[0].clientVersion, 1)
        XCTAssertEqual(changesets[0].clientId, record.nodeId)
        XCTAssertEqual(record.localVersion, 1)
        let kinds = changesets[0].operations.map(\.change.kindName)
        XCTAssertEqual(kinds.filter { $0 == "create" }.count, 2)
        XCTAssertTrue(kinds.contains("list.insert") && kinds.contains("set.add") && kinds.contains("map.set"), "\(kinds)")
        // A write that changes nothing synced queues nothing.
        try a.write {}
        XCTAssertEqual(try queued(a).count, 1)
        // Acknowledged changesets leave the queue.
        try a.acknowledgeUploads(upTo: 1)
        XCTAssertEqual(try queued(a).count, 0)
        XCTAssertEqual(try a.syncRecord().uploadedVersion, 1)
    }

    func testAnotherFileShowsWhatTheChangesetsSay() throws {
        let a = try open("a.cove"), b = try open("b.cove")
        defer { a.close(); b.close() }
        try a.write {
            let p = try a.dynamicCreate("Person", primaryKey: .int(1), values: [("name", .string("Ann"))])
            let rex = try a.dynamicCreate("Dog", primaryKey: .string("rex"), values: [("age", .int(3)), ("weight", .double(9.5)), ("owner", .link(p.link))])
            let fido = try a.dynamicCreate("Dog", primaryKey: .string("fido"), values: [("age", .int(5))])
            for t in ["a", "b", "c"] { try rex.dynamicList("tags").append(.string(t)) }
            try rex.dynamicList("friends").append(.link(fido.link))
            _ = try rex.dynamicMutableSet("toys").insert(.string("ball"))
            try rex.dynamicMap("scores").setValue(.int(10), forKey: "agility")
        }
        try b.applyDownload(try queued(a), cursor: 1)
        XCTAssertEqual(try picture(b), try picture(a))
        XCTAssertEqual(try b.syncRecord().downloadCursor, 1)
        // Edits of every kind, in a second changeset.
        try a.write {
            let rex = try XCTUnwrap(try a.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex")))
            try rex.setValue(.int(4), forKey: "age")
            try rex.setValue(.null, forKey: "weight")
            let tags = try rex.dynamicList("tags")
            try tags.insert(.string("x"), at: 1)
            try tags.remove(at: 0)
            try tags.move(from: 2, to: 0)
            try tags.replace(index: 1, with: .string("y"))
            _ = try rex.dynamicMutableSet("toys").insert(.string("bone"))
            _ = try rex.dynamicMutableSet("toys").remove(.string("ball"))
            _ = try rex.dynamicMap("scores").removeValue(forKey: "agility")
            try rex.dynamicMap("scores").setValue(.int(7), forKey: "speed")
            try a.delete(try XCTUnwrap(try a.dynamicObject(ofType: "Dog", forPrimaryKey: .string("fido"))))
        }
        try b.applyDownload(try queued(a), cursor: 2)
        XCTAssertEqual(try picture(b), try picture(a))
        let shownb = try picture(b); XCTAssertTrue(shownb.contains(#"tags=["c","y","b"]"#), shownb)
    }

    func testConcurrentEditsConvergeWhicheverWayTheyTravel() throws {
        let a = try open("a.cove"), b = try open("b.cove"), c = try open("c.cove")
        defer { a.close(); b.close(); c.close() }
        try a.write {
            let rex = try a.dynamicCreate("Dog", primaryKey: .string("rex"), values: [("age", .int(1))])
            try rex.dynamicList("tags").append(.string("first"))
        }
        let base = try queued(a)
        try a.acknowledgeUploads(upTo: 1)
        try b.applyDownload(base, cursor: 1)
        // Both edit the same object while apart.
        try a.write {
            let rex = try XCTUnwrap(try a.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex")))
            try rex.setValue(.int(2), forKey: "age")
            try rex.dynamicList("tags").append(.string("from a"))
            _ = try rex.dynamicMutableSet("toys").insert(.string("ball"))
        }
        usleep(2000)
        try b.write {
            let rex = try XCTUnwrap(try b.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex")))
            try rex.setValue(.int(3), forKey: "age")
            try rex.dynamicList("tags").append(.string("from b"))
            try rex.dynamicList("tags").remove(at: 0)
            try b.dynamicCreate("Person", primaryKey: .int(7), values: [("name", .string("Bo"))])
        }
        let fromA = try queued(a), fromB = try queued(b)
        try a.applyDownload(fromB, cursor: 2)
        try b.applyDownload(fromA, cursor: 2)
        // A third file gets everything in the other order, one changeset applied twice.
        try c.applyDownload(fromB + base, cursor: 1)
        try c.applyDownload(fromA + fromA, cursor: 2)
        let pa = try picture(a), pb = try picture(b), pc = try picture(c)
        XCTAssertEqual(pa, pb)
        XCTAssertEqual(pa, pc)
        // b wrote later: its age wins; both inserts survive; the removal of "first" holds.
        XCTAssertTrue(pa.contains("age=3"), pa)
        XCTAssertTrue(pa.contains("from a") && pa.contains("from b") && !pa.contains("first"), pa)
        XCTAssertTrue(pa.contains(#"toys=<"ball">"#), pa)
    }

    func testADeleteBeatsAConcurrentUpdateAndALinkWaitsForItsTarget() throws {
        let a = try open("a.cove"), b = try open("b.cove")
        defer { a.close(); b.close() }
        try a.write { try a.dynamicCreate("Dog", primaryKey: .string("rex"), values: [("age", .int(1))]) }
        try b.applyDownload(try queued(a), cursor: 1)
        try a.acknowledgeUploads(upTo: 1)
        try b.write {
            try b.delete(try XCTUnwrap(try b.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex"))))
        }
        usleep(2000)
        try a.write {
            try XCTUnwrap(try a.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex"))).setValue(.int(9), forKey: "age")
            // A dog whose owner exists only in a's file so far.
            let p = try a.dynamicCreate("Person", primaryKey: .int(5), values: [("name", .string("Cy"))])
            try a.dynamicCreate("Dog", primaryKey: .string("spot"), values: [("owner", .link(p.link))])
        }
        let fromA = try queued(a)
        try a.applyDownload(try queued(b), cursor: 2)
        // b gets the dog before its owner: the link waits, then shows.
        let ops = fromA.flatMap(\.operations)
        let dogOps = ops.filter { $0.object.className == "Dog" }, personOps = ops.filter { $0.object.className == "Person" }
        let node = fromA[0].clientId
        let first = try Changeset(clientId: node, clientVersion: 2, clock: dogOps.last!.clock, operations: dogOps)
        let second = try Changeset(clientId: node, clientVersion: 2, clock: personOps.last!.clock, operations: personOps)
        try b.applyDownload([first], cursor: 2)
        let shownb = try picture(b); XCTAssertTrue(shownb.contains("name=\"spot\" age=0 weight=null owner=null"), shownb)
        try b.applyDownload([second], cursor: 3)
        XCTAssertEqual(try picture(a), try picture(b))
        let shownA = try picture(a); XCTAssertFalse(shownA.contains("rex"), shownA)
        let shownB = try picture(b); XCTAssertTrue(shownB.contains(#"owner=>"Cy" 5"#), shownB)
    }

    func testLinksToADeletedObjectWaitAndShowAgainWhenItComesBack() throws {
        let a = try open("a.cove"), b = try open("b.cove")
        defer { a.close(); b.close() }
        try a.write {
            let p = try a.dynamicCreate("Person", primaryKey: .int(5), values: [("name", .string("Cy"))])
            let fido = try a.dynamicCreate("Dog", primaryKey: .string("fido"))
            let rex = try a.dynamicCreate("Dog", primaryKey: .string("rex"), values: [("owner", .link(p.link))])
            try rex.dynamicList("friends").append(.link(fido.link))
            try rex.dynamicList("friends").append(.link(rex.link))
        }
        try b.applyDownload(try queued(a), cursor: 1)
        try a.acknowledgeUploads(upTo: 1)
        // b deletes the owner and a friend: rex's link and list lose them in both files...
        try b.write {
            try b.delete(try XCTUnwrap(try b.dynamicObject(ofType: "Person", forPrimaryKey: .int(5))))
            try b.delete(try XCTUnwrap(try b.dynamicObject(ofType: "Dog", forPrimaryKey: .string("fido"))))
        }
        let deletes = try queued(b)
        XCTAssertEqual(deletes.flatMap(\.operations).map(\.change.kindName), ["delete", "delete"],
                       "the links nulled with their targets are not changes of their own")
        try a.applyDownload(deletes, cursor: 2)
        let shownA = try picture(a)
        XCTAssertTrue(shownA.contains(#"friends=["rex"] "#) && shownA.contains("owner=null"), shownA)
        XCTAssertEqual(shownA, try picture(b))
        // ...and show them again when they come back, made anew by either side.
        try a.write {
            try a.dynamicCreate("Person", primaryKey: .int(5), values: [("name", .string("Cy again"))])
            try a.dynamicCreate("Dog", primaryKey: .string("fido"))
        }
        let shownAgain = try picture(a)
        XCTAssertTrue(shownAgain.contains(#"friends=["fido","rex"]"#) && shownAgain.contains(#"owner=>"Cy again" 5"#), shownAgain)
        try b.applyDownload(try queued(a), cursor: 3)
        XCTAssertEqual(try picture(b), shownAgain)
    }

    func testChangesThisFileCannotHoldAreSkippedNotFatal() throws {
        let b = try open("b.cove")
        defer { b.close() }
        // Another client's schema: Dog keyed by int, Person's name an int, tags of ints.
        let node: UInt64 = 77
        let source = SyncClockSource(node: node)
        var builder = ChangesetBuilder(clock: source, version: 1)
        let wall = SyncClockSource.systemWall()
        let dog = try SyncObjectRef(className: "Dog", key: .int(5))
        let person = try SyncObjectRef(className: "Person", key: .int(9))
        let unknown = try SyncObjectRef(className: "Cat", key: .int(1))
        _ = try builder.append(dog, .create(values: ["age": .int(2)]), wall: wall)
        _ = try builder.append(person, .create(values: ["name": .int(3)]), wall: wall)
        _ = try builder.append(person, .listInsert(property: "tags", position: try ListPosition.between(nil, nil, node: node), value: .int(1)), wall: wall)
        _ = try builder.append(unknown, .create(values: [:]), wall: wall)
        let rex = try SyncObjectRef(className: "Dog", key: .string("rex"))
        _ = try builder.append(rex, .create(values: ["age": .string("old"), "weight": .decimal128(try SyncDecimal128("1.5"))]), wall: wall)
        try b.applyDownload([try builder.finish(wall: wall)], cursor: 4)
        let shown = try picture(b)
        XCTAssertTrue(shown.contains(#"Person id=9 name="""#), shown)
        XCTAssertTrue(shown.contains(#"Dog name="rex" age=0 weight=null"#), shown)
        XCTAssertEqual(try b.dynamicObjects("Dog").count, 1)
        XCTAssertEqual(try b.syncRecord().downloadCursor, 4)
    }

    func testALargeWriteGoesOutAsSeveralChangesetsAndArrivesWhole() throws {
        let a = try open("a.cove"), b = try open("b.cove")
        defer { a.close(); b.close() }
        let n = 10_050
        try a.write {
            for i in 0..<n { try a.dynamicCreate("Person", primaryKey: .int(Int64(i)), values: [("name", .string("p\(i)"))]) }
        }
        let changesets = try queued(a)
        XCTAssertEqual(changesets.map(\.clientVersion), [1, 2])
        XCTAssertEqual(changesets.map(\.operations.count), [10_000, n - 10_000])
        XCTAssertLessThan(changesets[0].clock, changesets[1].operations[0].clock)
        // Applied in two transactions, the cursor recorded by the last.
        let before = try b.syncRecord().downloadCursor
        try b.applyDownload(changesets, cursor: 9)
        XCTAssertEqual(before, 0)
        XCTAssertEqual(try b.syncRecord().downloadCursor, 9)
        XCTAssertEqual(try b.dynamicObjects("Person").count, n)
        XCTAssertEqual(try b.dynamicObject(ofType: "Person", forPrimaryKey: .int(Int64(n - 1))).map { try $0["name"] }, .string("p\(n - 1)"))
    }

    func testSyncRefusesSchemasItCannotCarryAndBadSettings() throws {
        func openWith(_ json: String, _ sync: SyncConfiguration) throws {
            _ = try Realm(configuration: Realm.Configuration(path: "\(folder)/x\(UInt32.random(in: 0...1_000_000)).cove",
                                                            schema: try Schema(jsonText: json), syncConfiguration: sync))
        }
        let ok = SyncConfiguration(url: "http://127.0.0.1:9", token: "t", startsConnected: false)
        assertThrows(.schema, containing: "has no primary key") { try openWith(#"{"A": {"properties": {"x": "int"}}}"#, ok) }
        assertThrows(.schema, containing: "embedded") {
            try openWith(#"{"A": {"primaryKey": "id", "properties": {"id": "int", "e": "E?"}}, "E": {"embedded": true, "properties": {"x": "int"}}}"#, ok)
        }
        assertThrows(.invalidArgument, containing: "http://") {
            try openWith(#"{"A": {"primaryKey": "id", "properties": {"id": "int"}}}"#, SyncConfiguration(url: "ftp://x", token: "t"))
        }
        assertThrows(.invalidArgument, containing: "token") {
            try openWith(#"{"A": {"primaryKey": "id", "properties": {"id": "int"}}}"#, SyncConfiguration(url: "http://example.com", token: "a b"))
        }
    }

    // MARK: Through a server

    private func server() throws -> (url: String, token: String) {
        let s = try SyncTestServer.fromEnvironment()
        return (s.url, s.token)
    }

    func testTwoFilesSyncThroughTheServer() throws {
        let (url, token) = try server()
        let a = try open("a.cove", url: url, token: token, connected: true)
        let b = try open("b.cove", url: url, token: token, connected: true)
        defer { a.close(); b.close() }
        let tag = "t\(UInt32.random(in: 0...UInt32.max))"
        try a.write {
            let rex = try a.dynamicCreate("Dog", primaryKey: .string("rex-\(tag)"), values: [("age", .int(3))])
            try rex.dynamicList("tags").append(.string(tag))
        }
        try a.syncSession!.wait(for: .upload, timeout: 30)
        XCTAssertEqual(a.syncSession!.progress.uploadedVersion, a.syncSession!.progress.localVersion)
        try b.syncSession!.wait(for: .download, timeout: 30)
        try b.refresh()
        let rex = try XCTUnwrap(try b.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex-\(tag)")))
        XCTAssertEqual(try rex["age"], .int(3))
        XCTAssertEqual(try rex.dynamicList("tags").values(), [.string(tag)])
        // And back.
        try b.write { try rex.setValue(.int(4), forKey: "age") }
        try b.syncSession!.wait(for: .upload, timeout: 30)
        try a.syncSession!.wait(for: .download, timeout: 30)
        try a.refresh()
        XCTAssertEqual(try a.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex-\(tag)")).map { try $0["age"] }, .int(4))
        XCTAssertEqual(a.syncSession!.state, .active)
        XCTAssertEqual(a.syncSession!.connectionState, .connected)
    }

    /// A file synced by `a`, copied, then written on by `a` again: the copy is an older copy of
    /// the file (the server holds more of its changesets than it made).
    private func olderCopy(_ url: String, _ token: String, tag: String) throws {
        let base = Int64(tag.dropFirst()) ?? 0
        let a = try open("a.cove", url: url, token: token, connected: true)
        defer { a.close() }
        try a.write {
            try a.dynamicCreate("Person", primaryKey: .int(base * 10 + 1), values: [("name", .string("Ann"))])
            let rex = try a.dynamicCreate("Dog", primaryKey: .string("rex-\(tag)"), values: [("age", .int(3))])
            try rex.dynamicList("tags").append(.string("a"))
        }
        try a.syncSession!.wait(for: .upload, timeout: 30)
        try a.writeCopy(toFile: "\(folder)/backup.cove")
        try a.write {
            try a.dynamicCreate("Person", primaryKey: .int(base * 10 + 2), values: [("name", .string("Bo"))])
            try a.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex-\(tag)"))!.dynamicList("tags").append(.string("b"))
        }
        try a.syncSession!.wait(for: .upload, timeout: 30)
    }

    /// The copy, opened paused, writes before it reaches the server.
    private func writeOffline(_ realm: Realm, tag: String) throws {
        try realm.write {
            try realm.dynamicCreate("Person", primaryKey: .int((Int64(tag.dropFirst()) ?? 0) * 10 + 3), values: [("name", .string("Cy"))])
            let rex = try realm.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex-\(tag)"))!
            try rex.dynamicList("tags").append(.string("c"))
            try rex.setValue(.int(7), forKey: "age")
        }
    }

    func testAnOlderCopyOfASyncedFileRecoversWhatItHadNotUploaded() throws {
        let (url, token) = try server()
        let tag = "t\(UInt32.random(in: 0...UInt32.max))"
        // Another file, there from the start (a new file downloads what comes after it binds).
        let other = try open("other.cove", url: url, token: token, connected: true)
        defer { other.close() }
        try other.syncSession!.wait(for: .download, timeout: 30)
        try olderCopy(url, token, tag: tag)
        let restored = try open("backup.cove", url: url, token: token)
        defer { restored.close() }
        let before = try XCTUnwrap(try restored.syncFileStatus()).clientFileId
        try writeOffline(restored, tag: tag)
        restored.syncSession!.resume()
        try restored.syncSession!.wait(for: .upload, timeout: 30)
        try restored.syncSession!.wait(for: .download, timeout: 30)
        XCTAssertEqual(restored.syncSession!.clientResetCount, 1)
        XCTAssertTrue(restored.syncSession!.lastClientReset?.contains("older copy") ?? false)
        try restored.refresh()
        XCTAssertNotEqual(try restored.syncFileStatus()?.clientFileId, before, "a new id")
        XCTAssertEqual(restored.syncSession!.state, .active)
        // The other file sees what the copy wrote offline and what the original wrote after it.
        try other.syncSession!.wait(for: .download, timeout: 30)
        try other.refresh()
        let rex = try XCTUnwrap(try other.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex-\(tag)")))
        XCTAssertEqual(try rex["age"], .int(7))
        XCTAssertEqual(Set(try rex.dynamicList("tags").values().map { "\($0)" }), Set(["a", "b", "c"].map { "\(Value.string($0))" }))
        let base = Int64(tag.dropFirst()) ?? 0
        XCTAssertEqual(try other.dynamicObject(ofType: "Person", forPrimaryKey: .int(base * 10 + 3))?["name"], .string("Cy"))
        XCTAssertEqual(try restored.dynamicObject(ofType: "Person", forPrimaryKey: .int(base * 10 + 2))?["name"], .string("Bo"))
        XCTAssertEqual(try picture(restored), try picture(other), "both files show the same")
    }

    func testAnOlderCopyDiscardsWhatItHadNotUploadedWhenAskedTo() throws {
        let (url, token) = try server()
        let tag = "t\(UInt32.random(in: 0...UInt32.max))"
        try olderCopy(url, token, tag: tag)
        let restored = try open("backup.cove", url: url, token: token, reset: .discardUnsyncedChanges)
        defer { restored.close() }
        try writeOffline(restored, tag: tag)
        restored.syncSession!.resume()
        try restored.syncSession!.wait(for: .download, timeout: 30)
        try restored.syncSession!.wait(for: .upload, timeout: 30)
        try restored.refresh()
        XCTAssertEqual(restored.syncSession!.clientResetCount, 1)
        let rex = try XCTUnwrap(try restored.dynamicObject(ofType: "Dog", forPrimaryKey: .string("rex-\(tag)")))
        XCTAssertEqual(try rex["age"], .int(3), "the offline write is dropped: the server's state came back")
        XCTAssertEqual(try rex.dynamicList("tags").values(), [.string("a"), .string("b")])
        XCTAssertEqual(try restored.dynamicObject(ofType: "Person", forPrimaryKey: .int((Int64(tag.dropFirst()) ?? 0) * 10 + 2))?["name"], .string("Bo"))
        XCTAssertNil(try restored.dynamicObject(ofType: "Person", forPrimaryKey: .int((Int64(tag.dropFirst()) ?? 0) * 10 + 3)))
    }

    func testAnOlderCopyIsStoppedNotLostInManualMode() throws {
        let (url, token) = try server()
        try olderCopy(url, token, tag: "t\(UInt32.random(in: 0...UInt32.max))")
        // The backup put back: it made one changeset, the server holds two of its id.
        let restored = try open("backup.cove", url: url, token: token, connected: true, reset: .manual)
        defer { restored.close() }
        XCTAssertThrowsError(try restored.syncSession!.wait(for: .upload, timeout: 20)) { error in
            XCTAssertEqual((error as? CoveError)?.code, .sync)
            XCTAssertTrue("\(error)".contains("older copy"), "\(error)")
        }
        XCTAssertEqual(restored.syncSession!.state, .inactive)
        XCTAssertEqual(restored.syncSession!.clientResetCount, 0)
    }

    func testAServerThatLostHistoryResetsTheFile() throws {
        let (url, token) = try server()
        // A file that has downloaded further than the server's history goes.
        let a = try open("a.cove")
        try a.write { try a.dynamicCreate("Person", primaryKey: .int(Int64.random(in: 1_000...1 << 40)), values: [("name", .string("kept"))]) }
        try a.applyDownload([], cursor: 1 << 40)
        a.close()
        let b = try open("a.cove", url: url, token: token, connected: true)
        defer { b.close() }
        try b.syncSession!.wait(for: .download, timeout: 30)
        try b.syncSession!.wait(for: .upload, timeout: 30)
        XCTAssertEqual(b.syncSession!.clientResetCount, 1)
        XCTAssertTrue(b.syncSession!.lastClientReset?.contains("lost history") ?? false)
        try b.refresh()
        XCTAssertLessThan(try b.syncRecord().downloadCursor, 1 << 40)
        XCTAssertEqual(b.syncSession!.state, .active)
        let manual = try open("m.cove")
        try manual.applyDownload([], cursor: 1 << 40)
        manual.close()
        let stopped = try open("m.cove", url: url, token: token, connected: true, reset: .manual)
        defer { stopped.close() }
        XCTAssertThrowsError(try stopped.syncSession!.wait(for: .download, timeout: 20)) { error in
            XCTAssertTrue("\(error)".contains("lost history"), "\(error)")
        }
        XCTAssertEqual(stopped.syncSession!.state, .inactive)
    }

    func testAWrongTokenStopsTheSessionWithItsError() throws {
        let (url, _) = try server()
        let a = try open("a.cove", url: url, token: "not-a-token", connected: true)
        defer { a.close() }
        XCTAssertThrowsError(try a.syncSession!.wait(for: .upload, timeout: 20)) { error in
            XCTAssertEqual((error as? CoveError)?.code, .sync)
            XCTAssertTrue("\(error)".contains("refused"), "\(error)")
        }
        XCTAssertEqual(a.syncSession!.state, .inactive)
        XCTAssertTrue(a.syncSession!.lastError?.message.contains("unauthorized") ?? false, "\(String(describing: a.syncSession!.lastError))")
    }

    func testAnUnreachableServerKeepsWritesQueued() throws {
        let a = try open("a.cove", url: "http://127.0.0.1:9", connected: true)
        defer { a.close() }
        try a.write { try a.dynamicCreate("Person", primaryKey: .int(1), values: [("name", .string("Ann"))]) }
        XCTAssertThrowsError(try a.syncSession!.wait(for: .upload, timeout: 1)) { error in
            XCTAssertEqual((error as? CoveError)?.code, .sync)
            XCTAssertTrue("\(error)".contains("did not finish within"), "\(error)")
        }
        XCTAssertEqual(a.syncSession!.state, .active)
        XCTAssertEqual(try queued(a).count, 1)
        XCTAssertTrue(a.syncSession!.lastError?.message.contains("cannot reach") ?? false, "\(String(describing: a.syncSession!.lastError))")
    }
}
