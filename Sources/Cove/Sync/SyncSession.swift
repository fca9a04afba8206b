// A synced file's session: two threads of its own, one uploading the changesets the file's
// queue holds, one long-polling the server for others' changesets and applying them in write
// transactions of bounded size. Each opens a realm of its own on the file. A request that fails
// is tried again after a growing, jittered pause; a refusal that trying again cannot mend (a
// token the server does not accept, a file bound to another user) stops the session with its
// error. One session per file per process, shared by every realm of the file that syncs.
import CoveCore
import CoveSyncCore
import FoundationEssentials
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The background link between a synced file and its server (`Realm.syncSession`).
public final class SyncSession: @unchecked Sendable {
    /// Whether the session works.
    public enum State: String, Sendable {
        /// Uploading and downloading (or trying to reach the server).
        case active
        /// Paused by `pause()` or `SyncConfiguration.startsConnected`.
        case paused
        /// Stopped for good: its last realm closed, or the server refused it (`lastError`).
        case inactive
    }

    /// Whether the session reaches the server now.
    public enum ConnectionState: String, Sendable {
        case disconnected, connecting, connected
    }

    /// Where the session stands: how far uploads and downloads have come.
    public struct Progress: Sendable, Equatable {
        /// The newest local changeset version made (the file's own count).
        public var localVersion: UInt64
        /// The newest local changeset version the server holds.
        public var uploadedVersion: UInt64
        /// The server version the file has downloaded up to.
        public var downloadedVersion: UInt64
        /// The newest server version the session has heard of.
        public var serverVersion: UInt64
    }

    /// A write of this file the server refused and undid (its read and write rules, or an
    /// object outside the file's subscriptions): the server's own changeset brings the object
    /// back to the server's state through the next download.
    public struct CompensatingWrite: Sendable, Equatable {
        /// The object's class.
        public var objectClassName: String
        /// The object's primary key.
        public var primaryKey: Value
        /// Why, as the server says it (the rule, or that the object is outside the
        /// subscriptions).
        public var reason: String
        /// The entry as the server wrote it (`{"class", "key", "reason"}`), for the bindings.
        package var json: String = ""
    }

    /// What a wait waits for (Realm's `SyncSession.wait(for:)`).
    public enum Direction: Sendable {
        case upload, download
    }

    let path: String
    let realmConfiguration: Realm.Configuration
    let configuration: SyncConfiguration
    /// The file's id at the server: the file's, which a client reset replaces.
    private let identity: Mutex<SyncUUID>
    var clientFileId: SyncUUID { identity.withLock { $0 } }

    private let lock = Mutex<Shared>(Shared())
    private struct Shared {
        var state: State = .active
        var connection: ConnectionState = .disconnected
        var progress = Progress(localVersion: 0, uploadedVersion: 0, downloadedVersion: 0, serverVersion: 0)
        var lastError: CoveError?
        var users = 0
        var uploadAsked: UInt64 = 0
        var uploadDone: UInt64 = 0
        var downloadAsked: UInt64 = 0
        var downloadDone: UInt64 = 0
        var stopping = false
        var bound = false
        /// Commits of this process that queued changesets (`localChangesCommitted`).
        var localCommits: UInt64 = 0
        /// The subscription set as the downloader last read it: the version whose objects are
        /// in the file, and the version the server refused, with why.
        var subscriptionsComplete: UInt64 = 0
        var subscriptionsRefused: (version: UInt64, message: String) = (0, "")
        /// Whether the downloader has read the set since the session started.
        var subscriptionsRead = false
        /// Client resets this session made, and why the last one was made.
        var clientResets = 0
        var lastClientReset: String?
        /// The newest compensating writes the server reported, oldest first.
        var compensatingWrites: [CompensatingWrite] = []
        var compensatingWriteCount = 0
    }
    private var cond = pthread_cond_t()
    private var condMutex = pthread_mutex_t()
    private var bindMutex = pthread_mutex_t()
    private var threads: [pthread_t] = []
    private var uploadHTTP: SyncHTTP?
    private var downloadHTTP: SyncHTTP?

    init(path: String, realmConfiguration: Realm.Configuration, configuration: SyncConfiguration,
         record: SyncFileRecord) {
        self.path = path
        var handle = realmConfiguration
        handle.opensSyncSession = false
        handle.migrationBlock = nil
        handle.shouldCompactOnLaunch = nil
        self.realmConfiguration = handle
        self.configuration = configuration
        identity = Mutex(record.clientFileId)
        pthread_mutex_init(&condMutex, nil)
        pthread_mutex_init(&bindMutex, nil)
        pthread_cond_init(&cond, nil)
        lock.withLock {
            $0.progress = Progress(localVersion: record.localVersion, uploadedVersion: record.uploadedVersion,
                                   downloadedVersion: record.downloadCursor, serverVersion: record.downloadCursor)
            $0.state = configuration.startsConnected ? .active : .paused
        }
    }

