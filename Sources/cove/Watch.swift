// `cove watch FILE CLASS 'query'`: prints the matches' change sets as other processes commit,
// one JSON line per delivery, until interrupted (or after --changes deliveries, or --seconds).
import ArgumentParser
import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

struct Watch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the change sets of a live query as other processes write to the file.")

    @Argument(help: "The Cove file.")
    var file: String

    @Argument(help: "The class of the objects.")
    var className: String

    @Argument(help: "The query (default: every object).")
    var query: String = "TRUEPREDICATE"

    @Option(help: "Key paths the changes are filtered on, comma-separated (default: every property).")
    var keyPaths: String?

    @Option(help: "Print section change sets, the matches sectioned by this property.")
    var sectionBy: String?

    @Option(help: "Stop after this many change sets (default: never).")
    var changes: Int?

    @Option(help: "Stop after this many seconds (default: never).")
    var seconds: Double?

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            let results = try realm.objects(className).filter(query)
            let state = WatchState()
            let paths = keyPaths.map { $0.split(separator: ",").map { String($0).trimmingSpaces() } }
            if let sectionBy {
                let sections = try results.sectioned(by: sectionBy)
                let token = try sections.observeChanges(keyPaths: paths) { change in
                    switch change {
                    case .initial:
                        let keys = ((try? sections.checkedAllKeys()) ?? []).map { JSONValue.string($0.description) }
                        print(JSONValue.object([JSONMember("initialSections", .array(keys))]).serialized())
                    case .update(let c):
                        state.delivered += 1
                        func paths(_ ps: [IndexPath]) -> JSONValue { .array(ps.map { .array([.int(Int64($0.section)), .int(Int64($0.row))]) }) }
                        print(JSONValue.object([
                            JSONMember("sectionsToDelete", .array(c.sectionsToDelete.map { .int(Int64($0)) })),
                            JSONMember("sectionsToInsert", .array(c.sectionsToInsert.map { .int(Int64($0)) })),
                            JSONMember("deletions", paths(c.deletions)), JSONMember("insertions", paths(c.insertions)),
                            JSONMember("modifications", paths(c.modifications)),
                        ]).serialized())
                    case .error(let e):
                        state.failure = e
                    }
                    fflush(nil)
                }
                defer { token.invalidate() }
                try loop(realm, state)
                return
            }
            let token = try results.observeChanges(keyPaths: paths) { change in
                switch change {
                case .initial:
                    print(#"{"initial":"# + String((try? results.checkedCount()) ?? 0) + "}")
                case .update(let c):
                    state.delivered += 1
                    var line = #"{"deletions":\#(c.deletions),"insertions":\#(c.insertions),"modifications":\#(c.modifications)"#
                    if let keys = try? results.objectKeys() {
                        line += #","inserted":"# + c.insertions.map { String(keys[$0]) }.description
                    }
                    print(line + "}")
                case .error(let e):
                    state.failure = e
                }
                fflush(nil)
            }
            defer { token.invalidate() }
            try loop(realm, state)
        }
    }

    /// Delivers, then waits for commits and refreshes until the count or time is reached.
    private func loop(_ realm: Realm, _ state: WatchState) throws {
        try realm.deliver()
        let deadline = seconds.map { Double(monotonicMilliseconds()) + $0 * 1000 }
        while state.failure == nil {
            if let changes, state.delivered >= changes { break }
            var wait: Int64 = 500
            if let deadline {
                let left = deadline - Double(monotonicMilliseconds())
                if left <= 0 { break }
                wait = min(wait, Int64(left))
            }
            if try realm.waitForChange(timeoutMilliseconds: wait) { _ = try realm.refresh() }
        }
        if let failure = state.failure { throw failure }
    }
}

/// What the callbacks of `cove watch` tell its loop.
final class WatchState {
    var delivered = 0
    var failure: CoveError?
}

func monotonicMilliseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
}

extension String {
    func trimmingSpaces() -> String {
        String(drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
    }
}
