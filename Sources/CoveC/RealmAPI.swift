// cove_open, cove_close and the transaction and version functions of a realm.
import CCove
import Cove
#if canImport(Glibc)
import Glibc
#endif

@c @implementation
public func cove_open(_ config: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_open")
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_open")
        out.pointee = try openRealm(c).retainedPointer()
    }
}

@c @implementation
public func cove_schema_version_at(_ path: UnsafePointer<CChar>?, _ outVersion: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outVersion, "out_version", in: "cove_schema_version_at")
        let file = try string(path, "path", in: "cove_schema_version_at")
        out.pointee = try call { () throws(CoveError) in try Realm.schemaVersion(at: file) }
    }
}

@c @implementation
public func cove_close(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_close", closedAllowed: true)
        try refuseDuringMigration(h, in: "cove_close")
        // Before the close, which stops the session and so ends the waits another way.
        h.subscribeCompletions.close()
        h.realm.close()
        h.clearScratch()
    }
}

@c @implementation
public func cove_begin_write(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_begin_write")
        // It delivers notifications first: a callback may release the caller's last reference.
        defer { withExtendedLifetime(h) {} }
        h.clearScratch()
        try call { () throws(CoveError) in try h.realm.beginWrite() }
    }
}

@c @implementation
public func cove_commit(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_commit")
        try refuseDuringMigration(h, in: "cove_commit")
        h.clearScratch()
        try call { () throws(CoveError) in try h.realm.commitWrite() }
    }
}

@c @implementation
public func cove_cancel_write(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_cancel_write")
        try refuseDuringMigration(h, in: "cove_cancel_write")
        h.clearScratch()
        try call { () throws(CoveError) in try h.realm.cancelWrite() }
    }
}

@c @implementation
public func cove_is_in_write(_ realm: OpaquePointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_is_in_write")
        out.pointee = try handle(realm, RealmHandle.self, "realm", in: "cove_is_in_write").realm.isInWriteTransaction
    }
}

@c @implementation
public func cove_refresh(_ realm: OpaquePointer?, _ outDidAdvance: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_refresh")
        // It delivers notifications: a callback may release the caller's last reference.
        defer { withExtendedLifetime(h) {} }
        h.clearScratch()
        let advanced = try call { () throws(CoveError) in try h.realm.refresh() }
        h.subscribeCompletions.deliver()
        outDidAdvance?.pointee = advanced
    }
}

@c @implementation
public func cove_invalidate(_ realm: OpaquePointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_invalidate")
        h.clearScratch()
        try call { () throws(CoveError) in try h.realm.invalidate() }
    }
}

@c @implementation
public func cove_freeze(_ realm: OpaquePointer?, _ outFrozen: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outFrozen, "out_frozen", in: "cove_freeze")
        let h = try handle(realm, RealmHandle.self, "realm", in: "cove_freeze")
        let frozen = try call { () throws(CoveError) in try h.realm.freeze() }
        // A frozen realm freezes to itself; a second handle owning it would close it when released.
        out.pointee = frozen === h.realm ? h.retainedPointer() : RealmHandle(frozen).retainedPointer()
    }
}

@c @implementation
public func cove_version(_ realm: OpaquePointer?, _ outVersion: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outVersion, "out_version", in: "cove_version")
        let r = try handle(realm, RealmHandle.self, "realm", in: "cove_version").realm
        out.pointee = try call { () throws(CoveError) in try r.version }
    }
}

@c @implementation
public func cove_active_versions(_ realm: OpaquePointer?, _ outCount: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outCount, "out_count", in: "cove_active_versions")
        let r = try handle(realm, RealmHandle.self, "realm", in: "cove_active_versions").realm
        out.pointee = try call { () throws(CoveError) in try r.activeVersionCount() }
    }
}

@c @implementation
public func cove_recovery(_ realm: OpaquePointer?, _ outDiscarded: UnsafeMutablePointer<Bool>?,
                          _ outDiscardedVersion: UnsafeMutablePointer<UInt64>?, _ outOpenedVersion: UnsafeMutablePointer<UInt64>?,
                          _ outReason: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(outDiscarded, "out_discarded", in: "cove_recovery")
        let r = try handle(realm, RealmHandle.self, "realm", in: "cove_recovery").realm
        let recovery = r.recovery
        out.pointee = recovery != nil
        outDiscardedVersion?.pointee = recovery?.discardedVersion ?? 0
        outOpenedVersion?.pointee = recovery?.openedVersion ?? 0
        outReason?.pointee = recovery.map { strdup($0.reason) } ?? nil
    }
}

@c @implementation
public func cove_file_space(_ realm: OpaquePointer?, _ outFormat: UnsafeMutablePointer<UInt32>?,
                            _ outTotal: UnsafeMutablePointer<UInt64>?, _ outUsed: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let r = try handle(realm, RealmHandle.self, "realm", in: "cove_file_space").realm
        let space = try call { () throws(CoveError) in try r.fileSpace() }
        outFormat?.pointee = space.formatVersion
        outTotal?.pointee = space.totalBytes
        outUsed?.pointee = space.usedBytes
    }
}

@c @implementation
public func cove_write_copy(_ realm: OpaquePointer?, _ path: UnsafePointer<CChar>?,
                            _ key: UnsafePointer<UInt8>?, _ keySize: Int) -> cove_status_t {
    entry { () throws(CFailure) in
        let r = try handle(realm, RealmHandle.self, "realm", in: "cove_write_copy").realm
        let target = try string(path, "path", in: "cove_write_copy")
        let data = try encryptionKey(key, keySize, in: "cove_write_copy")
        try call { () throws(CoveError) in try r.writeCopy(toFile: target, encryptionKey: data) }
    }
}

@c @implementation
public func cove_verify(_ realm: OpaquePointer?, _ outReport: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let r = try handle(realm, RealmHandle.self, "realm", in: "cove_verify").realm
        let report = try call { () throws(CoveError) in try r.verify() }
        outReport?.pointee = strdup(report)
    }
}