    deinit {
        pthread_cond_destroy(&cond)
        pthread_mutex_destroy(&condMutex)
        pthread_mutex_destroy(&bindMutex)
    }

    // MARK: What users see

    /// Whether the session works: active, paused, or inactive (stopped).
    public var state: State { lock.withLock { $0.state } }
    /// Whether the session reaches the server now.
    public var connectionState: ConnectionState { lock.withLock { $0.connection } }
    /// How far uploads and downloads have come.
    public var progress: Progress { lock.withLock { $0.progress } }
    /// The latest error: a request that failed (the session tries again) or the refusal that
    /// stopped it (state `.inactive`). nil after a request succeeds.
    public var lastError: CoveError? { lock.withLock { $0.lastError } }

    /// The newest compensating writes the server reported since the session started, oldest
    /// first (at most `compensatingWritesKept`), and how many it reported in all.
    public var compensatingWrites: [CompensatingWrite] { lock.withLock { $0.compensatingWrites } }

    /// The client resets this session made (`SyncConfiguration.clientResetMode`), and why the
    /// last one was made (nil before the first).
    public var clientResetCount: Int { lock.withLock { $0.clientResets } }
    public var lastClientReset: String? { lock.withLock { $0.lastClientReset } }
    public var compensatingWriteCount: Int { lock.withLock { $0.compensatingWriteCount } }
    public static let compensatingWritesKept = 100

    /// Stops uploading and downloading until `resume()`; what the file holds stays queued.
    public func pause() {
        lock.withLock { if $0.state == .active { $0.state = .paused } }
        uploadHTTP?.cancel()
        downloadHTTP?.cancel()
        signal()
    }

    /// Starts a paused session again.
    public func resume() {
        lock.withLock { if $0.state == .paused { $0.state = .active } }
        signal()
    }

    /// Waits until everything this file had written when the call was made is on the server
    /// (`.upload`), or until the file holds everything the server had when the call was made
    /// (`.download`).
    /// - Throws: `.sync` when `timeout` (seconds) passes first, or the session stops (with its
    ///   error); `.invalidArgument` for a negative timeout.
    public func wait(for direction: Direction, timeout: Double = 60) throws(CoveError) {
        guard timeout >= 0, timeout.isFinite else { throw CoveError(.invalidArgument, "a wait's timeout must be 0 or more seconds, not \(timeout)") }
        let asked: UInt64 = lock.withLock { s in
            switch direction {
            case .upload: s.uploadAsked += 1; return s.uploadAsked
            case .download: s.downloadAsked += 1; return s.downloadAsked
            }
        }
        if direction == .download { downloadHTTP?.cancel() }
        signal()
        let deadline = Self.now() + timeout
        while true {
            let (done, state, error): (Bool, State, CoveError?) = lock.withLock { s in
                (direction == .upload ? s.uploadDone >= asked : s.downloadDone >= asked, s.state, s.lastError)
            }
            if done { return }
            if state == .inactive {
                throw CoveError(.sync, "the sync session stopped" + (error.map { ": \($0.message)" } ?? ""))
            }
            let left = deadline - Self.now()
            if left <= 0 {
                let what = direction == .upload ? "upload" : "download"
                throw CoveError(.sync, "the \(what) did not finish within \(timeout) s" + (error.map { " (last error: \($0.message))" } ?? ""))
            }
            sleep(upTo: min(left, 0.05))
        }
    }

    // MARK: Life

    func addUser() { lock.withLock { $0.users += 1 } }

    /// A realm of this process committed changesets to upload: the uploader goes at once.
    /// (Another process's commits are found within a second.)
    func localChangesCommitted() {
        lock.withLock { $0.localCommits &+= 1 }
        signal()
    }

    /// A realm of this process committed a new version of the subscription set: the
    /// downloader leaves its long poll to send it. (Another process's are found within a
    /// second, by the uploader's look.)
    func subscriptionsChanged() {
        downloadHTTP?.cancel()
        signal()
    }

    /// Where the subscription set stands as the downloader last told (nil before it has read
    /// the set): newer than a realm's snapshot may show.
    func subscriptionProgress() -> (complete: UInt64, refused: UInt64, message: String)? {
        lock.withLock { $0.subscriptionsRead ? ($0.subscriptionsComplete, $0.subscriptionsRefused.version, $0.subscriptionsRefused.message) : nil }
    }

