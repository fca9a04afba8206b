// Version, status names, error messages, reference counting and buffers: the functions of
// include/cove.h that belong to no particular handle.
import CCove
import Cove
#if canImport(Glibc)
import Glibc
#endif

/// C strings with static lifetime: made once, never freed, never written after creation, so
/// sharing them between threads is safe.
private nonisolated(unsafe) let versionCString = permanentCString(CoveVersion.string)
private nonisolated(unsafe) let emptyCString = permanentCString("")
private nonisolated(unsafe) let statusNameCStrings: [UnsafeMutablePointer<CChar>] =
    [permanentCString("COVE_OK")] + CoveError.Code.allCases.map { permanentCString($0.statusName) }
private nonisolated(unsafe) let unknownStatusCString = permanentCString("COVE_ERR_UNKNOWN")

/// A NUL-terminated copy of `s` that is never freed.
private func permanentCString(_ s: String) -> UnsafeMutablePointer<CChar> {
    let bytes = Array(s.utf8CString)
    let p = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    p.initialize(from: bytes, count: bytes.count)
    return p
}

@c @implementation
public func cove_version_string() -> UnsafePointer<CChar>! {
    UnsafePointer(versionCString)
}

@c @implementation
public func cove_version_number() -> Int32 {
    Int32(CoveVersion.number)
}

@c @implementation
public func cove_last_error_message() -> UnsafePointer<CChar>! {
    if let message = pthread_getspecific(errorMessageKey) {
        return UnsafePointer(message.assumingMemoryBound(to: CChar.self))
    }
    return UnsafePointer(emptyCString)
}

@c @implementation
public func cove_status_name(_ status: cove_status_t) -> UnsafePointer<CChar>! {
    // Codes are numbered 0, 1, 2, ... with no gaps, so the code is the index.
    if status >= 0 && Int(status) < statusNameCStrings.count {
        return UnsafePointer(statusNameCStrings[Int(status)])
    }
    return UnsafePointer(unknownStatusCString)
}

@c @implementation
public func cove_retain(_ handle: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let handle else { return nil }
    _ = Unmanaged<Handle>.fromOpaque(handle).retain()
    return handle
}

@c @implementation
public func cove_release(_ handle: UnsafeMutableRawPointer?) {
    guard let handle else { return }
    Unmanaged<Handle>.fromOpaque(handle).release()
}

@c @implementation
public func cove_free(_ buffer: UnsafeMutableRawPointer?) {
    free(buffer)
}

@c @implementation
public func cove_is_frozen(_ pointer: UnsafeRawPointer?, _ out: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_is_frozen")
        let h = try handle(pointer, Handle.self, "handle", in: "cove_is_frozen")
        if let r = h as? RealmHandle {
            out.pointee = r.realm.isFrozen
        } else if let child = h as? RealmChild {
            // A token passes handle()'s check (it can be stopped after a close); its realm cannot.
            try requireOpen(child.realmHandle.realm, in: "cove_is_frozen")
            out.pointee = child.realmHandle.realm.isFrozen
        } else {
            throw invalidArgument("cove_is_frozen", "handle is a \(type(of: h).kindName), which has no frozen state")
        }
    }
}

