// Convergence under random histories: 3 to 5 simulated clients, each with its own skewed and
// sometimes backwards wall clock, write to the same few objects (creates, updates, deletes and
// re-creates, list inserts at the same places, moves, removals, set adds and removes of the same
// values, map writes and removals of the same keys), exchanging changesets now and then. Then
// replicas that receive every changeset in different orders, some twice, must show the same.
import XCTest
import CoveSyncCore

final class ConvergenceTests: XCTestCase {
    private struct Client {
        let id: UInt64
        let source: SyncClockSource
        var replica = SyncReplica()
        var version: UInt64 = 0
        /// How far this client's wall clock is off, in milliseconds.
        var skew: Int
        /// How many changesets of the shared log this client has applied (it reads them in order).
        var seen = 0
    }

    /// What a history exercised, so that a test can insist the interesting cases happened.
    private struct Tally {
        var deletes = 0
        var recreates = 0
        var listInserts = 0
        var moves = 0
        var setRemoves = 0
        var mapRemoves = 0
    }

    private let objects: [SyncObjectRef] = [ref("Item", .int(1)), ref("Item", .int(2)), ref("Item", .string("s")), ref("Tag", .int(1))]

    /// One random operation by `client`, chosen from what its replica shows.
    private func randomChange(_ random: inout SeededRandom, _ client: Client, _ tally: inout Tally) throws -> (SyncObjectRef, SyncOperation.Change) {
        let object = random.pick(objects)
        let alive = client.replica.contains(object)
        if !alive || random.chance(5) {
            if !alive { tally.recreates += 1 }
            var values: [String: SyncValue] = [:]
            if random.chance(70) { values["name"] = .string(random.pick(["a", "b", "c"])) }
            if random.chance(50) { values["count"] = .int(Int64(random.int(0...9))) }
            return (object, .create(values: values))
        }
        let list = "tags"
        let elements = client.replica.listElements(of: object, property: list)
        switch random.below(12) {
        case 0:
            tally.deletes += 1
            return (object, .delete)
        case 1, 2:
            return (object, .setProperty(random.pick(["name", "count"]), random.chance(20) ? .null : .int(Int64(random.int(0...99)))))
        case 3, 4, 5:
            // Often at the front or the end, where concurrent inserts meet.
            let at = random.chance(50) ? random.pick([0, elements.count]) : random.int(0...elements.count)
            let before = at > 0 ? elements[at - 1].position : nil
            let after = at < elements.count ? elements[at].position : nil
            tally.listInserts += 1
            return (object, .listInsert(property: list, position: try ListPosition.between(before, after, node: client.id),
                                        value: .int(Int64(random.int(0...999)))))
        case 6 where !elements.isEmpty:
            return (object, .listRemove(property: list, element: random.pick(elements).id))
        case 7 where elements.count > 1:
            let element = random.pick(elements)
            let others = elements.filter { $0.id != element.id }
            let at = random.int(0...others.count)
            tally.moves += 1
            return (object, .listMove(property: list, element: element.id,
                                      position: try ListPosition.between(at > 0 ? others[at - 1].position : nil,
                                                                         at < others.count ? others[at].position : nil, node: client.id)))
        case 8 where !elements.isEmpty:
            return (object, .listSet(property: list, element: random.pick(elements).id, value: .string(random.pick(["x", "y"]))))
        case 9:
            if random.chance(50) { return (object, .setAdd(property: "labels", value: .int(Int64(random.int(1...3))))) }
            tally.setRemoves += 1
            return (object, .setRemove(property: "labels", value: .int(Int64(random.int(1...3)))))
        default:
            let key = random.pick(["k", "\u{E9}", "e\u{301}"])
            if random.chance(60) { return (object, .mapSet(property: "attrs", key: key, value: random.value())) }
            tally.mapRemoves += 1
            return (object, .mapRemove(property: "attrs", key: key))
        }
    }