    /// Waits until version `version` of the subscription set (or a later one) has its objects
    /// in the file.
    /// - Throws: `.sync` when the server refuses that version (its message), the session stops,
    ///   or `timeout` seconds (nil: no limit) pass first.
    func waitForSubscriptions(version: UInt64, timeout: Double?) throws(CoveError) {
        let deadline = timeout.map { Self.now() + $0 }
        while true {
            let (read, complete, refused, state, error) = lock.withLock {
                ($0.subscriptionsRead, $0.subscriptionsComplete, $0.subscriptionsRefused, $0.state, $0.lastError)
            }
            if read && complete >= version { return }
            if read && refused.version == version {
                throw CoveError(.sync, "the sync server refused the subscription set: \(refused.message)")
            }
            if state == .inactive {
                throw CoveError(.sync, "the sync session stopped" + (error.map { ": \($0.message)" } ?? ""))
            }
            if let deadline, Self.now() >= deadline {
                throw CoveError(.sync, "the subscriptions' objects did not arrive within \(timeout ?? 0) s" + (error.map { " (last error: \($0.message))" } ?? ""))
            }
            sleep(upTo: deadline.map { min(0.05, max(0, $0 - Self.now())) } ?? 0.05)
        }
    }

    /// One realm less; the last stops the session. Returns whether it stopped.
    func removeUser() -> Bool {
        let last = lock.withLock { s -> Bool in
            s.users -= 1
            return s.users <= 0
        }
        if last { stop() }
        return last
    }

    func start() throws(CoveError) {
        uploadHTTP = try SyncHTTP(configuration: configuration)
        downloadHTTP = try SyncHTTP(configuration: configuration)
        for body in [{ (s: SyncSession) in s.uploadLoop() }, { (s: SyncSession) in s.downloadLoop() }] {
            final class Start { let session: SyncSession; let body: (SyncSession) -> Void
                init(_ s: SyncSession, _ b: @escaping (SyncSession) -> Void) { session = s; body = b } }
            let retained = Unmanaged.passRetained(Start(self, body)).toOpaque()
            var t = pthread_t()
            // A session's threads need little stack (no deep recursion anywhere on their paths):
            // 1 MiB rather than the default 8, so that a process can sync many files.
            var attributes = pthread_attr_t()
            pthread_attr_init(&attributes)
            pthread_attr_setstacksize(&attributes, 1 << 20)
            defer { pthread_attr_destroy(&attributes) }
            let rc = pthread_create(&t, &attributes, { arg in
                guard let arg else { return nil }
                let start = Unmanaged<Start>.fromOpaque(arg).takeRetainedValue()
                start.body(start.session)
                return nil
            }, retained)
            guard rc == 0 else {
                Unmanaged<Start>.fromOpaque(retained).release()
                stop()
                throw CoveError(.io, "cannot start the sync session's threads: \(String(cString: strerror(rc)))")
            }
            threads.append(t)
        }
    }

    func stop() {
        lock.withLock {
            $0.stopping = true
            $0.state = .inactive
        }
        uploadHTTP?.cancel()
        downloadHTTP?.cancel()
        signal()
        for t in threads where !pthread_equal(t, pthread_self()).isTrue { pthread_join(t, nil) }
        threads = []
    }

    // MARK: The threads

    private var stopping: Bool { lock.withLock { $0.stopping } }

    /// Whether the thread should work now; waits while the session is paused.
    private func mayWork() -> Bool {
        while true {
            let (stopping, state) = lock.withLock { ($0.stopping, $0.state) }
            if stopping || state == .inactive { return false }
            if state == .active { return true }
            sleep(upTo: 0.2)
        }
    }

    private func openHandle() -> Realm? {
        while mayWork() {
            do {
                return try Realm(configuration: realmConfiguration)
            } catch {
                fail(error, fatal: false)
                sleep(upTo: 1)
            }
        }
        return nil
    }

    private var query: String { "client_file_id=\(clientFileId.text)" }

    /// Binds the file to the token's user (once a session, again after a failure), one thread
    /// at a time: the other waits and finds it bound.
    private func bind(_ http: SyncHTTP, _ realm: Realm) throws(SessionFailure) {
        if lock.withLock({ $0.bound }) { return }
        pthread_mutex_lock(&bindMutex)
        defer { pthread_mutex_unlock(&bindMutex) }
        if lock.withLock({ $0.bound }) { return }
        setConnection(.connecting)
        // A client reset gives the file a new id: bind that one (new, it needs no reset).
        while try !bindOnce(http, realm) {}
        lock.withLock { $0.bound = true }
    }

