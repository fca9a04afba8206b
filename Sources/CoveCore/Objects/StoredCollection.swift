// One list, set or map as a transaction sees it, in either of its two forms: a B+tree of its
// own, or inline in its table's collection area (InlineCollection). The object store edits a
// collection through this type and then settles its form (ObjectStore.editCollection).
import CoveStorage

struct StoredCollection {
    enum Form {
        case tree(BTree<TransactionPages>)
        case inline(InlineCollection)
    }

    var form: Form
    let kind: CollectionKind
    /// Whether an edit changed the inline form's bytes (a tree's root says so itself).
    private(set) var inlineEdited = false

    init(_ form: Form, kind: CollectionKind) {
        self.form = form
        self.kind = kind
    }

    var count: UInt64 {
        switch form {
        case .tree(let t): return t.count
        case .inline(let c): return UInt64(c.count)
        }
    }

    // MARK: Reading

    /// Each entry's key (as stored: empty or 8 little-endian bytes of order key for a list)
    /// and value, in order, until `body` returns false.
    func forEach(_ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        switch form {
        case .tree(let t): try t.forEach(fromPosition: 0, body)
        case .inline(let c): try c.forEach(body)
        }
    }

    func withEntry<R>(at index: UInt64, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        switch form {
        case .tree(let t): return try t.withEntry(at: index, body)
        case .inline(let c): return try c.withEntry(at: Int(index), body)
        }
    }

    func get(_ key: [UInt8]) throws(StorageError) -> [UInt8]? {
        switch form {
        case .tree(let t): return try t.get(key)
        case .inline(let c): return try c.get(key)
        }
    }

    func contains(_ key: [UInt8]) throws(StorageError) -> Bool {
        switch form {
        case .tree(let t): return try t.contains(key)
        case .inline(let c): return try c.find(key).found
        }
    }

    /// The position `key` has or would have.
    func rank(of key: [UInt8]) throws(StorageError) -> UInt64 {
        switch form {
        case .tree(let t): return try t.rank(of: key)
        case .inline(let c): return UInt64(try c.find(key).index)
        }
    }

    // MARK: Editing lists

    /// Inserts `value` at `index` (0...count) of a list.
    /// - Complexity: tree: O(log n), and O(n) when the order keys around `index` have no room
    ///   left and the list is renumbered; inline: O(bytes).
    mutating func insert(_ value: [UInt8], at index: UInt64) throws(StorageError) {
        switch form {
        case .tree(var t):
            var key = try Self.orderKey(in: t, at: index)
            if key == nil {
                try Self.renumber(&t)
                key = try Self.orderKey(in: t, at: index)
            }
            guard let key else { throw .corrupt("a list has no order key after renumbering") }
            _ = try t.put(key, value)
            form = .tree(t)
        case .inline(var c):
            try c.insert(value, at: Int(index))
            form = .inline(c)
            inlineEdited = true
        }
    }

    /// Replaces the value at `index` of a list; returns the old value.
    mutating func replace(at index: UInt64, with value: [UInt8]) throws(StorageError) -> [UInt8] {
        switch form {
        case .tree(var t):
            let (key, old) = try t.u64Entry(at: index)
            _ = try t.put(key, value)
            form = .tree(t)
            return old
        case .inline(var c):
            let old = try c.replace(at: Int(index), with: value)
            form = .inline(c)
            inlineEdited = true
            return old
        }
    }

    /// Removes the entry at `index` of a list; returns its value.
    mutating func remove(at index: UInt64) throws(StorageError) -> [UInt8] {
        switch form {
        case .tree(var t):
            let (key, old) = try t.u64Entry(at: index)
            _ = try t.remove(key)
            form = .tree(t)
            return old
        case .inline(var c):
            let old = try c.remove(at: Int(index))
            form = .inline(c)
            inlineEdited = true
            return old
        }
    }

    // MARK: Editing sets and maps

    mutating func put(_ key: [UInt8], _ value: [UInt8]) throws(StorageError) {
        switch form {
        case .tree(var t):
            _ = try t.put(key, value)
            form = .tree(t)
        case .inline(var c):
            try c.put(key, value)
            form = .inline(c)
            inlineEdited = true
        }
    }

