// The sync server the sync client's tests talk to: the one the test command starts
// (.ci/sync-server.sh), found through the environment. Without it those tests fail, saying how
// to start one: a sync test that does not reach a server proves nothing.
import FoundationEssentials
@testable import CoveCore

struct SyncTestServer {
    var url: String
    var token: String
    /// The server's binary, its configuration and its PostgreSQL cluster's folder, for tests
    /// that start more instances or restart PostgreSQL.
    var binary: String
    var config: String
    var postgres: String

    static func fromEnvironment() throws -> SyncTestServer {
        let env = ProcessInfo.processInfo.environment
        let names = ["COVE_SYNC_TEST_URL", "COVE_SYNC_TEST_TOKEN", "COVE_SYNC_TEST_SERVER", "COVE_SYNC_TEST_CONFIG", "COVE_SYNC_TEST_POSTGRES"]
        let values = names.map { env[$0] ?? "" }
        if let missing = names.indices.first(where: { values[$0].isEmpty }) {
            throw CoveError(.sync, "no sync server given (\(names[missing]) is not set): the test command starts one; by hand, "
                + "eval \"$(.ci/sync-server.sh start /tmp/cove-sync)\" before swift test")
        }
        return SyncTestServer(url: values[0], token: values[1], binary: values[2], config: values[3], postgres: values[4])
    }
}