    /// One bind of the file's current id; false when it found the file must be reset, and did.
    private func bindOnce(_ http: SyncHTTP, _ realm: Realm) throws(SessionFailure) -> Bool {
        do { try realm.refresh() } catch { throw SessionFailure(error, fatal: false) }
        // The file's id, which another process's reset may have replaced.
        let record: SyncFileRecord
        do { record = try realm.syncRecord() } catch { throw SessionFailure(error, fatal: false) }
        identity.withLock { $0 = record.clientFileId }
        let schemaVersion = (try? realm.schemaVersion()) ?? 0
        let body = Array("{\"client_file_id\":\"\(clientFileId.text)\",\"schema_version\":\(schemaVersion),\"acknowledged\":\(record.uploadedVersion)}".utf8)
        let json = try send(http, "/v1/bind", body: body, timeout: configuration.requestTimeout)
        guard case .int(let node)? = json["node_id"], UInt64(node) == clientFileId.nodeId else {
            throw SessionFailure(CoveError(.sync, "the server gave this file node \(json["node_id"].map { "\($0)" } ?? "none"), not \(clientFileId.nodeId): it is not a Cove Sync server of this version"), fatal: true)
        }
        if case .int(let uploaded)? = json["uploaded_version"], uploaded > 0 {
            // The server holds more of this file's changesets than the file has made: this is
            // an older copy of the file (a backup put back, a copy of a synced file). Its next
            // changesets would carry versions the server takes for ones it has, and be lost.
            // Which of the file's changesets the server holds: those whose clocks it answers
            // (after the ones the file knows it holds). The first that differs, or one the file
            // never made, is where another copy of the file went its own way.
            var held = record.uploadedVersion
            var forked = false
            if UInt64(uploaded) > record.uploadedVersion {
                var clocks: [String] = []
                if case .array(let answered)? = json["held_clocks"] {
                    for case .string(let c) in answered { clocks.append(c) }
                }
                let mine: [(version: UInt64, line: [UInt8])]
                do { mine = try realm.readSyncQueue(limit: clocks.count, maxBytes: .max, after: record.uploadedVersion) } catch {
                    throw SessionFailure(error, fatal: false)
                }
                for (i, clock) in clocks.enumerated() {
                    guard i < mine.count, let changeset = try? ChangesetLines.decodeLine(String(decoding: mine[i].line, as: UTF8.self)),
                          changeset.clientVersion == record.uploadedVersion + UInt64(i) + 1, changeset.clock.description == clock else {
                        forked = true
                        break
                    }
                    held = changeset.clientVersion
                }
                if clocks.count < Int(UInt64(uploaded) - record.uploadedVersion) && !forked && held < UInt64(uploaded) {
                    // More than the server answers clocks for: those it held are taken as the file's.
                    held = min(UInt64(uploaded), record.localVersion)
                }
                forked = forked || UInt64(uploaded) > record.localVersion
            }
            if forked {
                try acknowledge(realm, held)
                let why = "the server holds \(uploaded) changesets of client file \(clientFileId.text), not all of them this file's (it made \(record.localVersion), the server holds the first \(held) of them): it is an older copy of the file (a backup put back, or a copy of a synced file)"
                try reset(realm, why: why, cursor: record.downloadCursor)
                return false
            }
            try acknowledge(realm, UInt64(uploaded))
        }
        if case .int(let latest)? = json["server_version"] {
            // The file has downloaded further than the server's history goes: the server lost
            // history (its database put back from a backup, or another server at this URL).
            // Downloading from here would miss what others write under the versions it had.
            if UInt64(latest) < record.downloadCursor {
                let why = "this file has downloaded up to server version \(record.downloadCursor), but the server's history ends at \(latest): the server lost history (a database put back from a backup, or another server at this URL)"
                try reset(realm, why: why, cursor: 0)
                return false
            }
            see(serverVersion: UInt64(latest))
        }
        return true
    }

    /// A client reset as the configuration says (`.manual`: the session stops with `why`).
    private func reset(_ realm: Realm, why: String, cursor: UInt64) throws(SessionFailure) {
        let mode = configuration.clientResetMode
        if mode == .manual {
            throw SessionFailure(CoveError(.sync, why + "; the client reset mode is manual: sync a file that has not been copied, or a new file"), fatal: true)
        }
        let record: SyncFileRecord
        do { record = try realm.resetSync(cursor: cursor, recover: mode == .recoverUnsyncedChanges) } catch {
            throw SessionFailure(error, fatal: false)
        }
        identity.withLock { $0 = record.clientFileId }
        lock.withLock {
            $0.clientResets += 1
            $0.lastClientReset = why + (mode == .recoverUnsyncedChanges ? "; the file took a new id and sends what the server never took again"
                                                                      : "; the file took a new id and dropped what it had not uploaded")
            $0.progress = Progress(localVersion: record.localVersion, uploadedVersion: 0, downloadedVersion: record.downloadCursor,
                                   serverVersion: $0.progress.serverVersion)
        }
    }

    struct SessionFailure: Error {
        var error: CoveError
        var fatal: Bool
        init(_ error: CoveError, fatal: Bool) {
            self.error = error
            self.fatal = fatal
        }
    }

    /// Sends a request and reads a JSON answer; failures say whether trying again can help.
    private func send(_ http: SyncHTTP, _ path: String, body: [UInt8]?, timeout: Double) throws(SessionFailure) -> JSONValue {
        let response = try exchange(http, path, body: body, timeout: timeout)
        guard let json = try? JSONValue(parsing: response.text) else {
            throw SessionFailure(CoveError(.sync, "the server's answer to \(path) is not JSON"), fatal: false)
        }
        return json
    }

