// What subscriptions put on the wire besides changesets: the lines of a subscribed download (a
// header, then whole object states or removals) and the body that sends a subscription set. The
// writers are canonical, as the changeset lines' are; the readers as strict: every member is
// required or refused by name, every value type-checked, every error names the line and field.

/// One line of a subscribed download after its header: an object's whole merge state, or the
/// news that an object is not covered (any more, or is deleted).
public enum SyncStateLine: Sendable {
    /// `{"object": {"class": "Dog", "key": "rex", "state": "<base64>"}}`: the object's merge
    /// state at the server, for the client to merge into its own.
    case object(SyncObjectRef, SyncObjectState)
    /// `{"remove": {"class": "Dog", "key": "rex"}}`: the client takes the object out of its file
    /// without syncing that as a delete.
    case remove(SyncObjectRef)

    /// The object the line is about.
    public var object: SyncObjectRef {
        switch self {
        case .object(let ref, _), .remove(let ref): return ref
        }
    }

    /// The line's JSON, without the line feed.
    public func encode() -> String {
        var json = JSONWriter()
        json.openObject()
        switch self {
        case .object(let ref, let state):
            json.key("object")
            StateLines.writeRef(ref, to: &json)
            json.key("state")
            json.string(Base64.encode(state.binary()))
            json.closeObject()
        case .remove(let ref):
            json.key("remove")
            StateLines.writeRef(ref, to: &json)
            json.closeObject()
        }
        json.closeObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Reads one line (without its line feed).
    ///
    /// - Parameter line: the line's number, for messages.
    /// - Throws: `SyncError(.malformedEncoding)` naming the line and the field.
    public init(json text: String, line: Int = 1, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) {
        let json = try StateLines.parse(Array(text.utf8), line: line, limits: limits, expected: "an object or remove line")
        let d = ChangesetDecoder(line: line, limits: limits)
        guard case .object(let top) = json, top.count == 1, let (kind, body) = top.first, kind == "object" || kind == "remove" else {
            throw d.fail("line", "expected an object with one member, 'object' or 'remove'")
        }
        if kind == "remove" {
            let m = try d.members(body, "remove", ["class", "key"])
            self = .remove(try StateLines.ref(m, "remove", d))
            return
        }
        let m = try d.members(body, "object", ["class", "key", "state"])
        let ref = try StateLines.ref(m, "object", d)
        guard let bytes = Base64.decode(try d.string(try d.member(m, "state", "object"), "object.state")) else {
            throw d.fail("object.state", "expected base64 text (RFC 4648, padded)")
        }
        do {
            self = .object(ref, try SyncObjectState(binary: bytes))
        } catch {
            throw d.fail("object.state", error.message)
        }
    }
}

/// The first line of every download answer. A bootstrap's header is
/// `{"bootstrap": {"set": n, "server_version": v, "next": "<cursor>" or null}, "count": c, "latest": l}`;
/// any other download's `{"to": t, "more": bool, "count": c, "latest": l}`.
public struct SyncDownloadHeader: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// A batch of a bootstrap of subscription set `set`: `serverVersion` is where the
        /// downloads after the bootstrap start; `next` the cursor of the next batch, nil on the
        /// last.
        case bootstrap(set: Int64, serverVersion: Int64, next: String?)
        /// A batch of the history up to server version `to`; `more` says that the next batch is
        /// ready at once.
        case steady(to: Int64, more: Bool)
    }

    public var kind: Kind
    /// How many lines follow the header.
    public var count: Int
    /// The newest server version the server knew of as it answered.
    public var latest: Int64

    public init(_ kind: Kind, count: Int, latest: Int64) {
        self.kind = kind
        self.count = count
        self.latest = latest
    }

    /// The header's JSON, without the line feed.
    public func encode() -> String {
        var json = JSONWriter()
        json.openObject()
        switch kind {
        case .bootstrap(let set, let serverVersion, let next):
            json.key("bootstrap")
            json.openObject()
            json.key("set")
            json.raw(String(set))
            json.key("server_version")
            json.raw(String(serverVersion))
            json.key("next")
            if let next { json.string(next) } else { json.raw("null") }
            json.closeObject()
        case .steady(let to, let more):
            json.key("to")
            json.raw(String(to))
            json.key("more")
            json.raw(more ? "true" : "false")
        }
        json.key("count")
        json.raw(String(count))
        json.key("latest")
        json.raw(String(latest))
        json.closeObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Reads a header line of either kind (without its line feed).
    ///
    /// - Throws: `SyncError(.malformedEncoding)` naming the line and the field: a member missing
    ///   or unknown, a negative number, a set version below 1, or `latest` below `to`.
    public init(json text: String, line: Int = 1, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) {
        let json = try StateLines.parse(Array(text.utf8), line: line, limits: limits, expected: "a download header")
        let d = ChangesetDecoder(line: line, limits: limits)
        guard case .object(let top) = json else { throw d.fail("header", "expected an object, got \(json.kindName)") }
        func count(_ m: [String: JSONValue], _ name: String, min: Int64 = 0) throws(SyncError) -> Int64 {
            let v = try d.int64(try d.member(m, name, name), name)
            guard v >= min else { throw d.fail(name, "\(v) is less than \(min)") }
            return v
        }
        if top.contains(where: { $0.0 == "bootstrap" }) {
            let m = try d.members(json, "header", ["bootstrap", "count", "latest"])
            let b = try d.members(try d.member(m, "bootstrap", "bootstrap"), "bootstrap", ["set", "server_version", "next"])
            let set = try count(b, "set", min: 1)
            let serverVersion = try count(b, "server_version")
            var next: String?
            switch b["next"] {
            case .null?: next = nil
            case .string(let s)? where !s.isEmpty: next = s
            default: throw d.fail("bootstrap.next", "expected a non-empty string or null")
            }
            kind = .bootstrap(set: set, serverVersion: serverVersion, next: next)
            self.count = Int(try count(m, "count"))
            latest = try count(m, "latest")
        } else {
            let m = try d.members(json, "header", ["to", "more", "count", "latest"])
            let to = try count(m, "to")
            guard case .bool(let more) = m["more"] else { throw d.fail("more", "expected a boolean, got \(m["more"]?.kindName ?? "nothing")") }
            kind = .steady(to: to, more: more)
            self.count = Int(try count(m, "count"))
            latest = try count(m, "latest")
            guard latest >= to else { throw d.fail("latest", "\(latest) is less than 'to', \(to)") }
        }
    }
}