    mutating func remove(key: [UInt8]) throws(StorageError) {
        switch form {
        case .tree(var t):
            _ = try t.remove(key)
            form = .tree(t)
        case .inline(var c):
            if try c.remove(key: key) { inlineEdited = true }
            form = .inline(c)
        }
    }

    /// Removes every entry (a tree's pages are freed).
    mutating func removeAll() throws(StorageError) {
        switch form {
        case .tree(var t):
            try t.removeAll()
            form = .tree(t)
        case .inline(var c):
            if c.count > 0 { inlineEdited = true }
            c.removeAll()
            form = .inline(c)
        }
    }

    /// Replaces every entry by those of `c` (a tree's pages are freed; the form is settled
    /// afterwards as for any edit).
    mutating func replaceAll(with c: InlineCollection) throws(StorageError) {
        if case .tree(var t) = form { try t.removeAll() }
        form = .inline(c)
        inlineEdited = true
    }

    // MARK: Order keys of a list's tree

    /// The gap between the order keys of a list written in one go; a list is renumbered with
    /// this spacing when an insert finds no room between two neighbours.
    static let listKeySpacing: UInt64 = 1 << 32

    /// A key that sorts between the keys at `index - 1` and `index`, or nil when they are
    /// adjacent (or the list's ends are reached).
    static func orderKey(in tree: BTree<TransactionPages>, at index: UInt64) throws(StorageError) -> UInt64? {
        let count = tree.count
        let below: UInt64? = index == 0 ? nil : try tree.u64Key(at: index - 1)
        let above: UInt64? = index == count ? nil : try tree.u64Key(at: index)
        switch (below, above) {
        case (nil, nil): return listKeySpacing
        case (let b?, nil): return b <= UInt64.max - listKeySpacing ? b + listKeySpacing : nil
        case (nil, let a?): return a >= 2 ? a / 2 : nil
        case (let b?, let a?): return a - b >= 2 ? b + (a - b) / 2 : nil
        }
    }

    /// Rewrites every order key of a list evenly spaced, keeping the order.
    /// - Complexity: O(n)
    static func renumber(_ tree: inout BTree<TransactionPages>) throws(StorageError) {
        var values: [[UInt8]] = []
        values.reserveCapacity(Int(tree.count))
        try tree.forEach(fromPosition: 0) { (_: UnsafeRawBufferPointer, v: UnsafeRawBufferPointer) -> Bool in
            values.append(Array(v))
            return true
        }
        try tree.removeAll()
        for (i, v) in values.enumerated() {
            _ = try tree.put(UInt64(i + 1) * listKeySpacing, v)
        }
    }

    // MARK: Switching forms

    /// The tree holding the same entries as inline collection `c` (a list's order keys evenly
    /// spaced).
    static func tree(from c: InlineCollection, kind: CollectionKind, store: TransactionPages) throws(StorageError) -> BTree<TransactionPages> {
        var tree = BTree(store: store, root: .empty, keyKind: kind == .list ? .u64 : .bytes)
        var i: UInt64 = 0
        try c.forEach { (k, v) throws(StorageError) -> Bool in
            i += 1
            if kind == .list {
                _ = try tree.put(i * listKeySpacing, v)
            } else {
                _ = try tree.put(k, v)
            }
            return true
        }
        return tree
    }

    /// The inline form of tree `t` if it is one leaf whose entries take at most `limit` bytes
    /// inline, else nil.
    static func inline(from t: BTree<TransactionPages>, kind: CollectionKind, limit: Int) throws(StorageError) -> InlineCollection? {
        guard try t.isOneLeaf() else { return nil }
        var c = InlineCollection(keyed: kind != .list)
        var fits = true
        try t.forEach(fromPosition: 0) { (k: UnsafeRawBufferPointer, v: UnsafeRawBufferPointer) -> Bool in
            c.append(key: k, v)
            fits = c.bytes.count <= limit
            return fits
        }
        return fits ? c : nil
    }
}
