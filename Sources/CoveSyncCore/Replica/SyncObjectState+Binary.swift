// An object's merge state in a compact binary form, for a client file to keep one per object:
// written and read at every change of the object, so it costs no JSON and no operation objects.
//
//     u8 form (1) | u8 flags (1: created, 2: deleted) | created clock? | deleted clock?
//     varint property count | per property: name, clock, value
//     varint list count | per list: name, varint element count | per element: id clock,
//         u8 flags (1 inserted, 2 value, 4 position, 8 removed), value clock + value?,
//         position clock + position text?, removed clock?
//     varint set count | per set: name, varint entry count | per entry: value, clock, u8 present
//     varint map count | per map: name, varint entry count | per entry: key text, clock,
//         u8 present, value if present
//
// Clocks take their 18-byte form; names and texts a varint length and UTF-8; a value a tag byte
// (its rank in SyncValue's order) and its bytes.

extension SyncObjectState {
    /// The state's binary form.
    public func binary() -> [UInt8] {
        var w = BinaryWriter()
        w.byte(1)
        w.byte((state.created != nil ? 1 : 0) | (state.deleted != nil ? 2 : 0))
        if let c = state.created { w.clock(c) }
        if let d = state.deleted { w.clock(d) }
        w.varint(state.properties.count)
        for (name, r) in state.properties {
            w.text(name)
            w.clock(r.clock)
            w.value(r.value)
        }
        w.varint(state.lists.count)
        for (name, elements) in state.lists {
            w.text(name)
            w.varint(elements.count)
            for (id, e) in elements {
                w.clock(id)
                var flags: UInt8 = e.inserted ? 1 : 0
                if e.value != nil { flags |= 2 }
                if e.position != nil { flags |= 4 }
                if e.removed != nil { flags |= 8 }
                w.byte(flags)
                if let v = e.value { w.clock(v.clock); w.value(v.value) }
                if let p = e.position { w.clock(p.clock); w.text(p.value.key) }
                if let r = e.removed { w.clock(r) }
            }
        }
        w.varint(state.sets.count)
        for (name, entries) in state.sets {
            w.text(name)
            w.varint(entries.count)
            for (value, r) in entries {
                w.value(value)
                w.clock(r.clock)
                w.byte(r.value == .present ? 1 : 0)
            }
        }
        w.varint(state.maps.count)
        for (name, entries) in state.maps {
            w.text(name)
            w.varint(entries.count)
            for (key, r) in entries {
                w.text(key.text)
                w.clock(r.clock)
                switch r.value {
                case .removed: w.byte(0)
                case .present(let v): w.byte(1); w.value(v)
                }
            }
        }
        return w.bytes
    }

    /// A state from its binary form.
    /// - Throws: `SyncError(.malformedEncoding)` naming what is wrong.
    public init(binary bytes: [UInt8]) throws(SyncError) {
        var r = BinaryReader(bytes: bytes)
        guard try r.byte() == 1 else { throw r.fail("an unknown form") }
        let flags = try r.byte()
        if flags & 1 != 0 { state.created = try r.clock() }
        if flags & 2 != 0 { state.deleted = try r.clock() }
        for _ in 0..<(try r.count()) {
            let name = try r.text()
            let clock = try r.clock()
            state.properties[name] = Register(try r.value(), clock)
        }
        for _ in 0..<(try r.count()) {
            let name = try r.text()
            var elements: [SyncClock: ElementState] = [:]
            for _ in 0..<(try r.count()) {
                let id = try r.clock()
                let f = try r.byte()
                var e = ElementState()
                e.inserted = f & 1 != 0
                if f & 2 != 0 { let c = try r.clock(); e.value = Register(try r.value(), c) }
                if f & 4 != 0 { let c = try r.clock(); e.position = Register(try ListPosition(try r.text()), c) }
                if f & 8 != 0 { e.removed = try r.clock() }
                elements[id] = e
            }
            state.lists[name] = elements
        }
        for _ in 0..<(try r.count()) {
            let name = try r.text()
            var entries: [SyncValue: Register<Presence>] = [:]
            for _ in 0..<(try r.count()) {
                let value = try r.value()
                let clock = try r.clock()
                entries[value] = Register(try r.byte() == 1 ? .present : .removed, clock)
            }
            state.sets[name] = entries
        }
        for _ in 0..<(try r.count()) {
            let name = try r.text()
            var entries: [ByteString: Register<Entry>] = [:]
            for _ in 0..<(try r.count()) {
                let key = try r.text()
                let clock = try r.clock()
                entries[ByteString(text: key)] = Register(try r.byte() == 1 ? .present(try r.value()) : .removed, clock)
            }
            state.maps[name] = entries
        }
        guard r.at == bytes.count else { throw r.fail("\(bytes.count - r.at) bytes after the state") }
    }
}