    private func exchange(_ http: SyncHTTP, _ path: String, body: [UInt8]?, timeout: Double,
                          accepting accepted: Set<Int> = []) throws(SessionFailure) -> SyncHTTPResponse {
        let response: SyncHTTPResponse
        do {
            response = try http.request(path, body: body, timeout: timeout)
        } catch {
            setConnection(.disconnected)
            throw SessionFailure(CoveError(.sync, "cannot reach the sync server \(configuration.url): \(error.message)"), fatal: false)
        }
        if accepted.contains(response.status) {
            setConnection(.connected)
            return response
        }
        switch response.status {
        case 200:
            setConnection(.connected)
            return response
        case 401, 403, 409:
            throw SessionFailure(CoveError(.sync, "the sync server refused the session: \(response.errorMessage)"), fatal: true)
        default:
            setConnection(.disconnected)
            throw SessionFailure(CoveError(.sync, "the sync server answered \(path) with \(response.errorMessage)"), fatal: false)
        }
    }

    private func uploadLoop() {
        guard let http = uploadHTTP, let realm = openHandle() else { return }
        defer { realm.close() }
        var failures = 0
        var subscriptionVersion: UInt64?
        while mayWork() {
            http.cancelled.store(false, ordering: .relaxed)
            let (asked, commits) = lock.withLock { ($0.uploadAsked, $0.localCommits) }
            do {
                try bind(http, realm)
                try realm.refresh()
                // A new subscription set committed by another process: the downloader leaves
                // its long poll to send it.
                if let version = try? realm.subscriptionRecord().version {
                    if let known = subscriptionVersion, known != version { downloadHTTP?.cancel() }
                    subscriptionVersion = version
                }
                let (record, queued) = try realm.readSyncQueue(limit: 1000, maxBytes: 8 << 20)
                lock.withLock {
                    $0.progress.localVersion = record.localVersion
                    $0.progress.uploadedVersion = record.uploadedVersion
                }
                if queued.isEmpty {
                    lock.withLock { $0.uploadDone = max($0.uploadDone, asked) }
                    signal()
                    failures = 0
                    // Until a commit here queues more, a wait asks, or a second passes (for the
                    // commits of other processes).
                    wait(upTo: 1) { $0.localCommits == commits && $0.uploadAsked == asked && !$0.stopping && $0.state == .active }
                    continue
                }
                var body: [UInt8] = []
                for q in queued { body += q.line; body.append(0x0A) }
                let json = try send(http, "/v1/upload?\(query)", body: body, timeout: configuration.requestTimeout)
                guard case .int(let uploaded)? = json["uploaded_version"] else {
                    throw SessionFailure(CoveError(.sync, "the server's answer to an upload has no uploaded_version"), fatal: false)
                }
                try acknowledge(realm, UInt64(uploaded))
                if case .int(let latest)? = json["server_version"] { see(serverVersion: UInt64(latest)) }
                if case .array(let refused)? = json["compensating"], !refused.isEmpty { remember(compensating: refused) }
                clearError()
                failures = 0
            } catch {
                if !recover(from: error, failures: &failures) { return }
            }
        }
    }

    private func acknowledge(_ realm: Realm, _ version: UInt64) throws(SessionFailure) {
        do {
            try realm.acknowledgeUploads(upTo: version)
        } catch {
            throw SessionFailure(error, fatal: false)
        }
        lock.withLock { $0.progress.uploadedVersion = max($0.progress.uploadedVersion, version) }
    }

    private func downloadLoop() {
        guard let http = downloadHTTP, let realm = openHandle() else { return }
        defer { realm.close() }
        var failures = 0
        while mayWork() {
            http.cancelled.store(false, ordering: .relaxed)
            let asked = lock.withLock { $0.downloadAsked }
            let served = lock.withLock { $0.downloadDone }
            do {
                try bind(http, realm)
                try realm.refresh()
                let subscriptions: SyncSubscriptionRecord
                do { subscriptions = try realm.subscriptionRecord() } catch { throw SessionFailure(error, fatal: false) }
                publish(subscriptions)
                if subscriptions.version > subscriptions.sentVersion && subscriptions.errorVersion != subscriptions.version {
                    try sendSubscriptions(http, realm, subscriptions)
                    continue
                }
                if subscriptions.sentVersion > subscriptions.completeVersion {
                    try bootstrap(http, realm, set: subscriptions.sentVersion)
                    continue
                }
                if subscriptions.sentVersion > 0 {
                    try downloadStates(http, realm, set: subscriptions.sentVersion, asked: asked, served: served)
                    clearError()
                    failures = 0
                    continue
                }
                let cursor = try realm.syncRecord().downloadCursor
                let wait = asked > served ? 0 : configuration.longPollSeconds
                let path = "/v1/download?\(query)&after=\(cursor)&wait=\(wait)&limit=\(configuration.changesetsPerTransaction)"
                let response = try exchange(http, path, body: nil, timeout: configuration.requestTimeout + Double(wait))
                let (header, changesets) = try Self.parseDownload(response.body)
                if header.to > cursor || !changesets.isEmpty {
                    do {
                        try realm.applyDownload(changesets, cursor: header.to)
                    } catch {
                        throw SessionFailure(error, fatal: false)
                    }
                }
                lock.withLock {
                    $0.progress.downloadedVersion = max($0.progress.downloadedVersion, header.to)
                    $0.progress.serverVersion = max($0.progress.serverVersion, header.latest ?? header.to)
                    if !header.more { $0.downloadDone = max($0.downloadDone, asked) }
                }
                signal()
                clearError()
                failures = 0
            } catch {
                if !recover(from: error, failures: &failures) { return }
            }
        }
    }

