// HTTP for the sync session, through libcurl: one easy handle per session thread (reused, so its
// connection stays open between requests), TLS verified by default, a bearer token on every
// request, bounded response bodies, and a way to cut a long poll short when the session stops.
import CCoveCurl
import CoveCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An answer: the status and the body.
struct SyncHTTPResponse {
    var status: Int
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The server's error message (`{"error": {"code", "message"}}`), or the status.
    var errorMessage: String {
        if let json = try? JSONValue(parsing: text), case .string(let message)? = json["error"]?["message"] {
            if case .string(let code)? = json["error"]?["code"] { return "\(code): \(message)" }
            return message
        }
        return "HTTP status \(status)"
    }
}

/// Why a request got no answer.
struct SyncTransportError: Error {
    var message: String
}

private let curlReady: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

/// One connection's worth of HTTP: a libcurl easy handle used by one thread at a time.
final class SyncHTTP: @unchecked Sendable {
    private let handle: UnsafeMutableRawPointer
    /// A multi handle driving `handle`, so that `cancel()` can wake a request waiting for its
    /// answer at once (an easy handle alone looks at its progress callback once a second).
    private let multi: UnsafeMutableRawPointer
    private let base: String
    private let token: String
    private let trusted: String?
    /// The longest body accepted (a download batch is bounded by the server well below).
    static let maxBody = 256 << 20
    /// Set to end a request in progress early (the session is stopping or pausing).
    let cancelled = Atomic<Bool>(false)

    init(configuration: SyncConfiguration) throws(CoveError) {
        guard curlReady, let h = curl_easy_init() else { throw CoveError(.io, "sync: libcurl could not start") }
        guard let m = curl_multi_init() else {
            curl_easy_cleanup(h)
            throw CoveError(.io, "sync: libcurl could not start")
        }
        handle = h
        multi = m
        var url = configuration.url
        while url.hasSuffix("/") { url.removeLast() }
        base = url
        token = configuration.token
        trusted = configuration.trustedCertificatesPath
    }

    deinit {
        curl_multi_cleanup(multi)
        curl_easy_cleanup(handle)
    }

    /// Ends the request in progress (and the next, until `request` is called again after the
    /// flag is cleared) at once.
    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        curl_multi_wakeup(multi)
    }

    /// Runs the transfer set up on `handle` until it ends or is cancelled.
    private func perform() -> CURLcode {
        curl_multi_add_handle(multi, handle)
        defer { curl_multi_remove_handle(multi, handle) }
        var running: Int32 = 1
        while true {
            if cancelled.load(ordering: .relaxed) { return CURLE_ABORTED_BY_CALLBACK }
            let rc = curl_multi_perform(multi, &running)
            if rc != CURLM_OK { return CURLE_FAILED_INIT }
            if running == 0 { break }
            _ = curl_multi_poll(multi, nil, 0, 1000, nil)
        }
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            if message.pointee.msg == CURLMSG_DONE { return message.pointee.data.result }
        }
        return CURLE_FAILED_INIT
    }

    /// A request to `path` (with its query), GET without a body, POST with one.
    func request(_ path: String, body: [UInt8]?, timeout: Double) throws(SyncTransportError) -> SyncHTTPResponse {
        curl_easy_reset(handle)
        final class Sink {
            var bytes: [UInt8] = []
            var tooLong = false
            var cancel: (() -> Bool)?
        }
        let sink = Sink()
        let me = self
        sink.cancel = { me.cancelled.load(ordering: .relaxed) }
        let sinkPointer = Unmanaged.passUnretained(sink).toOpaque()
        var headers: UnsafeMutablePointer<curl_slist>?
        headers = curl_slist_append(headers, "Authorization: Bearer \(token)")
        headers = curl_slist_append(headers, "Accept: application/json")
        headers = curl_slist_append(headers, "Expect:")
        if body != nil { headers = curl_slist_append(headers, "Content-Type: application/x-ndjson") }
        defer { curl_slist_free_all(headers) }
        _ = cove_curl_set_string(handle, CURLOPT_URL, base + path)
        _ = cove_curl_set_headers(handle, headers)
        _ = cove_curl_set_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = cove_curl_set_long(handle, CURLOPT_TIMEOUT_MS, Int(timeout * 1000))
        _ = cove_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(min(timeout, 10) * 1000))
        _ = cove_curl_set_long(handle, CURLOPT_SSL_VERIFYPEER, 1)
        _ = cove_curl_set_long(handle, CURLOPT_SSL_VERIFYHOST, 2)
        _ = cove_curl_set_string(handle, CURLOPT_ACCEPT_ENCODING, "")
        if let trusted { _ = cove_curl_set_string(handle, CURLOPT_CAINFO, trusted) }
        _ = cove_curl_set_write(handle) { data, size, count, user in
            guard let data, let user else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
            let n = size * count
            if sink.bytes.count + n > SyncHTTP.maxBody { sink.tooLong = true; return 0 }
            sink.bytes.append(contentsOf: UnsafeRawBufferPointer(start: data, count: n))
            return n
        }
        _ = cove_curl_set_pointer(handle, CURLOPT_WRITEDATA, sinkPointer)
        _ = cove_curl_set_long(handle, CURLOPT_NOPROGRESS, 0)
        _ = cove_curl_set_progress(handle) { user, _, _, _, _ in
            guard let user else { return 0 }
            let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
            return (sink.cancel?() ?? false) ? 1 : 0
        }
        _ = cove_curl_set_pointer(handle, CURLOPT_XFERINFODATA, sinkPointer)
        let code: CURLcode = if let body {
            body.withUnsafeBytes { raw in
                _ = cove_curl_set_long(handle, CURLOPT_POST, 1)
                _ = cove_curl_set_size(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(raw.count))
                _ = cove_curl_set_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
                return perform()
            }
        } else {
            perform()
        }
        withExtendedLifetime(sink) {}
        if sink.tooLong { throw SyncTransportError(message: "the server's answer is longer than \(Self.maxBody) bytes") }
        guard code == CURLE_OK else {
            if code == CURLE_ABORTED_BY_CALLBACK { throw SyncTransportError(message: "cancelled") }
            throw SyncTransportError(message: String(cString: curl_easy_strerror(code)))
        }
        var status = 0
        _ = cove_curl_response_code(handle, &status)
        return SyncHTTPResponse(status: status, body: sink.bytes)
    }
}