private struct BinaryWriter {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(96) }

    mutating func byte(_ b: UInt8) { bytes.append(b) }

    mutating func varint(_ n: Int) {
        var v = UInt64(n)
        while v >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    mutating func fixed(_ v: UInt64, _ count: Int) {
        for i in stride(from: count - 1, through: 0, by: -1) { bytes.append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }

    mutating func clock(_ c: SyncClock) {
        fixed(c.wall, 6)
        fixed(UInt64(c.counter), 4)
        fixed(c.node, 8)
    }

    mutating func text(_ s: String) {
        varint(s.utf8.count)
        bytes.append(contentsOf: s.utf8)
    }

    mutating func key(_ k: SyncPrimaryKey) {
        switch k {
        case .int(let v): byte(0); fixed(UInt64(bitPattern: v), 8)
        case .string(let s): byte(1); text(s)
        case .objectId(let o): byte(2); bytes += o.bytes
        case .uuid(let u): byte(3); bytes += u.bytes
        }
    }

    mutating func value(_ v: SyncValue) {
        switch v {
        case .null: byte(0)
        case .bool(let b): byte(1); byte(b ? 1 : 0)
        case .int(let i): byte(2); fixed(UInt64(bitPattern: i), 8)
        case .double(let d): byte(3); fixed(d.bitPattern, 8)
        case .string(let s): byte(4); text(s)
        case .data(let d): byte(5); varint(d.count); bytes += d
        case .date(let d): byte(6); fixed(UInt64(bitPattern: d.seconds), 8); fixed(UInt64(UInt32(bitPattern: d.nanoseconds)), 4)
        case .objectId(let o): byte(7); bytes += o.bytes
        case .uuid(let u): byte(8); bytes += u.bytes
        case .decimal128(let d): byte(9); text(d.text)
        case .link(let ref): byte(10); text(ref.className); key(ref.key)
        }
    }
}

private struct BinaryReader {
    let bytes: [UInt8]
    var at = 0

    func fail(_ what: String) -> SyncError {
        SyncError(.malformedEncoding, "a stored merge state, byte \(at): \(what)")
    }

    mutating func take(_ n: Int) throws(SyncError) -> ArraySlice<UInt8> {
        guard n >= 0, n <= bytes.count - at else { throw fail("cut short") }
        defer { at += n }
        return bytes[at..<(at + n)]
    }

    mutating func byte() throws(SyncError) -> UInt8 { try take(1).first ?? 0 }

    mutating func varint() throws(SyncError) -> UInt64 {
        var v: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64 else { throw fail("a number too long") }
            v |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return v }
            shift += 7
        }
    }

    /// A count, bounded by the bytes left (each counted thing takes at least one).
    mutating func count() throws(SyncError) -> Int {
        let n = try varint()
        guard n <= UInt64(bytes.count - at) else { throw fail("a count of \(n) with \(bytes.count - at) bytes left") }
        return Int(n)
    }

    mutating func fixed(_ n: Int) throws(SyncError) -> UInt64 {
        try take(n).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func clock() throws(SyncError) -> SyncClock {
        try SyncClock(bytes: try take(SyncClock.byteCount))
    }

    mutating func text() throws(SyncError) -> String {
        let n = try count()
        let slice = try take(n)
        guard let s = String(validating: slice, as: UTF8.self) else { throw fail("text that is not UTF-8") }
        return s
    }

    mutating func key() throws(SyncError) -> SyncPrimaryKey {
        switch try byte() {
        case 0: return .int(Int64(bitPattern: try fixed(8)))
        case 1: return .string(try text())
        case 2: return .objectId(try SyncObjectId(bytes: try take(12)))
        case 3: return .uuid(try SyncUUID(bytes: try take(16)))
        case let k: throw fail("an unknown key kind \(k)")
        }
    }

    mutating func value() throws(SyncError) -> SyncValue {
        switch try byte() {
        case 0: return .null
        case 1: return .bool(try byte() != 0)
        case 2: return .int(Int64(bitPattern: try fixed(8)))
        case 3: return .double(Double(bitPattern: try fixed(8)))
        case 4: return .string(try text())
        case 5: return .data(Array(try take(try count())))
        case 6:
            let seconds = Int64(bitPattern: try fixed(8))
            return .date(try SyncDate(seconds: seconds, nanoseconds: Int32(bitPattern: UInt32(try fixed(4)))))
        case 7: return .objectId(try SyncObjectId(bytes: try take(12)))
        case 8: return .uuid(try SyncUUID(bytes: try take(16)))
        case 9: return .decimal128(try SyncDecimal128(try text()))
        case 10:
            let name = try text()
            return .link(try SyncObjectRef(className: name, key: try key()))
        case let t: throw fail("an unknown value tag \(t)")
        }
    }
}