    // MARK: Subscriptions

    /// Keeps what an upload's answer says the server undid. An entry that does not read is
    /// kept with what it says, so that no report is lost.
    private func remember(compensating entries: [JSONValue]) {
        var writes: [CompensatingWrite] = []
        for e in entries {
            var className = "?"
            if case .string(let c)? = e["class"] { className = c }
            var key = Value.null
            if let k = e["key"], let parsed = try? SyncPrimaryKey(json: k.serialized()), let v = try? ObjectStore.coveKey(parsed) { key = v }
            var reason = ""
            if case .string(let r)? = e["reason"] { reason = r }
            writes.append(CompensatingWrite(objectClassName: className, primaryKey: key, reason: reason, json: e.serialized()))
        }
        lock.withLock {
            $0.compensatingWrites.append(contentsOf: writes)
            $0.compensatingWriteCount += writes.count
            if $0.compensatingWrites.count > Self.compensatingWritesKept {
                $0.compensatingWrites.removeFirst($0.compensatingWrites.count - Self.compensatingWritesKept)
            }
        }
    }

    /// Tells the waits where the subscription set stands.
    private func publish(_ r: SyncSubscriptionRecord) {
        // Every download reads the set; only news wakes the waits (a wake-up of every session's
        // threads at every download costs many connected files their latency).
        let changed = lock.withLock { s -> Bool in
            if s.subscriptionsRead && s.subscriptionsComplete == r.completeVersion && s.subscriptionsRefused.version == r.errorVersion {
                return false
            }
            s.subscriptionsComplete = r.completeVersion
            s.subscriptionsRefused = (r.errorVersion, r.errorMessage)
            s.subscriptionsRead = true
            return true
        }
        if changed { signal() }
    }

    /// Runs a change of the file's subscription record, failures to be tried again.
    private func record(_ realm: Realm, _ body: (inout SyncSubscriptionRecord) throws(CoveError) -> Void) throws(SessionFailure) {
        do {
            try realm.editSubscriptionRecord(body)
            publish(try realm.subscriptionRecord())
        } catch {
            throw SessionFailure(error, fatal: false)
        }
    }

    /// Sends the file's newest subscription set; the server takes it (it becomes the set the
    /// downloads name) or refuses it (the version is in error, the one before stays in force).
    private func sendSubscriptions(_ http: SyncHTTP, _ realm: Realm, _ subscriptions: SyncSubscriptionRecord) throws(SessionFailure) {
        let body: SyncSubscriptionSetBody
        do { body = try realm.objectStore().subscriptionBody(subscriptions) } catch { throw SessionFailure(error, fatal: false) }
        let response = try exchange(http, "/v1/subscriptions?\(query)", body: Array(body.encode().utf8),
                                    timeout: configuration.requestTimeout, accepting: [400])
        let version = subscriptions.version
        if response.status == 400 {
            let message = response.errorMessage
            guard message.hasPrefix("bad_query") else {
                throw SessionFailure(CoveError(.sync, "the sync server refused the subscription set: \(message)"), fatal: false)
            }
            try record(realm) { r in
                if r.version == version { r.errorVersion = version; r.errorMessage = message }
            }
            return
        }
        try record(realm) { r in
            r.sentVersion = max(r.sentVersion, version)
            if r.errorVersion <= version { r.errorVersion = 0; r.errorMessage = "" }
        }
    }

    /// The server names another set than the one this file sent last (another process of the
    /// file sent a newer one, or the server lost it): send the newest again.
    private func resendSubscriptions(_ http: SyncHTTP, _ realm: Realm) throws(SessionFailure) {
        let current: SyncSubscriptionRecord
        do {
            try realm.refresh()
            current = try realm.subscriptionRecord()
        } catch {
            throw SessionFailure(error, fatal: false)
        }
        if current.version > 0 { try sendSubscriptions(http, realm, current) }
    }

