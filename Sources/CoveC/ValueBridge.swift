// cove_value_t <-> Value: every tag, length and UTF-8 string checked on the way in; strings and
// binaries handed out live in the realm handle's scratch buffers until its next write, refresh,
// delivery or close, as the header promises.
import CCove
@_spi(CoveBindings) import Cove
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

enum ValueBridge {
    /// The Value a caller passed. `what` names the argument in messages. A #COVE_TYPE_LIST or
    /// #COVE_TYPE_MAP value is a nested collection (what a mixed value may hold), its elements
    /// read the same way; `depth` counts the collections it is inside.
    static func value(_ pointer: UnsafePointer<cove_value_t>?, _ what: StaticString, in function: StaticString, depth: Int = 0) throws(CFailure) -> Value {
        guard let v = pointer?.pointee else { throw invalidArgument(function, "\(what) is NULL") }
        switch Int(v.type) {
        case Int(COVE_TYPE_NULL.rawValue): return .null
        case Int(COVE_TYPE_INT.rawValue): return .int(v.u.integer)
        case Int(COVE_TYPE_BOOL.rawValue): return .bool(v.u.boolean)
        case Int(COVE_TYPE_FLOAT.rawValue): return .float(v.u.fnum)
        case Int(COVE_TYPE_DOUBLE.rawValue): return .double(v.u.dnum)
        case Int(COVE_TYPE_STRING.rawValue):
            let bytes = try Self.buffer(UnsafeRawPointer(v.u.string.data), v.u.string.size, what, in: function)
            guard let s = String(utf8: bytes) else {
                throw invalidArgument(function, "\(what) is a string that is not valid UTF-8")
            }
            return .string(s)
        case Int(COVE_TYPE_BINARY.rawValue):
            return .data(try Self.bytes(UnsafeRawPointer(v.u.binary.data), v.u.binary.size, what, in: function))
        case Int(COVE_TYPE_TIMESTAMP.rawValue):
            let t = v.u.timestamp
            if (t.seconds > 0 && t.nanoseconds < 0) || (t.seconds < 0 && t.nanoseconds > 0) || abs(Int64(t.nanoseconds)) >= 1_000_000_000 {
                throw invalidArgument(function, "\(what) is a timestamp with seconds \(t.seconds) and nanoseconds \(t.nanoseconds): nanoseconds must be within ±999999999 and of the seconds' sign")
            }
            return .timestamp(Timestamp(seconds: t.seconds, nanoseconds: t.nanoseconds))
        case Int(COVE_TYPE_DECIMAL128.rawValue):
            var copy = v.u.decimal128
            let bytes = withUnsafeBytes(of: &copy) { Array($0) }
            do { return .decimal128(try Decimal128(bytes: bytes)) } catch { throw failure(error.code.rawValue, error.message) }
        case Int(COVE_TYPE_OBJECT_ID.rawValue):
            var copy = v.u.object_id
            let bytes = withUnsafeBytes(of: &copy) { Array($0) }
            do { return .objectId(try ObjectId(bytes: bytes)) } catch { throw failure(error.code.rawValue, error.message) }
        case Int(COVE_TYPE_UUID.rawValue):
            return .uuid(UUID(uuid: v.u.uuid))
        case Int(COVE_TYPE_LINK.rawValue):
            return .link(ObjectLink(classKey: v.u.link.class_key, objectKey: v.u.link.object_key))
        case Int(COVE_TYPE_LIST.rawValue), Int(COVE_TYPE_MAP.rawValue):
            guard depth < Value.maxNesting else {
                throw invalidArgument(function, "\(what) nests collections deeper than \(Value.maxNesting)")
            }
            let isMap = v.type == Int32(COVE_TYPE_MAP.rawValue)
            let items = try elements(pointer, map: isMap, in: function, depth: depth + 1)
            guard isMap else { return .list(items) }
            var entries: [String: Value] = [:]
            entries.reserveCapacity(items.count / 2)
            for k in stride(from: 0, to: items.count, by: 2) {
                guard case .string(let key) = items[k], entries.updateValue(items[k + 1], forKey: key) == nil else {
                    throw invalidArgument(function, "\(what) holds key \(items[k]) twice")
                }
            }
            return .dictionary(entries)
        default:
            throw invalidArgument(function, "\(what) has type tag \(v.type), which is not a cove_value_type_e")
        }
    }