    /// A random history of `rounds` changesets by `clientCount` clients.
    private func history(seed: UInt64, clientCount: Int, rounds: Int, tally: inout Tally) throws -> (log: [Changeset], clients: [Client]) {
        var random = SeededRandom(seed: seed)
        var clients = (0..<clientCount).map { i in
            Client(id: UInt64(i + 1) * 0x1_0000_0001, source: SyncClockSource(node: UInt64(i + 1) * 0x1_0000_0001), skew: random.int(-40...40))
        }
        var log: [Changeset] = []
        var now: UInt64 = 1_700_000_000_000
        for _ in 0..<rounds {
            now += UInt64(random.int(0...3))
            let c = random.below(clientCount)
            // Now and then a wall clock jumps back (or forward) a little.
            if random.chance(5) { clients[c].skew += random.int(-30...30) }
            // Catch up on part of what the others wrote.
            if random.chance(40) {
                let upTo = random.int(clients[c].seen...log.count)
                for changeset in log[clients[c].seen..<upTo] {
                    clients[c].replica.apply(changeset)
                    try clients[c].source.receive(changeset.clock, wall: now)
                }
                clients[c].seen = upTo
            }
            let wall = UInt64(Int(now) + clients[c].skew)
            clients[c].version += 1
            var builder = ChangesetBuilder(clock: clients[c].source, version: clients[c].version)
            var local = clients[c]
            for _ in 0..<random.int(1...4) {
                let (object, change) = try randomChange(&random, local, &tally)
                let clock = try builder.append(object, change, wall: wall)
                local.replica.apply(try SyncOperation(clock: clock, object: object, change: change))
            }
            let changeset = try builder.finish(wall: wall)
            clients[c].replica = local.replica
            clients[c].replica.apply(changeset)
            log.append(changeset)
        }
        return (log, clients)
    }

    func testReplicasConvergeWhateverTheOrder() throws {
        var tally = Tally()
        var random = SeededRandom(seed: 2024)
        var objectsSeen = 0
        for seed in 1...60 {
            let clientCount = 3 + Int(seed % 3)
            let (log, clients) = try history(seed: UInt64(seed), clientCount: clientCount, rounds: 80, tally: &tally)
            // Each client catches up on everything it has not seen: all must agree.
            var expected: SyncSnapshot? = nil
            for var client in clients {
                for changeset in log[client.seen...] { client.replica.apply(changeset) }
                let snapshot = client.replica.snapshot()
                if let expected { XCTAssertEqual(snapshot, expected, "seed \(seed): client \(client.id) differs") }
                expected = snapshot
            }
            // Fresh replicas, each receiving every changeset in another order, about one in five
            // of them twice.
            for replicaIndex in 0..<4 {
                var deliveries = log.shuffled(using: &random)
                for changeset in log where random.chance(20) {
                    deliveries.insert(changeset, at: random.int(0...deliveries.count))
                }
                var replica = SyncReplica()
                for changeset in deliveries { replica.apply(changeset) }
                XCTAssertEqual(replica.snapshot(), expected, "seed \(seed): replica \(replicaIndex) differs:\n\(replica.snapshot())\nvs\n\(expected?.description ?? "")")
            }
            objectsSeen += expected?.objects.count ?? 0
        }
        // The histories exercised every rule.
        XCTAssertGreaterThan(objectsSeen, 60)
        XCTAssertGreaterThan(tally.deletes, 50)
        XCTAssertGreaterThan(tally.recreates, 50)
        XCTAssertGreaterThan(tally.listInserts, 200)
        XCTAssertGreaterThan(tally.moves, 20)
        XCTAssertGreaterThan(tally.setRemoves, 20)
        XCTAssertGreaterThan(tally.mapRemoves, 20)
    }

    func testApplyingTheLogInBatchesOfAnyGroupingAgrees() throws {
        // Associativity in practice: a replica that merges the log as two halves built apart
        // (each replica then receiving the other's changesets) ends where one replica does.
        var tally = Tally()
        let (log, _) = try history(seed: 77, clientCount: 4, rounds: 80, tally: &tally)
        var whole = SyncReplica()
        for changeset in log { whole.apply(changeset) }
        for split in stride(from: 0, through: log.count, by: 10) {
            var left = SyncReplica(), right = SyncReplica()
            for changeset in log[..<split] { left.apply(changeset) }
            for changeset in log[split...] { right.apply(changeset) }
            for changeset in log[split...].reversed() { left.apply(changeset) }
            for changeset in log[..<split].reversed() { right.apply(changeset) }
            XCTAssertEqual(left.snapshot(), whole.snapshot(), "split at \(split)")
            XCTAssertEqual(right.snapshot(), whole.snapshot(), "split at \(split)")
        }
    }
}