    /// `v` for a query string.
    private static func escaped(_ v: String) -> String {
        var out = ""
        for b in v.utf8 {
            switch b {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                let hex = Array("0123456789ABCDEF".utf8)
                out += "%" + String(decoding: [hex[Int(b >> 4)], hex[Int(b & 15)]], as: UTF8.self)
            }
        }
        return out
    }

    /// Reads a subscribed download's answer.
    static func parseStates(_ body: [UInt8]) throws(SessionFailure) -> SyncStateDownload {
        do {
            return try StateLines.decode(bytes: body)
        } catch {
            throw SessionFailure(CoveError(.sync, "a download's answer: \(error.message)"), fatal: false)
        }
    }

    /// Downloads every object set `set` covers, in batches, then takes out of the file what it
    /// did not send (but objects with changes still to upload) and downloads from where the
    /// bootstrap began.
    private func bootstrap(_ http: SyncHTTP, _ realm: Realm, set: UInt64) throws(SessionFailure) {
        var next: String? = "start"
        var keep = Set<SyncObjectRef>()
        var serverVersion: Int64 = 0
        while let cursor = next {
            let path = "/v1/download?\(query)&subscriptions=\(set)&bootstrap=\(Self.escaped(cursor))&limit=\(configuration.changesetsPerTransaction)"
            let response = try exchange(http, path, body: nil, timeout: configuration.requestTimeout, accepting: [409])
            if response.status == 409 {
                try resendSubscriptions(http, realm)
                return
            }
            let download = try Self.parseStates(response.body)
            guard case .bootstrap(let answered, let from, let after) = download.header.kind, answered == Int64(set) else {
                throw SessionFailure(CoveError(.sync, "a download's answer: not a batch of the bootstrap of subscription set \(set)"), fatal: false)
            }
            serverVersion = from
            for line in download.lines { if case .object(let ref, _) = line { keep.insert(ref) } }
            do { try realm.applyStates(download.lines, cursor: 0) } catch { throw SessionFailure(error, fatal: false) }
            see(serverVersion: UInt64(max(0, download.header.latest)))
            next = after
        }
        do {
            try realm.finishBootstrap(set: set, keep: keep, cursor: UInt64(max(0, serverVersion)))
            publish(try realm.subscriptionRecord())
        } catch {
            throw SessionFailure(error, fatal: false)
        }
        lock.withLock { $0.progress.downloadedVersion = max($0.progress.downloadedVersion, UInt64(max(0, serverVersion))) }
        clearError()
    }

    /// One steady download of a subscribed file: the states of the objects others changed that
    /// its set covers, and the objects it no longer covers.
    private func downloadStates(_ http: SyncHTTP, _ realm: Realm, set: UInt64, asked: UInt64, served: UInt64) throws(SessionFailure) {
        let cursor: UInt64
        do { cursor = try realm.syncRecord().downloadCursor } catch { throw SessionFailure(error, fatal: false) }
        let wait = asked > served ? 0 : configuration.longPollSeconds
        let path = "/v1/download?\(query)&after=\(cursor)&subscriptions=\(set)&wait=\(wait)&limit=\(configuration.changesetsPerTransaction)"
        let response = try exchange(http, path, body: nil, timeout: configuration.requestTimeout + Double(wait), accepting: [409])
        if response.status == 409 {
            try resendSubscriptions(http, realm)
            return
        }
        let download = try Self.parseStates(response.body)
        guard case .steady(let to, let more) = download.header.kind, to >= 0 else {
            throw SessionFailure(CoveError(.sync, "a download's answer: a bootstrap's batch where the next changes were asked for"), fatal: false)
        }
        if UInt64(to) > cursor || !download.lines.isEmpty {
            do { try realm.applyStates(download.lines, cursor: UInt64(to)) } catch { throw SessionFailure(error, fatal: false) }
        }
        lock.withLock {
            $0.progress.downloadedVersion = max($0.progress.downloadedVersion, UInt64(to))
            $0.progress.serverVersion = max($0.progress.serverVersion, UInt64(max(to, download.header.latest)))
            if !more { $0.downloadDone = max($0.downloadDone, asked) }
        }
        signal()
    }

    struct DownloadHeader {
        var to: UInt64
        var more: Bool
        var count: Int
        var latest: UInt64?
    }

