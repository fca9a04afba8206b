// SyncObjectState, the per-object merge state a client file keeps: its binary form gives back
// a state that shows the same and merges the same, for random operations of every kind and
// values of every type; every truncation and a changed first byte are refused, not trapped on.
import XCTest
import CoveSyncCore

final class ObjectStateTests: XCTestCase {
    private let object = ref("Item", .string("one"))

    private func randomOperation(_ random: inout SeededRandom, _ state: SyncObjectState, _ source: SyncClockSource) throws -> SyncOperation {
        let elements = state.listElements("tags")
        let change: SyncOperation.Change
        switch random.below(11) {
        case 0: change = .create(values: random.chance(50) ? ["name": random.value()] : [:])
        case 1: change = .delete
        case 2, 3: change = .setProperty(random.pick(["name", "count", "link"]), random.value())
        case 4, 5:
            // At either end (the merge rules' tests cover positions between neighbours).
            let position = random.chance(50) ? try ListPosition.between(elements.last?.position, nil, node: source.node)
                                             : try ListPosition.between(nil, elements.first?.position, node: source.node)
            change = .listInsert(property: "tags", position: position, value: random.value())
        case 6 where !elements.isEmpty: change = .listRemove(property: "tags", element: random.pick(elements).id)
        case 7 where !elements.isEmpty:
            change = .listMove(property: "tags", element: random.pick(elements).id,
                               position: try ListPosition.between(elements.last?.position, nil, node: source.node))
        case 8 where !elements.isEmpty: change = .listSet(property: "tags", element: random.pick(elements).id, value: random.value())
        case 9: change = random.chance(50) ? .setAdd(property: "marks", value: random.value()) : .setRemove(property: "marks", value: random.value())
        default:
            let key = random.pick(["k", "\u{E9}", "e\u{301}"])
            change = random.chance(60) ? .mapSet(property: "attrs", key: key, value: random.value()) : .mapRemove(property: "attrs", key: key)
        }
        return try SyncOperation(clock: try source.now(wall: UInt64(1_700_000_000_000 + random.int(0...5))), object: object, change: change)
    }

    private func shown(_ s: SyncObjectState) -> String {
        var parts = ["exists=\(s.exists)"]
        for name in ["name", "count", "link"] { parts.append("\(name)=\(s.property(name).map { "\($0)" } ?? "-")") }
        parts.append("tags=\(s.listElements("tags").map { "\($0.id)/\($0.position)/\($0.value)" })")
        parts.append("marks=\(s.setValues("marks"))")
        parts.append("attrs=\(s.mapEntries("attrs").map { "\($0.key)=\($0.value)" })")
        return parts.joined(separator: " ")
    }

    func testTheBinaryFormShowsAndMergesAsTheState() throws {
        for seed in 0..<40 {
            var random = SeededRandom(seed: UInt64(seed))
            let a = SyncClockSource(node: 7), b = SyncClockSource(node: 9)
            var state = SyncObjectState()
            for _ in 0..<random.int(0...60) { state.apply(try randomOperation(&random, state, random.chance(50) ? a : b)) }
            let bytes = state.binary()
            var copy = try SyncObjectState(binary: bytes)
            XCTAssertEqual(shown(copy), shown(state), "seed \(seed)")
            XCTAssertEqual(try SyncObjectState(binary: copy.binary()).binary().count, bytes.count)
            // Both merge what comes next alike.
            for _ in 0..<10 {
                let op = try randomOperation(&random, state, b)
                state.apply(op)
                copy.apply(op)
            }
            XCTAssertEqual(shown(copy), shown(state), "seed \(seed), after more")
            // Damage is refused.
            for cut in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 50)) {
                XCTAssertThrowsError(try SyncObjectState(binary: Array(bytes.prefix(cut))), "seed \(seed), cut at \(cut)")
            }
            var changed = bytes
            changed[0] = 2
            XCTAssertThrowsError(try SyncObjectState(binary: changed))
            XCTAssertThrowsError(try SyncObjectState(binary: bytes + [0]))
        }
    }

    /// Two replicas that saw different parts of a history, merged as whole states (what a server
    /// sends a subscribed client), show what one replica that saw all of it shows, in either
    /// order, merged twice or not.
    func testMergingStatesIsTheStateOfAllTheirOperations() throws {
        for seed in 0..<40 {
            var random = SeededRandom(seed: UInt64(1000 + seed))
            let a = SyncClockSource(node: 7), b = SyncClockSource(node: 9)
            var left = SyncObjectState(), right = SyncObjectState(), all = SyncObjectState()
            for _ in 0..<random.int(0...80) {
                let toLeft = random.chance(50)
                let op = try randomOperation(&random, toLeft ? left : right, toLeft ? a : b)
                all.apply(op)
                if toLeft { left.apply(op) } else { right.apply(op) }
                if random.chance(10) { if toLeft { right.apply(op) } else { left.apply(op) } }
            }
            var leftThenRight = left
            leftThenRight.merge(right)
            var rightThenLeft = right
            rightThenLeft.merge(left)
            rightThenLeft.merge(left)
            XCTAssertEqual(shown(leftThenRight), shown(all), "seed \(seed)")
            XCTAssertEqual(shown(rightThenLeft), shown(all), "seed \(seed)")
            XCTAssertEqual(try SyncObjectState(binary: leftThenRight.binary()).binary().count, all.binary().count, "seed \(seed)")
        }
    }
}
