// How a property's values are stored: the column kind of each property type, and the
// conversions between the API's `Value` and the table's `CellValue`, with the type checks whose
// messages name class, property, expected and given type.
import CoveStorage
import FoundationEssentials

extension Property {
    /// Tables made while this is set get `collection` columns, as before format 6, whose small
    /// collections live in the class's collection area: for the tests of files made then.
    nonisolated(unsafe) static var collectionsInArea = false

    /// The column this property is stored in; nil for backlinks, which are computed.
    var columnSpec: ColumnSpec? {
        if isBacklinks { return nil }
        // Tables made since format 6 keep collections in the row; older tables keep their
        // `collection` columns (see ObjectStore.CollectionCell).
        if collection != .none {
            return Self.collectionsInArea ? ColumnSpec(.collection) : ColumnSpec(.collectionInRow, nullable: true)
        }
        let kind: ColumnKind
        switch type {
        case .bool: kind = .bool
        case .int: kind = .int
        case .float: kind = .float
        case .double: kind = .double
        case .string: kind = .string
        case .data: kind = .binary
        case .date: kind = .timestamp
        case .decimal128: kind = .decimal128
        case .objectId: kind = .objectId
        case .uuid: kind = .uuid
        case .mixed: kind = .mixed
        case .object: kind = .link
        case .linkingObjects: return nil
        }
        return ColumnSpec(kind, nullable: isOptional || type == .mixed || isLink)
    }
}

