// cove_compact_file and cove_config_set_should_compact_on_launch: a file compacted in place when
// no other handle has it open (Realm.compactFile), asked through a C callback; cove_recover_file:
// a damaged file salvaged into a new one (Realm.salvage), its report as JSON.
import CCove
import Glibc
import Cove

/// The C callback that decides a compaction, as a configuration holds it.
typealias CompactCallback = CCallback<cove_should_compact_fn>

@c @implementation
public func cove_compact_file(_ path: UnsafePointer<CChar>?, _ key: UnsafePointer<UInt8>?, _ keySize: Int,
                              _ shouldCompact: cove_should_compact_fn?,
                              _ userdata: UnsafeMutableRawPointer?, _ outCompacted: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    outCompacted?.pointee = false
    return entry { () throws(CFailure) in
        let file = try string(path, "path", in: "cove_compact_file")
        let data = try encryptionKey(key, keySize, in: "cove_compact_file")
        let compacted = try call { () throws(CoveError) -> Bool in
            try Realm.compactFile(atPath: file, encryptionKey: data) { total, used in shouldCompact.map { $0(userdata, total, used) } ?? true }
        }
        outCompacted?.pointee = compacted
    }
}

@c @implementation
public func cove_config_set_should_compact_on_launch(_ config: OpaquePointer?, _ shouldCompact: cove_should_compact_fn?,
                                                     _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_should_compact_on_launch")
        if let shouldCompact {
            c.shouldCompact = CompactCallback(shouldCompact, userdata, freeUserdata)
        } else {
            c.shouldCompact = nil
            freeUserdata?(userdata)
        }
    }
}

@c @implementation
public func cove_recover_file(_ damagedPath: UnsafePointer<CChar>?, _ outPath: UnsafePointer<CChar>?,
                              _ key: UnsafePointer<UInt8>?, _ keySize: Int,
                              _ outReportJSON: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> cove_status_t {
    outReportJSON?.pointee = nil
    return entry { () throws(CFailure) in
        let damaged = try string(damagedPath, "damaged_path", in: "cove_recover_file")
        let out = try string(outPath, "out_path", in: "cove_recover_file")
        let data = try encryptionKey(key, keySize, in: "cove_recover_file")
        let report = try call { () throws(CoveError) in try Realm.salvage(fromFile: damaged, toFile: out, encryptionKey: data) }
        outReportJSON?.pointee = strdup(report.json().serialized())
    }
}
