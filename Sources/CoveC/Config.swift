// cove_config_*: building the configuration cove_open reads.
import CCove
import Cove
import FoundationEssentials

@c @implementation
public func cove_config_new(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_config_new")
        var configuration = Realm.Configuration()
        if let path {
            let p = try string(path, "path", in: "cove_config_new")
            if p.isEmpty { throw invalidArgument("cove_config_new", "path is empty (pass NULL for an in-memory realm)") }
            configuration.path = p
        } else {
            configuration.inMemory = true
        }
        out.pointee = ConfigHandle(configuration).retainedPointer()
    }
}

@c @implementation
public func cove_config_set_read_only(_ config: OpaquePointer?, _ readOnly: Bool) -> cove_status_t {
    entry { () throws(CFailure) in
        try handle(config, ConfigHandle.self, "config", in: "cove_config_set_read_only").configuration.readOnly = readOnly
    }
}

@c @implementation
public func cove_config_set_encryption_key(_ config: OpaquePointer?, _ key: UnsafePointer<UInt8>?, _ size: Int) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_encryption_key")
        c.configuration.encryptionKey = try encryptionKey(key, size, in: "cove_config_set_encryption_key")
    }
}

@c @implementation
public func cove_config_set_in_memory_identifier(_ config: OpaquePointer?, _ identifier: UnsafePointer<CChar>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_in_memory_identifier")
        c.configuration.inMemoryIdentifier = try nonEmptyStringOrNil(identifier, "identifier", in: "cove_config_set_in_memory_identifier")
    }
}

@c @implementation
public func cove_config_set_max_active_versions(_ config: OpaquePointer?, _ maxVersions: UInt64) -> cove_status_t {
    entry { () throws(CFailure) in
        try handle(config, ConfigHandle.self, "config", in: "cove_config_set_max_active_versions")
            .configuration.maxActiveVersions = maxVersions
    }
}

@c @implementation
public func cove_config_set_durability(_ config: OpaquePointer?, _ durability: Int32) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_durability")
        switch Int(durability) {
        case Int(COVE_DURABILITY_FULL): c.configuration.durability = .full
        case Int(COVE_DURABILITY_NO_SYNC): c.configuration.durability = .noSync
        case Int(COVE_DURABILITY_MEM_ONLY): c.configuration.durability = .memoryOnly
        default:
            throw invalidArgument("cove_config_set_durability",
                "durability \(durability) is not COVE_DURABILITY_FULL, _NO_SYNC or _MEM_ONLY")
        }
    }
}

@c @implementation
public func cove_config_set_write_timeout_ms(_ config: OpaquePointer?, _ timeoutMs: Int64) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_write_timeout_ms")
        if timeoutMs < -1 {
            throw invalidArgument("cove_config_set_write_timeout_ms", "timeout \(timeoutMs) ms is below -1 (forever)")
        }
        c.configuration.writeTimeoutMilliseconds = timeoutMs
    }
}

/// The key a C caller passes as bytes and a size: nil for NULL and 0, else exactly 64 bytes.
/// - Throws: `COVE_ERR_INVALID_ARGUMENT` naming `function` otherwise.
func encryptionKey(_ key: UnsafePointer<UInt8>?, _ size: Int, in function: StaticString) throws(CFailure) -> Data? {
    guard let key else {
        if size != 0 { throw invalidArgument(function, "key is NULL but key_size is \(size)") }
        return nil
    }
    guard size == 64 else { throw invalidArgument(function, "an encryption key has 64 bytes, not \(size)") }
    return Data(UnsafeBufferPointer(start: key, count: size))
}