/// A download answer: its header and the lines after it.
public struct SyncStateDownload: Sendable {
    public var header: SyncDownloadHeader
    public var lines: [SyncStateLine]

    public init(header: SyncDownloadHeader, lines: [SyncStateLine]) {
        self.header = header
        self.lines = lines
    }
}

/// Encodes and decodes subscribed downloads as a whole: a header line, then object or remove
/// lines, each ended by a line feed.
public enum StateLines {
    /// The header and the lines, each ended by a line feed; the header's count is set to the
    /// lines'.
    public static func encode(_ download: SyncStateDownload) -> String {
        var header = download.header
        header.count = download.lines.count
        return header.encode() + "\n" + download.lines.map { $0.encode() + "\n" }.joined()
    }

    /// Reads a subscribed download's answer: a header, then exactly `count` object or remove
    /// lines (the last line feed may be missing).
    ///
    /// - Throws: `SyncError(.malformedEncoding)` naming the line (from 1) and the field, for the
    ///   first line that is wrong, or when the lines are fewer or more than the header says.
    public static func decode(_ text: String, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) -> SyncStateDownload {
        try decode(bytes: Array(text.utf8), limits: limits)
    }

    /// Reads a download from its bytes (lines split at each line feed byte, without looking at
    /// characters: a download of many states is split in one pass).
    public static func decode(bytes: [UInt8], limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) -> SyncStateDownload {
        var lines: [String] = []
        func take(_ range: Range<Int>) throws(SyncError) {
            guard let line = String(validating: bytes[range], as: UTF8.self) else {
                throw SyncError(.malformedEncoding, "line \(lines.count + 1): not valid UTF-8")
            }
            lines.append(line)
        }
        var start = 0
        for (i, b) in bytes.enumerated() where b == 0x0A {
            try take(start..<i)
            start = i + 1
        }
        if start < bytes.count { try take(start..<bytes.count) }
        guard let first = lines.first else {
            throw SyncError(.malformedEncoding, "line 1: an empty answer; expected a download header")
        }
        let header = try SyncDownloadHeader(json: String(first), line: 1, limits: limits)
        guard lines.count - 1 == header.count else {
            throw SyncError(.malformedEncoding, "line 1: field 'count': the header counts \(header.count) lines, but \(lines.count - 1) follow it")
        }
        var states: [SyncStateLine] = []
        states.reserveCapacity(header.count)
        for (i, line) in lines.dropFirst().enumerated() {
            states.append(try SyncStateLine(json: String(line), line: i + 2, limits: limits))
        }
        return SyncStateDownload(header: header, lines: states)
    }