package enum PropertyCodec {
    /// The stored form of `value` for `property` of `cls`. Ints are accepted for float and double
    /// properties and doubles for float ones; links are checked by the caller (existence and class).
    package static func cell(_ value: Value, for property: Property, of cls: ObjectSchema) throws(CoveError) -> CellValue {
        func mismatch() -> CoveError {
            CoveError(.wrongType, "property '\(property.name)' of class '\(cls.className)' is \(property.typeNotation), got \(value.typedDescription)")
        }
        if case .null = value {
            if property.isOptional || property.type == .mixed || property.isLink { return .null }
            throw CoveError(.wrongType, "property '\(property.name)' of class '\(cls.className)' is \(property.typeNotation) and cannot be null")
        }
        switch (property.type, value) {
        case (.bool, .bool(let b)): return .bool(b)
        case (.int, .int(let i)): return .int(i)
        case (.float, .float(let f)): return .float(f)
        case (.float, .double(let d)): return .float(Float(d))
        case (.float, .int(let i)): return .float(Float(i))
        case (.double, .double(let d)): return .double(d)
        case (.double, .float(let f)): return .double(Double(f))
        case (.double, .int(let i)): return .double(Double(i))
        case (.string, .string(let s)): return .bytes(s.utf8Bytes)
        case (.data, .data(let d)): return .bytes(d)
        case (.date, .timestamp(let t)): return .timestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
        case (.decimal128, .decimal128(let d)): return .bytes16(d.low, d.high)
        case (.decimal128, .int(let i)): let d = Decimal128(i); return .bytes16(d.low, d.high)
        case (.objectId, .objectId(let o)): return bytes12(o.bytes)
        case (.uuid, .uuid(let u)): return bytes16(u)
        case (.mixed, .list), (.mixed, .dictionary):
            try checkNested(value, for: property, of: cls)
            return .bytes(value.encodeMixed())
        case (.mixed, _): return .bytes(value.encodeMixed())
        case (.object, .link(let l)): return .link(UInt64(bitPattern: l.objectKey))
        default: throw mismatch()
        }
    }

    /// Refuses a nested collection where a mixed value may not hold one: as an element of a set
    /// (elements of a set are compared as wholes, as in Realm), or nested deeper than
    /// `Value.maxNesting`.
    static func checkNested(_ value: Value, for property: Property, of cls: ObjectSchema) throws(CoveError) {
        if property.collection == .set {
            throw CoveError(.wrongType, "property '\(property.name)' of class '\(cls.className)' is a set of mixed values, which cannot hold a \(value.typeName)")
        }
        if value.nestingDepth > Value.maxNesting {
            throw CoveError(.invalidArgument, "property '\(property.name)' of class '\(cls.className)': a value nests collections deeper than \(Value.maxNesting)")
        }
    }

    /// What `cell(_:for:of:)` gives for a value of exactly its column's type, or a null in a
    /// nullable column, worked out from the column's spec alone (the creates' fast path, with no
    /// property to copy); nil for anything else, which `cell` converts or refuses. Not for
    /// link or mixed columns.
    @inline(__always)
    static func exactCell(_ value: Value, _ spec: ColumnSpec) -> CellValue? {
        switch (spec.kind, value) {
        case (.int, .int(let i)): return .int(i)
        case (.string, .string(let s)): return .bytes(s.utf8Bytes)
        case (.double, .double(let d)): return .double(d)
        case (.bool, .bool(let b)): return .bool(b)
        case (.float, .float(let f)): return .float(f)
        case (.binary, .data(let d)): return .bytes(d)
        case (.timestamp, .timestamp(let t)): return .timestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
        case (.decimal128, .decimal128(let d)): return .bytes16(d.low, d.high)
        case (.objectId, .objectId(let o)): return bytes12(o.bytes)
        case (.uuid, .uuid(let u)): return bytes16(u)
        case (.link, _), (.mixed, _): return nil
        case (_, .null): return spec.nullable ? .null : nil
        default: return nil
        }
    }

    /// The API value of a stored cell of `property`; links come back with `targetClassKey`.
    package static func value(_ cell: CellValue, for property: Property, targetClassKey: UInt32) throws(CoveError) -> Value {
        switch cell {
        case .bytes12(let a, let b):
            var bytes = [UInt8](repeating: 0, count: 12)
            withUnsafeBytes(of: a.littleEndian) { for i in 0..<8 { bytes[i] = $0[i] } }
            withUnsafeBytes(of: b.littleEndian) { for i in 0..<4 { bytes[8 + i] = $0[i] } }
            do { return .objectId(try ObjectId(bytes: bytes)) } catch { throw error }
        case .link(let key): return .link(ObjectLink(classKey: targetClassKey, objectKey: Int64(bitPattern: key)))
        case .bytes(let b) where property.type == .mixed: return try Value.decodeMixed(b)
        case .root:
            throw CoveError(.wrongType, "property '\(property.name)' is a \(property.collection.rawValue), not a single value")
        default:
            // What the property's type tells apart: uuid from decimal128, string from binary.
            let kind: ColumnKind = property.type == .uuid ? .uuid : property.type == .string ? .string : .binary
            guard let v = plainValue(cell, kind) else {
                throw CoveError(.corrupt, "property '\(property.name)' holds a string that is not valid UTF-8")
            }
            return v
        }
    }

    /// The API value of a cell of a plain column (`TableShape.plainColumnAt`), whose kind says
    /// what it holds without the property; nil for what needs the property (a mixed value, a
    /// string that is not valid UTF-8, for the error naming it).
    @inline(__always)
    static func plainValue(_ cell: CellValue, _ kind: ColumnKind) -> Value? {
        switch cell {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .int(let i): return .int(i)
        case .float(let f): return .float(f)
        case .double(let d): return .double(d)
        case .timestamp(let s, let n): return .timestamp(Timestamp(seconds: s, nanoseconds: n))
        case .bytes16(let a, let b): return kind == .uuid ? .uuid(uuid(a, b)) : .decimal128(Decimal128(high: b, low: a))
        case .bytes(let b):
            switch kind {
            case .string: return String(utf8: b).map { .string($0) }
            case .binary: return .data(b)
            default: return nil
            }
        case .bytes12, .link, .root: return nil
        }
    }

    static func bytes12(_ bytes: [UInt8]) -> CellValue {
        var a: UInt64 = 0, b: UInt32 = 0
        for i in 0..<8 { a |= UInt64(bytes[i]) << (8 * UInt64(i)) }
        for i in 0..<4 { b |= UInt32(bytes[8 + i]) << (8 * UInt32(i)) }
        return .bytes12(a, b)
    }

    static func bytes16(_ u: UUID) -> CellValue {
        let t = u.uuid
        let bytes = [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
        var a: UInt64 = 0, b: UInt64 = 0
        for i in 0..<8 {
            a |= UInt64(bytes[i]) << (8 * UInt64(i))
            b |= UInt64(bytes[8 + i]) << (8 * UInt64(i))
        }
        return .bytes16(a, b)
    }

    static func uuid(_ a: UInt64, _ b: UInt64) -> UUID {
        func byte(_ v: UInt64, _ i: Int) -> UInt8 { UInt8(truncatingIfNeeded: v >> (8 * UInt64(i))) }
        return UUID(uuid: (byte(a, 0), byte(a, 1), byte(a, 2), byte(a, 3), byte(a, 4), byte(a, 5), byte(a, 6), byte(a, 7),
                           byte(b, 0), byte(b, 1), byte(b, 2), byte(b, 3), byte(b, 4), byte(b, 5), byte(b, 6), byte(b, 7)))
    }
}
