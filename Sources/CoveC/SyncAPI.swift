// cove_sync_*: a sync configuration, given to a configuration by cove_config_set_sync(), and the
// session of a synced realm's file: its status, its last error, waits, pause and resume.
import CCove
import Cove
#if canImport(Glibc)
import Glibc
#endif

@c @implementation
public func cove_sync_config_new(_ url: UnsafePointer<CChar>?, _ token: UnsafePointer<CChar>?,
                                 _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_sync_config_new")
        let u = try string(url, "url", in: "cove_sync_config_new")
        let t = try string(token, "token", in: "cove_sync_config_new")
        out.pointee = SyncConfigHandle(SyncConfiguration(url: u, token: t)).retainedPointer()
    }
}

@c @implementation
public func cove_sync_config_set_trusted_certificates(_ sync: OpaquePointer?, _ pemPath: UnsafePointer<CChar>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try handle(sync, SyncConfigHandle.self, "sync", in: "cove_sync_config_set_trusted_certificates")
        s.sync.trustedCertificatesPath = try nonEmptyStringOrNil(pemPath, "pem_path", in: "cove_sync_config_set_trusted_certificates",
                                                                 hint: " (pass NULL for the system's certificates)")
    }
}

@c @implementation
public func cove_sync_config_set_request_timeout(_ sync: OpaquePointer?, _ seconds: Double) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try handle(sync, SyncConfigHandle.self, "sync", in: "cove_sync_config_set_request_timeout")
        guard seconds > 0, seconds <= 3600 else {
            throw invalidArgument("cove_sync_config_set_request_timeout",
                                  "a request timeout of \(seconds) s: expected more than 0 and at most 3600")
        }
        s.sync.requestTimeout = seconds
    }
}

@c @implementation
public func cove_sync_config_set_long_poll(_ sync: OpaquePointer?, _ seconds: Int32) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try handle(sync, SyncConfigHandle.self, "sync", in: "cove_sync_config_set_long_poll")
        guard (0...60).contains(seconds) else {
            throw invalidArgument("cove_sync_config_set_long_poll", "a long poll of \(seconds) s: expected 0 to 60")
        }
        s.sync.longPollSeconds = Int(seconds)
    }
}

@c @implementation
public func cove_sync_config_set_changesets_per_transaction(_ sync: OpaquePointer?, _ count: Int32) -> cove_status_t {
    entry { () throws(CFailure) in
        let s = try handle(sync, SyncConfigHandle.self, "sync", in: "cove_sync_config_set_changesets_per_transaction")
        guard (1...100_000).contains(count) else {
            throw invalidArgument("cove_sync_config_set_changesets_per_transaction",
                                  "\(count) changesets per transaction: expected 1 to 100000")
        }
        s.sync.changesetsPerTransaction = Int(count)
    }
}

@c @implementation
public func cove_sync_config_set_starts_connected(_ sync: OpaquePointer?, _ connected: Bool) -> cove_status_t {
    entry { () throws(CFailure) in
        try handle(sync, SyncConfigHandle.self, "sync", in: "cove_sync_config_set_starts_connected").sync.startsConnected = connected
    }
}

@c @implementation
public func cove_sync_config_set_client_reset(_ sync: OpaquePointer?, _ mode: cove_client_reset_e) -> cove_status_t {
    let function: StaticString = "cove_sync_config_set_client_reset"
    return entry { () throws(CFailure) in
        let h = try handle(sync, SyncConfigHandle.self, "sync", in: function)
        switch mode {
        case COVE_CLIENT_RESET_RECOVER: h.sync.clientResetMode = .recoverUnsyncedChanges
        case COVE_CLIENT_RESET_DISCARD: h.sync.clientResetMode = .discardUnsyncedChanges
        case COVE_CLIENT_RESET_MANUAL: h.sync.clientResetMode = .manual
        default: throw invalidArgument(function, "mode \(mode.rawValue): expected COVE_CLIENT_RESET_RECOVER, _DISCARD or _MANUAL")
        }
    }
}

@c @implementation
public func cove_config_set_sync(_ config: OpaquePointer?, _ sync: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_sync")
        guard let sync else {
            c.configuration.syncConfiguration = nil
            return
        }
        c.configuration.syncConfiguration = try handle(sync, SyncConfigHandle.self, "sync", in: "cove_config_set_sync").sync
    }
}

