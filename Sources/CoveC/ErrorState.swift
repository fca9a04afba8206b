// The per-thread error message of the C API and the helpers every entry point uses to report a
// status. Nothing here traps: a failure becomes a status and a message.
import CCove
import Cove
#if canImport(Glibc)
import Glibc
#endif

/// The thread-specific slot holding the last error message (a malloc'd C string).
let errorMessageKey: pthread_key_t = {
    var key = pthread_key_t()
    _ = pthread_key_create(&key) { pointer in free(pointer) }
    return key
}()

/// A failure already recorded as this thread's message, on its way out as a status.
struct CFailure: Error {
    let status: cove_status_t
}

/// Records `message` as this thread's last error and returns the failure to throw.
func failure(_ status: Int32, _ message: String) -> CFailure {
    let old = pthread_getspecific(errorMessageKey)
    _ = pthread_setspecific(errorMessageKey, strdup(message))
    free(old)
    return CFailure(status: cove_status_t(status))
}

/// An invalid-argument failure whose message starts with the function's name.
func invalidArgument(_ function: StaticString, _ message: String) -> CFailure {
    failure(Int32(COVE_ERR_INVALID_ARGUMENT), "\(function): \(message)")
}

/// The body of every fallible entry point: runs `body` and turns its failure into a status.
@inline(__always)
func entry(_ body: () throws(CFailure) -> Void) -> cove_status_t {
    do {
        try body()
        return cove_status_t(COVE_OK)
    } catch {
        return error.status
    }
}

/// Runs a Swift API call, recording its error as this thread's message.
@inline(__always)
func call<R>(_ body: () throws(CoveError) -> R) throws(CFailure) -> R {
    do {
        return try body()
    } catch {
        throw failure(error.code.rawValue, error.message)
    }
}

/// An out parameter that must not be NULL.
@inline(__always)
func required<T>(_ pointer: UnsafeMutablePointer<T>?, _ name: StaticString, in function: StaticString)
    throws(CFailure) -> UnsafeMutablePointer<T>
{
    guard let pointer else { throw invalidArgument(function, "\(name) is NULL") }
    return pointer
}

/// A NUL-terminated UTF-8 argument as a Swift string.
func string(_ pointer: UnsafePointer<CChar>?, _ name: StaticString, in function: StaticString)
    throws(CFailure) -> String
{
    guard let pointer else { throw invalidArgument(function, "\(name) is NULL") }
    guard let s = String(validatingCString: pointer) else {
        throw invalidArgument(function, "\(name) is not valid UTF-8")
    }
    return s
}

/// An optional NUL-terminated UTF-8 argument: nil for NULL, else a string that must not be empty
/// (`hint` follows "is empty" in the message).
func nonEmptyStringOrNil(_ pointer: UnsafePointer<CChar>?, _ name: StaticString, in function: StaticString,
                         hint: String = "") throws(CFailure) -> String? {
    guard let pointer else { return nil }
    let s = try string(pointer, name, in: function)
    if s.isEmpty { throw invalidArgument(function, "\(name) is empty\(hint)") }
    return s
}