    /// The elements a #COVE_TYPE_LIST value gives (with `map`, a #COVE_TYPE_MAP value's keys
    /// and values, alternating), for a collection property of a create.
    static func elements(_ pointer: UnsafePointer<cove_value_t>?, map: Bool, in function: StaticString, depth: Int = 0) throws(CFailure) -> [Value] {
        var out: [Value] = []
        try elements(pointer, map: map, in: function, depth: depth, into: &out)
        return out
    }

    /// `elements(_:map:in:depth:)` into `out`, whose values are replaced (its storage kept, so
    /// that a caller reading one object after another allocates it once).
    static func elements(_ pointer: UnsafePointer<cove_value_t>?, map: Bool, in function: StaticString, depth: Int = 0,
                         into out: inout [Value]) throws(CFailure) {
        guard let v = pointer?.pointee else { throw invalidArgument(function, "value is NULL") }
        let wanted = map ? Int32(COVE_TYPE_MAP.rawValue) : Int32(COVE_TYPE_LIST.rawValue)
        guard v.type == wanted else {
            throw failure(Int32(COVE_ERR_WRONG_TYPE),
                          "\(function): a \(map ? "map" : "list or set") takes its elements as a \(map ? "COVE_TYPE_MAP" : "COVE_TYPE_LIST") value, not type tag \(v.type)")
        }
        // size_t arrives as Int: a count above Int.max arrives negative.
        let count = v.u.elements.count
        let (n, overflow) = count.multipliedReportingOverflow(by: map ? 2 : 1)
        guard count >= 0, !overflow else { throw invalidArgument(function, "the elements' count \(UInt(bitPattern: count)) is too large") }
        if out.count > n { out.removeLast(out.count - n) }
        if n == 0 { return }
        guard let items = v.u.elements.items else { throw invalidArgument(function, "the elements are NULL with count \(count)") }
        out.reserveCapacity(n)
        for k in 0..<n {
            do throws(CFailure) {
                if map && k % 2 == 0 {
                    guard items[k].type == Int32(COVE_TYPE_STRING.rawValue) else {
                        throw invalidArgument(function, "key \(k / 2) has type tag \(items[k].type), not COVE_TYPE_STRING")
                    }
                }
                let element = try value(items + k, "value", in: function, depth: depth)
                if k < out.count { out[k] = element } else { out.append(element) }
            } catch {
                throw rewordedFailure(error, function, map ? (k % 2 == 0 ? "key \(k / 2)" : "value \(k / 2)") : "element \(k)")
            }
        }
    }

    private static func bytes(_ data: UnsafeRawPointer?, _ size: Int, _ what: StaticString, in function: StaticString) throws(CFailure) -> [UInt8] {
        Array(try buffer(data, size, what, in: function))
    }

    /// The caller's bytes in place (valid only during the call).
    private static func buffer(_ data: UnsafeRawPointer?, _ size: Int, _ what: StaticString, in function: StaticString) throws(CFailure) -> UnsafeRawBufferPointer {
        if size == 0 { return UnsafeRawBufferPointer(start: nil, count: 0) }
        guard let data else { throw invalidArgument(function, "\(what) has NULL data and size \(size)") }
        return UnsafeRawBufferPointer(start: data, count: size)
    }

    /// Fills `out` with `value`; string and binary bytes are kept in `realm`'s scratch buffers.
    static func write(_ value: Value, to out: UnsafeMutablePointer<cove_value_t>, realm: RealmHandle) {
        write(value, to: out, keep: realm.keep)
    }