    /// Parses one line's JSON within the limits.
    static func parse(_ bytes: [UInt8], line: Int, limits: ChangesetLimits, expected: String) throws(SyncError) -> JSONValue {
        guard !bytes.isEmpty else { throw SyncError(.malformedEncoding, "line \(line): an empty line; expected \(expected)") }
        guard bytes.count <= limits.maxLineBytes else {
            throw SyncError(.malformedEncoding, "line \(line): \(bytes.count) bytes, more than the \(limits.maxLineBytes) a line may have")
        }
        do {
            return try JSONReader.parse(bytes, 0..<bytes.count, maxDepth: limits.maxDepth, maxStringBytes: limits.maxStringBytes)
        } catch {
            throw SyncError(.malformedEncoding, "line \(line), byte \(error.offset + 1): \(error.message)")
        }
    }

    /// `{"class": ..., "key": ...}` without the closing brace, for the line to add members.
    static func writeRef(_ ref: SyncObjectRef, to json: inout JSONWriter) {
        json.openObject()
        json.key("class")
        json.string(ref.className)
        json.key("key")
        ChangesetLines.write(ref.key.value, to: &json)
    }

    static func ref(_ m: [String: JSONValue], _ field: String, _ d: ChangesetDecoder) throws(SyncError) -> SyncObjectRef {
        let className = try d.name(try d.member(m, "class", field), field + ".class", "class")
        let key = try d.primaryKey(try d.member(m, "key", field), field + ".key")
        do {
            return try SyncObjectRef(className: className, key: key)
        } catch {
            throw d.fail(field + ".class", error.message)
        }
    }
}

/// One subscription of a set: `{"name": "adults" or null, "class": "Dog", "query": "age > $0",
/// "arguments": [18]}`.
public struct SyncSubscriptionEntry: Hashable, Sendable {
    public var name: String?
    public var className: String
    public var query: String
    /// `$0` first: a value, or a list of values (a JSON array) for `IN $n`.
    public var arguments: [SubscriptionArgument]

    public init(name: String?, className: String, query: String, arguments: [SubscriptionArgument] = []) {
        self.name = name
        self.className = className
        self.query = query
        self.arguments = arguments
    }

    /// The subscription's query, checked against `schema`.
    ///
    /// - Throws: the core's `SyncError` for a query that does not parse or check.
    public func query(schema: SubscriptionSchema) throws(SyncError) -> SubscriptionQuery {
        try SubscriptionQuery(className: className, query: query, schema: schema, arguments: arguments)
    }
}

/// The body of `POST /v1/subscriptions`: a file's whole subscription set and its version.
public struct SyncSubscriptionSetBody: Hashable, Sendable {
    /// The most subscriptions a set may hold.
    public static let maxSubscriptions = 10_000

    /// 1 for a file's first set, growing with each new one.
    public var version: Int64
    public var subscriptions: [SyncSubscriptionEntry]

    public init(version: Int64, subscriptions: [SyncSubscriptionEntry]) {
        self.version = version
        self.subscriptions = subscriptions
    }