    /// A download's answer: the header line, then the changesets.
    static func parseDownload(_ body: [UInt8]) throws(SessionFailure) -> (DownloadHeader, [Changeset]) {
        func bad(_ what: String) -> SessionFailure { SessionFailure(CoveError(.sync, "a download's answer: \(what)"), fatal: false) }
        guard let end = body.firstIndex(of: 0x0A) else { throw bad("no header line") }
        guard let json = try? JSONValue(parsing: String(decoding: body[..<end], as: UTF8.self)),
              case .int(let to)? = json["to"], to >= 0, case .bool(let more)? = json["more"], case .int(let count)? = json["count"] else {
            throw bad("a header without to, more and count")
        }
        var latest: UInt64?
        if case .int(let l)? = json["latest"], l >= 0 { latest = UInt64(l) }
        let rest = Array(body[(end + 1)...])
        let changesets: [Changeset]
        do { changesets = rest.isEmpty ? [] : try ChangesetLines.decode(bytes: rest) } catch { throw bad(error.message) }
        guard changesets.count == count else { throw bad("\(changesets.count) changesets where the header says \(count)") }
        return (DownloadHeader(to: UInt64(to), more: more, count: Int(count), latest: latest), changesets)
    }

    // MARK: Helpers

    /// Records a failed round and waits before the next; false when the session must stop.
    private func recover(from error: any Error, failures: inout Int) -> Bool {
        if let failure = error as? SessionFailure {
            if failure.fatal {
                fail(failure.error, fatal: true)
                return false
            }
            // Cut short on purpose (a pause, a wait that wants an answer now): no pause.
            if failure.error.message.hasSuffix(": cancelled") { return true }
            fail(failure.error, fatal: false)
            lock.withLock { $0.bound = false }
        } else {
            fail(error as? CoveError ?? CoveError(.sync, "\(error)"), fatal: false)
        }
        failures += 1
        backOff(failures)
        return true
    }

    private func see(serverVersion: UInt64) {
        lock.withLock { $0.progress.serverVersion = max($0.progress.serverVersion, serverVersion) }
    }

    private func setConnection(_ c: ConnectionState) { lock.withLock { $0.connection = c } }

    /// A request succeeded: the last failure is over, unless it stopped the session.
    private func clearError() { lock.withLock { if $0.state != .inactive { $0.lastError = nil } } }

    private func fail(_ error: CoveError, fatal: Bool) {
        lock.withLock {
            if $0.state == .inactive && $0.lastError != nil && !fatal { return }
            $0.lastError = error
            if fatal {
                $0.state = .inactive
                $0.connection = .disconnected
            }
        }
    }

    /// Waits before trying again: 0.25 s doubling to 30 s, with up to half again at random.
    private func backOff(_ failures: Int) {
        let base = min(30, 0.25 * Double(1 << min(failures - 1, 7)))
        sleep(upTo: base * (1 + Double.random(in: 0..<0.5)))
    }

    private func signal() {
        pthread_mutex_lock(&condMutex)
        pthread_cond_broadcast(&cond)
        pthread_mutex_unlock(&condMutex)
    }

    /// Waits up to `seconds` while `stillWaiting` holds of the shared state, checked under the
    /// condition's mutex so that a change signalled in between is not missed.
    private func wait(upTo seconds: Double, while stillWaiting: (Shared) -> Bool) {
        var ts = Self.deadline(after: seconds)
        pthread_mutex_lock(&condMutex)
        while lock.withLock({ stillWaiting($0) }) {
            if pthread_cond_timedwait(&cond, &condMutex, &ts) == ETIMEDOUT { break }
        }
        pthread_mutex_unlock(&condMutex)
    }

    /// Sleeps up to `seconds`, less when signalled.
    private func sleep(upTo seconds: Double) {
        var ts = Self.deadline(after: seconds)
        pthread_mutex_lock(&condMutex)
        if !stopping { _ = pthread_cond_timedwait(&cond, &condMutex, &ts) }
        pthread_mutex_unlock(&condMutex)
    }

    /// The realtime clock `seconds` from now, as a condition's timed wait takes it.
    private static func deadline(after seconds: Double) -> timespec {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let ns = Int(seconds * 1e9) + ts.tv_nsec
        ts.tv_sec += ns / 1_000_000_000
        ts.tv_nsec = ns % 1_000_000_000
        return ts
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

private extension Int32 {
    var isTrue: Bool { self != 0 }
}

/// The sessions of this process, one per synced file.
enum SyncSessions {
    private static let sessions = Mutex<[String: SyncSession]>([:])

    /// The file's session, started if it is not running; one more user of it.
    static func acquire(path: String, configuration: Realm.Configuration, sync: SyncConfiguration,
                        record: SyncFileRecord) throws(CoveError) -> SyncSession {
        let (session, isNew): (SyncSession, Bool) = sessions.withLock { all in
            if let s = all[path], s.state != .inactive {
                s.addUser()
                return (s, false)
            }
            let s = SyncSession(path: path, realmConfiguration: configuration, configuration: sync, record: record)
            s.addUser()
            all[path] = s
            return (s, true)
        }
        if isNew { try session.start() }
        return session
    }

    static func release(_ session: SyncSession) {
        if session.removeUser() {
            sessions.withLock { all in if all[session.path] === session { all[session.path] = nil } }
        }
    }
}
