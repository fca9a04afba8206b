// `cove watch FILE CLASS 'query'`: prints the matches' change sets as other processes commit,
// one JSON line per delivery, until interrupted (or after --changes deliveries, or --seconds).
import ArgumentParser
import Cove
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

    @Option(help: "Stop after this many change sets (default: never).")
    var changes: Int?

    @Option(help: "Stop after this many seconds (default: never).")
    var seconds: Double?

    func run() throws {
        do {
            let realm = try Realm(configuration: .init(path: file, readOnly: true))
            defer { realm.close() }
            let results = try realm.objects(className).filter(query)
            var delivered = 0
            var failure: CoveError?
            let paths = keyPaths.map { $0.split(separator: ",").map { String($0).trimmingSpaces() } }
            let token = try results.observe(keyPaths: paths) { change in
                switch change {
                case .initial:
                    print(#"{"initial":"# + String((try? results.count()) ?? 0) + "}")
                case .update(let c):
                    delivered += 1
                    var line = #"{"deletions":\#(c.deletions),"insertions":\#(c.insertions),"modifications":\#(c.modifications)"#
                    if let keys = try? results.objectKeys() {
                        line += #","inserted":"# + c.insertions.map { String(keys[$0]) }.description
                    }
                    print(line + "}")
                case .error(let e):
                    failure = e
                }
                fflush(nil)
            }
            defer { token.invalidate() }
            try realm.deliver()
            let deadline = seconds.map { Double(monotonicMilliseconds()) + $0 * 1000 }
            while failure == nil {
                if let changes, delivered >= changes { break }
                var wait: Int64 = 500
                if let deadline {
                    let left = deadline - Double(monotonicMilliseconds())
                    if left <= 0 { break }
                    wait = min(wait, Int64(left))
                }
                if try realm.waitForChange(timeoutMilliseconds: wait) { _ = try realm.refresh() }
            }
            if let failure { throw failure }
        } catch let error as CoveError {
            throw exitWith(error)
        }
    }
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