    /// The body's JSON (one line, no line feed).
    public func encode() -> String {
        var json = JSONWriter()
        json.openObject()
        json.key("version")
        json.raw(String(version))
        json.key("subscriptions")
        json.openArray()
        for s in subscriptions {
            json.openObject()
            json.key("name")
            if let name = s.name { json.string(name) } else { json.raw("null") }
            json.key("class")
            json.string(s.className)
            json.key("query")
            json.string(s.query)
            json.key("arguments")
            json.openArray()
            for argument in s.arguments {
                switch argument {
                case .value(let v): ChangesetLines.write(v, to: &json)
                case .list(let values):
                    json.openArray()
                    for v in values { ChangesetLines.write(v, to: &json) }
                    json.closeArray()
                }
            }
            json.closeArray()
            json.closeObject()
        }
        json.closeArray()
        json.closeObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// Reads a body.
    ///
    /// - Throws: `SyncError(.malformedEncoding)` naming the field: `subscriptions[2].class`.
    public init(json text: String, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) {
        let json = try StateLines.parse(Array(text.utf8), line: 1, limits: limits, expected: "a subscription set")
        let d = ChangesetDecoder(context: "subscription set", limits: limits)
        let m = try d.members(json, "body", ["version", "subscriptions"])
        version = try d.int64(try d.member(m, "version", "version"), "version")
        guard version >= 1 else { throw d.fail("version", "\(version) is less than 1") }
        guard case .array(let list) = m["subscriptions"] else {
            throw d.fail("subscriptions", "expected an array, got \(m["subscriptions"]?.kindName ?? "nothing")")
        }
        guard list.count <= Self.maxSubscriptions else {
            throw d.fail("subscriptions", "\(list.count) subscriptions, more than the \(Self.maxSubscriptions) a set may have")
        }
        var entries: [SyncSubscriptionEntry] = []
        var argumentCount = 0
        for (i, item) in list.enumerated() {
            let field = "subscriptions[\(i)]"
            let s = try d.members(item, field, ["name", "class", "query", "arguments"])
            var name: String?
            switch s["name"] {
            case .null?: name = nil
            case .string(let text)?: name = text
            default: throw d.fail(field + ".name", "expected a string or null, got \(s["name"]?.kindName ?? "nothing")")
            }
            let className = try d.name(try d.member(s, "class", field), field + ".class", "class")
            let query = try d.string(try d.member(s, "query", field), field + ".query")
            guard case .array(let args) = s["arguments"] else {
                throw d.fail(field + ".arguments", "expected an array, got \(s["arguments"]?.kindName ?? "nothing")")
            }
            var arguments: [SubscriptionArgument] = []
            for (j, arg) in args.enumerated() {
                let argField = field + ".arguments[\(j)]"
                if case .array(let values) = arg {
                    argumentCount += values.count
                    var list: [SyncValue] = []
                    for (k, v) in values.enumerated() { list.append(try d.value(v, argField + "[\(k)]")) }
                    arguments.append(.list(list))
                } else {
                    argumentCount += 1
                    arguments.append(.value(try d.value(arg, argField)))
                }
                guard argumentCount <= limits.maxOperations else {
                    throw d.fail(argField, "more than the \(limits.maxOperations) argument values a set may have")
                }
            }
            entries.append(SyncSubscriptionEntry(name: name, className: className, query: query, arguments: arguments))
        }
        subscriptions = entries
    }
}

extension SyncPrimaryKey {
    /// The key as the lines write it: `4`, `"rex"`, `{"oid":"…"}`, `{"uuid":"…"}`. Canonical:
    /// equal keys give equal text, so a database can key objects by it.
    public var json: String {
        var writer = JSONWriter()
        ChangesetLines.write(value, to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// Reads a key written as `json` writes it.
    ///
    /// - Throws: `SyncError(.malformedEncoding)` when the text is not a primary key's JSON.
    public init(json text: String, limits: ChangesetLimits = ChangesetLimits()) throws(SyncError) {
        let json = try StateLines.parse(Array(text.utf8), line: 1, limits: limits, expected: "a primary key")
        self = try ChangesetDecoder(context: "primary key", limits: limits).primaryKey(json, "key")
    }
}
