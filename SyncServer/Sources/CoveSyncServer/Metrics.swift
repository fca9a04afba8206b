// The server's counters, served at /metrics in Prometheus's text format.
import Synchronization

/// Counts of what the server did since it started.
public final class ServerMetrics: Sendable {
    let requests = Atomic<Int>(0)
    let binds = Atomic<Int>(0)
    let refused = Atomic<Int>(0)
    let uploads = Atomic<Int>(0)
    let changesets = Atomic<Int>(0)
    let downloads = Atomic<Int>(0)
    let subscriptionSets = Atomic<Int>(0)
    let bootstraps = Atomic<Int>(0)

    public init() {}

    /// The counters and `clients` (client files bound, from the database) as Prometheus text.
    func rendered(clients: Int?, waiting: Int) -> String {
        var lines: [String] = []
        func metric(_ name: String, _ kind: String, _ help: String, _ value: Int) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) \(kind)")
            lines.append("\(name) \(value)")
        }
        metric("cove_sync_requests_total", "counter", "HTTP requests received.", requests.load(ordering: .relaxed))
        metric("cove_sync_binds_total", "counter", "Client files bound.", binds.load(ordering: .relaxed))
        metric("cove_sync_refused_total", "counter", "Requests answered with an error.", refused.load(ordering: .relaxed))
        metric("cove_sync_uploads_total", "counter", "Upload requests served.", uploads.load(ordering: .relaxed))
        metric("cove_sync_changesets_total", "counter", "Changesets added to the history by uploads.", changesets.load(ordering: .relaxed))
        metric("cove_sync_downloads_total", "counter", "Download requests served.", downloads.load(ordering: .relaxed))
        metric("cove_sync_subscription_sets_total", "counter", "Subscription sets stored.", subscriptionSets.load(ordering: .relaxed))
        metric("cove_sync_bootstraps_total", "counter", "Bootstrap batches served.", bootstraps.load(ordering: .relaxed))
        metric("cove_sync_waiting_downloads", "gauge", "Downloads waiting for a commit now.", waiting)
        if let clients { metric("cove_sync_clients", "gauge", "Client files the database holds.", clients) }
        return lines.joined(separator: "\n") + "\n"
    }
}
