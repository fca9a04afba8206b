// A synced file's subscription set, kept in the file (catalog tree `07 05`) so that it commits
// with the objects and survives restarts: the queries the file subscribes to, the version of the
// set (one more at each change), how far the server has taken it (sent) and downloaded it
// (complete), and the server's refusal of a version, if any.
import CoveStorage
import CoveSyncCore
import FoundationEssentials

/// One subscription: a class and a query over it, named or not.
package struct SubscriptionRecordEntry: Equatable, Sendable {
    package var name: String?
    package var className: String
    /// The query text, its arguments written `$0`, `$1`, ...
    package var query: String
    package var arguments: [QueryArgument]
    /// Milliseconds since 1970.
    package var createdAt: Int64
    package var updatedAt: Int64

    package init(name: String?, className: String, query: String, arguments: [QueryArgument], createdAt: Int64, updatedAt: Int64) {
        self.name = name
        self.className = className
        self.query = query
        self.arguments = arguments
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Whether two subscriptions ask for the same objects (class, query and arguments).
    package func hasSameQuery(as other: SubscriptionRecordEntry) -> Bool {
        className == other.className && query == other.query && arguments == other.arguments
    }
}

/// The file's subscription set and where it stands.
package struct SyncSubscriptionRecord: Equatable, Sendable {
    /// The set's version: 0 before the first change, one more at each.
    package var version: UInt64 = 0
    /// The newest version the server has taken (0: none; the file downloads every change).
    package var sentVersion: UInt64 = 0
    /// The newest version whose objects have been downloaded (its bootstrap ended).
    package var completeVersion: UInt64 = 0
    /// The version the server refused, with its message; 0 when none is refused.
    package var errorVersion: UInt64 = 0
    package var errorMessage = ""
    package var entries: [SubscriptionRecordEntry] = []

    package init() {}

    func encoded() -> [UInt8] {
        var out: [UInt8] = [1]
        for v in [version, sentVersion, completeVersion, errorVersion] { out += CatalogKey.bigEndian(v, bytes: 8) }
        Self.put(errorMessage, &out)
        out += CatalogKey.bigEndian(UInt64(entries.count), bytes: 4)
        for e in entries {
            out.append(e.name == nil ? 0 : 1)
            Self.put(e.name ?? "", &out)
            Self.put(e.className, &out)
            Self.put(e.query, &out)
            out += CatalogKey.bigEndian(UInt64(e.arguments.count), bytes: 4)
            for a in e.arguments {
                let bytes: [UInt8]
                switch a {
                case .value(let v): out.append(0); bytes = v.encodeMixed()
                case .list(let vs): out.append(1); bytes = Value.list(vs).encodeMixed()
                }
                out += CatalogKey.bigEndian(UInt64(bytes.count), bytes: 4) + bytes
            }
            out += CatalogKey.bigEndian(UInt64(bitPattern: e.createdAt), bytes: 8)
            out += CatalogKey.bigEndian(UInt64(bitPattern: e.updatedAt), bytes: 8)
        }
        return out
    }

    private static func put(_ text: String, _ out: inout [UInt8]) {
        let bytes = Array(text.utf8)
        out += CatalogKey.bigEndian(UInt64(bytes.count), bytes: 4) + bytes
    }

    init(decoding bytes: [UInt8]) throws(CoveError) {
        var r = Reader(bytes: bytes)
        guard try r.byte() == 1 else { throw Reader.fail("unknown form") }
        version = try r.number(8)
        sentVersion = try r.number(8)
        completeVersion = try r.number(8)
        errorVersion = try r.number(8)
        errorMessage = try r.text()
        let count = try r.number(4)
        for _ in 0..<count {
            let named = try r.byte() == 1
            let name = try r.text()
            let className = try r.text()
            let query = try r.text()
            var arguments: [QueryArgument] = []
            for _ in 0..<(try r.number(4)) {
                let kind = try r.byte()
                let value = try Value.decodeMixed(try r.slice(Int(try r.number(4))))
                switch (kind, value) {
                case (0, _): arguments.append(.value(value))
                case (1, .list(let vs)): arguments.append(.list(vs))
                default: throw Reader.fail("an argument of unknown kind \(kind)")
                }
            }
            let created = Int64(bitPattern: try r.number(8))
            let updated = Int64(bitPattern: try r.number(8))
            entries.append(SubscriptionRecordEntry(name: named ? name : nil, className: className, query: query,
                                                 arguments: arguments, createdAt: created, updatedAt: updated))
        }
        guard r.at == bytes.count else { throw Reader.fail("\(bytes.count - r.at) bytes after the set") }
    }

    /// Reads the record's fields, every length checked.
    private struct Reader {
        let bytes: [UInt8]
        var at = 0

        static func fail(_ what: String) -> CoveError { CoveError(.corrupt, "the file's subscription set: \(what)") }

        mutating func slice(_ n: Int) throws(CoveError) -> [UInt8] {
            guard n >= 0, n <= bytes.count - at else { throw Self.fail("cut short") }
            defer { at += n }
            return Array(bytes[at..<(at + n)])
        }

        mutating func byte() throws(CoveError) -> UInt8 { try slice(1)[0] }

        mutating func number(_ n: Int) throws(CoveError) -> UInt64 { CatalogKey.number(bigEndian: try slice(n)) }

        mutating func text() throws(CoveError) -> String {
            let raw = try slice(Int(try number(4)))
            guard let s = String(validating: raw, as: UTF8.self) else { throw Self.fail("text that is not UTF-8") }
            return s
        }
    }
}

extension CatalogKey {
    /// The subscription set (one entry).
    static let syncSubscriptions: [UInt8] = [syncTag, 5]
}

extension ObjectStore {
    /// The file's subscription set; an empty record (version 0) when it has never subscribed.
    package func syncSubscriptions() throws(CoveError) -> SyncSubscriptionRecord {
        let t = try tree(CatalogKey.syncSubscriptions)
        let bytes: [UInt8]?
        do { bytes = try t.get([1]) } catch { throw CoveError(error) }
        guard let bytes else { return SyncSubscriptionRecord() }
        return try SyncSubscriptionRecord(decoding: bytes)
    }

    package func writeSyncSubscriptions(_ record: SyncSubscriptionRecord) throws(CoveError) {
        try requireWrite()
        try editTree(CatalogKey.syncSubscriptions) { t throws(StorageError) in _ = try t.put([1], record.encoded()) }
    }
}

extension ObjectStore {
    /// The file's schema as subscriptions check queries against it.
    package func subscriptionSchema() throws(CoveError) -> SubscriptionSchema {
        var notation: [String: [String: String]] = [:]
        for cls in syncedClasses() {
            var properties: [String: String] = [:]
            for p in cls.properties { properties[p.name] = p.typeNotation }
            notation[cls.className] = properties
        }
        do { return try SubscriptionSchema(notation: notation) } catch { throw CoveError(.schema, error.message) }
    }

    /// A query argument as sync carries it.
    func subscriptionArgument(_ a: QueryArgument) throws(CoveError) -> SubscriptionArgument {
        switch a {
        case .value(let v): return .value(try syncValue(v))
        case .list(let vs):
            var out: [SyncValue] = []
            for v in vs { out.append(try syncValue(v)) }
            return .list(out)
        }
    }

    /// Checks a subscription against the subset of the query language a server answers, and
    /// against this file's schema, so that `subscribe` refuses at once what the server would.
    /// - Throws: `.querySyntax` for text that does not parse, `.invalidArgument` for a query
    ///   outside the subset or that does not fit the schema (the message says which).
    package func checkSubscription(className: String, query: String, arguments: [QueryArgument]) throws(CoveError) {
        guard let cls = schema[className], !cls.isEmbedded else {
            throw CoveError(.invalidArgument, "cannot subscribe to class '\(className)': the synced file has no such class")
        }
        var converted: [SubscriptionArgument] = []
        for a in arguments { converted.append(try subscriptionArgument(a)) }
        let schema = try subscriptionSchema()
        do throws(SyncError) {
            _ = try SubscriptionQuery(className: cls.className, query: query, schema: schema, arguments: converted)
        } catch {
            throw CoveError(error.code == .querySyntax ? .querySyntax : .invalidArgument, error.message)
        }
    }

    /// The set as its upload to the server carries it.
    package func subscriptionBody(_ record: SyncSubscriptionRecord) throws(CoveError) -> SyncSubscriptionSetBody {
        var entries: [SyncSubscriptionEntry] = []
        for e in record.entries {
            var arguments: [SubscriptionArgument] = []
            for a in e.arguments { arguments.append(try subscriptionArgument(a)) }
            entries.append(SyncSubscriptionEntry(name: e.name, className: e.className, query: e.query, arguments: arguments))
        }
        return SyncSubscriptionSetBody(version: Int64(record.version), subscriptions: entries)
    }
}