/// The sync session of the realm behind `pointer`.
/// - Throws: `COVE_ERR_SYNC` naming `function` for a realm that does not sync; the failures of
///   `handle(_:_:_:in:)`.
private func session(_ pointer: OpaquePointer?, in function: StaticString) throws(CFailure) -> (Realm, SyncSession) {
    let r = try handle(pointer, RealmHandle.self, "realm", in: function).realm
    guard let session = r.syncSession else {
        let why = r.isFrozen ? "the realm is frozen: its live realm has the sync session"
                             : "the realm does not sync (it was opened without cove_config_set_sync())"
        throw failure(Int32(COVE_ERR_SYNC), "\(function): \(why)")
    }
    return (r, session)
}

@c @implementation
public func cove_sync_get_status(_ realm: OpaquePointer?, _ out: UnsafeMutablePointer<cove_sync_status_t>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_sync_get_status")
        let (_, s) = try session(realm, in: "cove_sync_get_status")
        let progress = s.progress
        var status = cove_sync_status_t()
        switch s.state {
        case .active: status.state = Int32(COVE_SYNC_ACTIVE.rawValue)
        case .paused: status.state = Int32(COVE_SYNC_PAUSED.rawValue)
        case .inactive: status.state = Int32(COVE_SYNC_INACTIVE.rawValue)
        }
        switch s.connectionState {
        case .disconnected: status.connection = Int32(COVE_SYNC_DISCONNECTED.rawValue)
        case .connecting: status.connection = Int32(COVE_SYNC_CONNECTING.rawValue)
        case .connected: status.connection = Int32(COVE_SYNC_CONNECTED.rawValue)
        }
        status.local_version = progress.localVersion
        status.uploaded_version = progress.uploadedVersion
        status.downloaded_version = progress.downloadedVersion
        status.server_version = progress.serverVersion
        out.pointee = status
    }
}

@c @implementation
public func cove_sync_last_error(_ realm: OpaquePointer?, _ outMessage: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outMessage, "out_message", in: "cove_sync_last_error")
        let (_, s) = try session(realm, in: "cove_sync_last_error")
        out.pointee = s.lastError.map { strdup($0.message) } ?? nil
    }
}

@c @implementation
public func cove_sync_compensating_writes(_ realm: OpaquePointer?, _ outJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
                                          _ outTotal: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outJSON, "out_json", in: "cove_sync_compensating_writes")
        let (_, s) = try session(realm, in: "cove_sync_compensating_writes")
        let (writes, total) = (s.compensatingWrites, s.compensatingWriteCount)
        out.pointee = strdup("[" + writes.map(\.json).joined(separator: ",") + "]")
        outTotal?.pointee = UInt64(total)
    }
}

@c @implementation
public func cove_sync_client_resets(_ realm: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt64>?,
                                    _ outReason: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outCount, "out_count", in: "cove_sync_client_resets")
        let (_, s) = try session(realm, in: "cove_sync_client_resets")
        out.pointee = UInt64(s.clientResetCount)
        outReason?.pointee = s.lastClientReset.map { strdup($0) } ?? nil
    }
}

/// A wait of the realm's session for `direction`, refused inside a write: the session records
/// what the server took, and applies downloads, in write transactions of its own.
private func waitForSync(_ realm: OpaquePointer?, _ direction: SyncSession.Direction, _ timeout: Double,
                  in function: StaticString) throws(CFailure) {
    let (r, s) = try session(realm, in: function)
    guard timeout >= 0, timeout.isFinite else {
        throw invalidArgument(function, "timeout_seconds \(timeout): expected 0 or more, and finite")
    }
    if r.isInWriteTransaction {
        throw failure(Int32(COVE_ERR_IN_WRITE),
                      "\(function): refused inside a write transaction (the sync session needs the write lock)")
    }
    try call { () throws(CoveError) in try s.wait(for: direction, timeout: timeout) }
}

@c @implementation
public func cove_sync_wait_for_upload(_ realm: OpaquePointer?, _ timeoutSeconds: Double) -> cove_status_t {
    entry { () throws(CFailure) in
        try waitForSync(realm, .upload, timeoutSeconds, in: "cove_sync_wait_for_upload")
    }
}

@c @implementation
public func cove_sync_wait_for_download(_ realm: OpaquePointer?, _ timeoutSeconds: Double) -> cove_status_t {
    entry { () throws(CFailure) in
        try waitForSync(realm, .download, timeoutSeconds, in: "cove_sync_wait_for_download")
    }
}

@c @implementation
public func cove_sync_pause(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        try session(realm, in: "cove_sync_pause").1.pause()
    }
}

@c @implementation
public func cove_sync_resume(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        try session(realm, in: "cove_sync_resume").1.resume()
    }
}
