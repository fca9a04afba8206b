// How a synced file reaches its server.

/// What a synced file does when it can no longer sync under its client file id: it is an older
/// copy of itself (a backup put back, a copy of a synced file), or it has downloaded further than
/// the server's history goes (the server's database put back from a backup, another server).
public enum ClientResetMode: String, Sendable, Equatable {
    /// Takes a new id, keeps its objects, and sends what the server never took again, on top of
    /// the server's state (the default, as realm-swift's).
    case recoverUnsyncedChanges
    /// Takes a new id and drops its synced objects and what it had not uploaded: the server's
    /// state comes back by downloads.
    case discardUnsyncedChanges
    /// Stops the session with the error that says why (`lastError`), changing nothing.
    case manual
}

/// The server a synced file syncs with, and who it syncs as (`Realm.Configuration.syncConfiguration`).
public struct SyncConfiguration: Sendable, Equatable {
    /// The server's base URL, `http://` or `https://` (`https://sync.example.com`).
    public var url: String
    /// The bearer token the server gave the user (`cove-sync-server token`).
    public var token: String
    /// A file of PEM certificates to trust instead of the system's, for a server whose
    /// certificate a private authority signed. nil: the system's certificates.
    public var trustedCertificatesPath: String?
    /// How long one request may take before the session gives it up and tries again, in seconds
    /// (a long-polling download waits up to `longPollSeconds` more).
    public var requestTimeout: Double
    /// How long a download waits at the server for news before it answers with nothing, in
    /// seconds (0 to 60).
    public var longPollSeconds: Int
    /// The most changesets a download applies in one write transaction, so that readers and
    /// notifications keep flowing while a large download arrives.
    public var changesetsPerTransaction: Int
    /// Whether the session connects when the realm opens (false: it starts paused, and
    /// `SyncSession.resume()` connects it).
    public var startsConnected: Bool
    /// What the file does when it can no longer sync under its client file id.
    public var clientResetMode: ClientResetMode

    public init(url: String, token: String, trustedCertificatesPath: String? = nil, requestTimeout: Double = 30,
                longPollSeconds: Int = 25, changesetsPerTransaction: Int = 1000, startsConnected: Bool = true,
                clientResetMode: ClientResetMode = .recoverUnsyncedChanges) {
        self.url = url
        self.token = token
        self.trustedCertificatesPath = trustedCertificatesPath
        self.requestTimeout = requestTimeout
        self.longPollSeconds = longPollSeconds
        self.changesetsPerTransaction = changesetsPerTransaction
        self.startsConnected = startsConnected
        self.clientResetMode = clientResetMode
    }

    /// Refuses settings out of range, naming them.
    func check() throws(CoveError) {
        let lower = url.lowercased()
        guard lower.hasPrefix("http://") || lower.hasPrefix("https://"), url.count > 8 else {
            throw CoveError(.invalidArgument, "sync URL '\(url)': expected http:// or https:// and a host")
        }
        if token.isEmpty { throw CoveError(.invalidArgument, "the sync token is empty") }
        if token.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) {
            throw CoveError(.invalidArgument, "the sync token has characters a bearer token cannot have")
        }
        guard requestTimeout > 0, requestTimeout <= 3600 else {
            throw CoveError(.invalidArgument, "sync request timeout \(requestTimeout) s: expected more than 0 and at most 3600")
        }
        guard (0...60).contains(longPollSeconds) else {
            throw CoveError(.invalidArgument, "sync long poll \(longPollSeconds) s: expected 0 to 60")
        }
        guard (1...100_000).contains(changesetsPerTransaction) else {
            throw CoveError(.invalidArgument, "sync changesets per transaction \(changesetsPerTransaction): expected 1 to 100000")
        }
    }
}

/// Where a synced file stands, as the file records it (`Realm.syncFileStatus()`).
public struct SyncFileStatus: Sendable, Equatable {
    /// The file's id at the server.
    public var clientFileId: String
    /// The changesets the file has made (the newest local version).
    public var localVersion: UInt64
    /// The newest local version the server holds; `localVersion - uploadedVersion` wait for
    /// upload.
    public var uploadedVersion: UInt64
    /// The server version the file has downloaded up to.
    public var downloadedVersion: UInt64
    /// The subscription set's version (0: the file has never subscribed, and downloads every
    /// change), where it stands, and its subscriptions.
    public var subscriptionVersion: UInt64
    public var subscriptionState: SyncSubscriptionState
    public var subscriptions: [SyncSubscription]
}