    /// Fills `out` with `value`; `keep` copies string and binary bytes, and the elements of a
    /// nested collection, into memory that lives as long as the header promises for them (nil
    /// and 0 for no bytes). A nested list is a #COVE_TYPE_LIST value, a dictionary a
    /// #COVE_TYPE_MAP value with its keys in ascending order of their UTF-8 bytes.
    static func write(_ value: Value, to out: UnsafeMutablePointer<cove_value_t>,
                      keep: (UnsafeRawBufferPointer) -> (UnsafeMutableRawPointer?, Int)) {
        var v = cove_value_t()
        switch value {
        case .null: v.type = Int32(COVE_TYPE_NULL.rawValue)
        case .int(let i): v.type = Int32(COVE_TYPE_INT.rawValue); v.u.integer = i
        case .bool(let b): v.type = Int32(COVE_TYPE_BOOL.rawValue); v.u.boolean = b
        case .float(let f): v.type = Int32(COVE_TYPE_FLOAT.rawValue); v.u.fnum = f
        case .double(let d): v.type = Int32(COVE_TYPE_DOUBLE.rawValue); v.u.dnum = d
        case .string(var s):
            let (p, n) = s.withUTF8 { keep(UnsafeRawBufferPointer($0)) }
            v.type = Int32(COVE_TYPE_STRING.rawValue)
            v.u.string = cove_string_t(data: p.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) }, size: n)
        case .data(let d):
            let (p, n) = d.withUnsafeBytes { keep($0) }
            v.type = Int32(COVE_TYPE_BINARY.rawValue)
            v.u.binary = cove_binary_t(data: p.map { UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) }, size: n)
        case .timestamp(let t):
            v.type = Int32(COVE_TYPE_TIMESTAMP.rawValue)
            v.u.timestamp = cove_timestamp_t(seconds: t.seconds, nanoseconds: t.nanoseconds)
        case .decimal128(let d):
            v.type = Int32(COVE_TYPE_DECIMAL128.rawValue)
            let bytes = d.bytes
            withUnsafeMutableBytes(of: &v.u.decimal128) { for i in 0..<16 { $0[i] = bytes[i] } }
        case .objectId(let o):
            v.type = Int32(COVE_TYPE_OBJECT_ID.rawValue)
            let bytes = o.bytes
            withUnsafeMutableBytes(of: &v.u.object_id) { for i in 0..<12 { $0[i] = bytes[i] } }
        case .uuid(let u):
            v.type = Int32(COVE_TYPE_UUID.rawValue)
            v.u.uuid = u.uuid
        case .link(let l):
            v.type = Int32(COVE_TYPE_LINK.rawValue)
            v.u.link.class_key = l.classKey
            v.u.link.object_key = l.objectKey
        case .list, .dictionary:
            v = collection(value, keep: keep)
        }
        out.pointee = v
    }

    /// A nested list or dictionary as a #COVE_TYPE_LIST or #COVE_TYPE_MAP value (apart from
    /// `write`, whose switch over the scalars stays as cheap as it was).
    @inline(never)
    private static func collection(_ value: Value, keep: (UnsafeRawBufferPointer) -> (UnsafeMutableRawPointer?, Int)) -> cove_value_t {
        var v = cove_value_t()
        switch value {
        case .list(let elements):
            v.type = Int32(COVE_TYPE_LIST.rawValue)
            v.u.elements.items = writeItems(elements, keep: keep)
            v.u.elements.count = elements.count
        case .dictionary(let entries):
            v.type = Int32(COVE_TYPE_MAP.rawValue)
            var items: [Value] = []
            items.reserveCapacity(entries.count * 2)
            for (key, value) in Value.sortedEntries(entries) {
                items.append(.string(key))
                items.append(value)
            }
            v.u.elements.items = writeItems(items, keep: keep)
            v.u.elements.count = entries.count
        default:
            break
        }
        return v
    }

    /// The elements of a nested collection as an array of values kept by `keep`.
    private static func writeItems(_ values: [Value], keep: (UnsafeRawBufferPointer) -> (UnsafeMutableRawPointer?, Int)) -> UnsafePointer<cove_value_t>? {
        if values.isEmpty { return nil }
        var items: [cove_value_t] = []
        items.reserveCapacity(values.count)
        for e in values {
            var item = cove_value_t()
            write(e, to: &item, keep: keep)
            items.append(item)
        }
        let (p, _) = items.withUnsafeBytes { keep($0) }
        return p.map { UnsafePointer($0.assumingMemoryBound(to: cove_value_t.self)) }
    }
}
