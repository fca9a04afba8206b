// Ordered iteration in both directions from a key or a position, and positional access through
// the subtree counts of branch pages. A cursor keeps one frame (page, slot) per branch level, so
// moving to the next leaf climbs only as far as needed; nothing is allocated per entry.

/// One branch level of a cursor: a decoded page and the child taken in it.
@usableFromInline
struct BTreeFrame {
    @usableFromInline var node: BTreeNode
    @usableFromInline var index: Int

    @inlinable
    init(node: BTreeNode, index: Int) {
        self.node = node
        self.index = index
    }
}

/// A position in a tree for pull-style iteration, in one direction.
///
/// A cursor reads pages in place: it stays valid while its tree is not mutated and the
/// store's transaction or snapshot lives, and the buffers it hands out only during the call
/// that hands them out. Create one with `BTree.cursor(from:reverse:)` or
/// `BTree.cursor(atPosition:reverse:)`.
public struct BTreeCursor<Store: PageStore> {
    @usableFromInline let tree: BTree<Store>
    @usableFromInline var frames: [BTreeFrame] = []
    @usableFromInline var leaf: BTreeNode?
    @usableFromInline var index = 0
    /// Whether the cursor moves towards smaller keys.
    public let reverse: Bool

    @inlinable
    init(tree: BTree<Store>, reverse: Bool) {
        self.tree = tree
        self.reverse = reverse
    }

    /// Whether the cursor is on an entry (false past the end).
    /// - Complexity: O(1)
    @inlinable
    public var isValid: Bool { leaf != nil }

    /// Moves to the next entry in the cursor's direction.
    /// - Returns: false, and the cursor becomes invalid, past the last entry.
    /// - Complexity: O(1) amortized; O(log n) when it crosses into another leaf.
    @inlinable
    public mutating func advance() throws(StorageError) -> Bool {
        guard leaf != nil else { return false }
        index &+= reverse ? -1 : 1
        try settle()
        return leaf != nil
    }

    /// Moves off a slot outside its leaf to the nearest entry in the cursor's direction.
    @inlinable
    mutating func settle() throws(StorageError) {
        while let current = leaf, index < 0 || index >= current.count {
            guard let next = try tree.neighbourLeaf(&frames, reverse: reverse) else {
                leaf = nil
                return
            }
            leaf = next
            index = reverse ? next.count &- 1 : 0
        }
    }

    @usableFromInline @inline(never)
    static func invalid() -> StorageError { .invalidArgument("B+tree cursor used past its end") }

    /// The key of the current entry as stored (8 little-endian bytes in a UInt64 tree), in
    /// place.
    /// - Throws: `.invalidArgument` past the end; `.corrupt`.
    /// - Complexity: O(1)
    @inlinable
    public func withKey<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        guard let leaf else { throw Self.invalid() }
        return try body(try leaf.rawKey(index))
    }

    /// The key of the current entry of a UInt64 tree.
    /// - Throws: `.invalidArgument` past the end or on a byte-keyed tree; `.corrupt`.
    /// - Complexity: O(1)
    @inlinable
    public func u64Key() throws(StorageError) -> UInt64 {
        try tree.requireKind(.u64)
        guard let leaf else { throw Self.invalid() }
        return try leaf.u64Key(index)
    }

    /// Calls `body` with the value of the current entry, in place (overflow values are first
    /// assembled into a temporary buffer).
    /// - Throws: `.invalidArgument` past the end; `.corrupt`.
    /// - Complexity: O(1), or O(m) for an overflow value of m bytes.
    @inlinable
    public func withValue<R>(_ body: (UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        guard let leaf else { throw Self.invalid() }
        return try tree.withValue(of: leaf, index, body)
    }
}

extension BTree {
    // MARK: - Cursors

    /// A cursor on the first entry >= `key` (or with `reverse`, the last entry <= `key`); on the
    /// first (last) entry when `key` is nil.
    @inlinable
    func cursor(from key: BTreeKey?, reverse: Bool) throws(StorageError) -> BTreeCursor<Store> {
        var cursor = BTreeCursor(tree: self, reverse: reverse)
        if root.page.isNone { return cursor }
        var node = try self.node(root.page, level: -1)
        cursor.frames.reserveCapacity(node.level)
        while node.level > 0 {
            let i: Int
            if let key { i = try node.childIndex(key) } else { i = reverse ? node.count &- 1 : 0 }
            cursor.frames.append(BTreeFrame(node: node, index: i))
            node = try self.node(try node.child(i).ref, level: node.level &- 1)
        }
        if let key {
            cursor.index = reverse ? try node.partition(key, from: 0, orEqual: false) &- 1
                                   : try node.partition(key, from: 0, orEqual: true)
        } else {
            cursor.index = reverse ? node.count &- 1 : 0
        }
        cursor.leaf = node
        try cursor.settle()
        return cursor
    }

    /// A cursor on the first entry >= `key` (with `reverse`: the last entry <= `key`), or on the
    /// first (last) entry when `key` is nil.
    /// - Throws: `.invalidArgument` on a byte-keyed tree; `.corrupt`.
    /// - Complexity: O(log n)
    @inlinable
    public func cursor(from key: UInt64?, reverse: Bool = false) throws(StorageError) -> BTreeCursor<Store> {
        try requireKind(.u64)
        return try cursor(from: key.map { .u64($0) }, reverse: reverse)
    }

    /// A cursor on the first byte-string key >= `key` (with `reverse`: the last <= `key`), or on
    /// the first (last) entry when `key` is nil. `key` need not outlive the call.
    /// - Throws: `.invalidArgument` on a UInt64-keyed tree; `.corrupt`.
    /// - Complexity: O(log n · k)
    @inlinable
    public func cursor(from key: UnsafeRawBufferPointer?, reverse: Bool = false) throws(StorageError) -> BTreeCursor<Store> {
        try requireKind(.bytes)
        return try cursor(from: key.map { .bytes($0) }, reverse: reverse)
    }

    /// A cursor on the entry at `position` (0-based, in key order), found through the subtree
    /// counts; invalid when `position >= count`.
    /// - Throws: `.corrupt`.
    /// - Complexity: O(log n)
    @inlinable
    public func cursor(atPosition position: UInt64, reverse: Bool = false) throws(StorageError) -> BTreeCursor<Store> {
        var cursor = BTreeCursor(tree: self, reverse: reverse)
        if position >= root.count { return cursor }
        var node = try self.node(root.page, level: -1)
        cursor.frames.reserveCapacity(node.level)
        var remaining = position
        while node.level > 0 {
            var chosen = -1
            var next = PageRef.none
            for i in 0..<node.count {
                let (ref, count) = try node.child(i)
                if remaining < count { chosen = i; next = ref; break }
                remaining &-= count
            }
            guard chosen >= 0 else {
                throw BTreeNode.fault(node.pgno, "subtree counts add up to less than position \(position) requires")
            }
            cursor.frames.append(BTreeFrame(node: node, index: chosen))
            node = try self.node(next, level: node.level &- 1)
        }
        guard remaining < UInt64(node.count) else {
            throw BTreeNode.fault(node.pgno, "leaf holds \(node.count) entries, its parent counts more")
        }
        cursor.leaf = node
        cursor.index = Int(remaining)
        return cursor
    }

    /// Moves `frames` to the next leaf in the given direction and returns it, or nil at the end
    /// of the tree.
    @inlinable
    func neighbourLeaf(_ frames: inout [BTreeFrame], reverse: Bool) throws(StorageError) -> BTreeNode? {
        while let top = frames.last {
            let next = top.index &+ (reverse ? -1 : 1)
            if next >= 0 && next < top.node.count {
                frames[frames.count &- 1].index = next
                var node = try self.node(try top.node.child(next).ref, level: top.node.level &- 1)
                while node.level > 0 {
                    let i = reverse ? node.count &- 1 : 0
                    frames.append(BTreeFrame(node: node, index: i))
                    node = try self.node(try node.child(i).ref, level: node.level &- 1)
                }
                return node
            }
            frames.removeLast()
        }
        return nil
    }

    // MARK: - Scans

    /// Calls `visit` with (leaf, slot) for each entry from `cursor` on, until `visit` returns
    /// false.
    @inlinable
    func scan(_ cursor: consuming BTreeCursor<Store>, _ visit: (BTreeNode, Int) throws(StorageError) -> Bool) throws(StorageError) {
        let step = cursor.reverse ? -1 : 1
        while let leaf = cursor.leaf {
            if try !visit(leaf, cursor.index) { return }
            cursor.index &+= step
            if cursor.index < 0 || cursor.index >= leaf.count { try cursor.settle() }
        }
    }

    @inlinable
    func scan(from key: BTreeKey?, reverse: Bool, _ visit: (BTreeNode, Int) throws(StorageError) -> Bool) throws(StorageError) {
        try scan(try cursor(from: key, reverse: reverse), visit)
    }

    /// Calls `body` with each key and value in key order from `key` (nil: from the first entry):
    /// ascending from the first key >= `key`, or with `reverse` descending from the last key
    /// <= `key`. Stops when `body` returns false. The value buffer is valid only during the
    /// call; overflow values are assembled into one buffer reused across the scan.
    /// - Throws: `.invalidArgument` on a byte-keyed tree; `.corrupt`; what `body` throws.
    /// - Complexity: O(log n + k) for k entries visited.
    @inlinable
    public func forEach(from key: UInt64? = nil, reverse: Bool = false,
                        _ body: (UInt64, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        try requireKind(.u64)
        var spill: [UInt8] = []
        let start: BTreeKey? = key.map { .u64($0) }
        try scan(from: start, reverse: reverse) { leaf, i throws(StorageError) -> Bool in
            let k = try leaf.u64Key(i)
            return try withValue(of: leaf, i, spill: &spill) { value throws(StorageError) in try body(k, value) }
        }
    }

    /// Calls `body` with each byte-string key and value in key order from `key` (nil: from the
    /// first entry), ascending from the first key >= `key` or with `reverse` descending from the
    /// last key <= `key`. Stops when `body` returns false. Both buffers are valid only during
    /// the call.
    /// - Throws: `.invalidArgument` on a UInt64-keyed tree; `.corrupt`; what `body` throws.
    /// - Complexity: O(log n · k + visited)
    @inlinable
    public func forEach(from key: UnsafeRawBufferPointer?, reverse: Bool = false,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        try requireKind(.bytes)
        var spill: [UInt8] = []
        let start: BTreeKey? = key.map { .bytes($0) }
        try scan(from: start, reverse: reverse) { leaf, i throws(StorageError) -> Bool in
            let k = try leaf.bytesKey(i)
            return try withValue(of: leaf, i, spill: &spill) { value throws(StorageError) in try body(k, value) }
        }
    }

    /// Calls `body` with each key (as stored: 8 little-endian bytes in a UInt64 tree) and value
    /// from position `position` (0-based, in key order) on, ascending or with `reverse`
    /// descending, until `body` returns false. For paging through ordered results.
    /// - Throws: `.corrupt`; what `body` throws. A position at or past `count` visits nothing.
    /// - Complexity: O(log n + visited)
    @inlinable
    public func forEach(fromPosition position: UInt64, reverse: Bool = false,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        var spill: [UInt8] = []
        try scan(try cursor(atPosition: position, reverse: reverse)) { leaf, i throws(StorageError) -> Bool in
            let k = try leaf.rawKey(i)
            return try withValue(of: leaf, i, spill: &spill) { value throws(StorageError) in try body(k, value) }
        }
    }

    /// The keys alone of a byte-string tree, ascending from the first key >= `key` (or with
    /// `reverse` descending from the last key <= `key`), until `body` returns false: for an
    /// index, whose entries carry everything in their keys, without finding each value.
    /// - Throws: `.invalidArgument` on a UInt64-keyed tree; `.corrupt`; what `body` throws.
    /// - Complexity: O(log n · k + visited)
    @inlinable
    public func forEachKey(from key: [UInt8], reverse: Bool = false,
                           _ body: (UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        try requireKind(.bytes)
        try withBytes(key) { k throws(StorageError) in
            try scan(from: .bytes(k), reverse: reverse) { leaf, i throws(StorageError) -> Bool in
                try body(try leaf.bytesKey(i))
            }
        }
    }

    /// `forEach(from:reverse:_:)` for a byte-string tree, starting from an array key.
    /// - Complexity: O(log n · k + visited)
    @inlinable
    public func forEach(from key: [UInt8], reverse: Bool = false,
                        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> Bool) throws(StorageError) {
        try withBytes(key) { k throws(StorageError) in try forEach(from: k, reverse: reverse, body) }
    }

    // MARK: - Positions

    /// The leaf and slot of the entry at `position` in key order, found through subtree counts.
    @inlinable
    func locate(_ position: UInt64) throws(StorageError) -> (leaf: BTreeNode, index: Int) {
        guard position < root.count else {
            throw .invalidArgument("B+tree position \(position) is out of range for \(root.count) entries")
        }
        var node = try self.node(root.page, level: -1)
        var remaining = position
        while node.level > 0 {
            var next: PageRef?
            for i in 0..<node.count {
                let (ref, count) = try node.child(i)
                if remaining < count { next = ref; break }
                remaining &-= count
            }
            guard let next else {
                throw BTreeNode.fault(node.pgno, "subtree counts add up to less than position \(position) requires")
            }
            node = try self.node(next, level: node.level &- 1)
        }
        guard remaining < UInt64(node.count) else {
            throw BTreeNode.fault(node.pgno, "leaf holds \(node.count) entries, its parent counts more")
        }
        return (node, Int(remaining))
    }

    /// Calls `body` with the key and value of the entry at `position` (0-based, in key order),
    /// both in place. The key is as stored: 8 little-endian bytes in a UInt64 tree.
    /// - Throws: `.invalidArgument` if `position >= count`; `.corrupt`.
    /// - Complexity: O(log n) (each level scans the counts of one branch page).
    @inlinable
    public func withEntry<R>(at position: UInt64,
                             _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(StorageError) -> R) throws(StorageError) -> R {
        let (leaf, i) = try locate(position)
        let key = try leaf.rawKey(i)
        return try withValue(of: leaf, i) { value throws(StorageError) in try body(key, value) }
    }

    /// A copy of the entry at `position` (0-based, in key order). The key is as stored: 8
    /// little-endian bytes in a UInt64 tree (see `u64Entry(at:)`).
    /// - Throws: `.invalidArgument` if `position >= count`; `.corrupt`.
    /// - Complexity: O(log n + m)
    @inlinable
    public func entry(at position: UInt64) throws(StorageError) -> (key: [UInt8], value: [UInt8]) {
        try withEntry(at: position) { key, value throws(StorageError) in (Array(key), Array(value)) }
    }

    /// The key and a copy of the value at `position` of a UInt64 tree.
    /// - Throws: `.invalidArgument` on a byte-keyed tree or if `position >= count`; `.corrupt`.
    /// - Complexity: O(log n + m)
    @inlinable
    public func u64Entry(at position: UInt64) throws(StorageError) -> (key: UInt64, value: [UInt8]) {
        try requireKind(.u64)
        let (leaf, i) = try locate(position)
        return (try leaf.u64Key(i), try withValue(of: leaf, i) { value throws(StorageError) in Array(value) })
    }

    /// The key at `position` of a UInt64 tree.
    /// - Complexity: O(log n)
    @inlinable
    public func u64Key(at position: UInt64) throws(StorageError) -> UInt64 {
        try requireKind(.u64)
        let (leaf, i) = try locate(position)
        return try leaf.u64Key(i)
    }

    @inlinable
    func rank(_ key: BTreeKey) throws(StorageError) -> UInt64 {
        if root.page.isNone { return 0 }
        var node = try self.node(root.page, level: -1)
        var rank: UInt64 = 0
        while node.level > 0 {
            let c = try node.childIndex(key)
            for i in 0..<c { rank &+= try node.child(i).count }
            node = try self.node(try node.child(c).ref, level: node.level &- 1)
        }
        return rank &+ UInt64(try node.partition(key, from: 0, orEqual: true))
    }

    /// The number of keys less than `key`: the position `key` has or would have.
    /// - Complexity: O(log n)
    @inlinable
    public func rank(of key: UInt64) throws(StorageError) -> UInt64 {
        try requireKind(.u64)
        return try rank(.u64(key))
    }

    /// The number of byte-string keys less than `key`: the position `key` has or would have.
    /// - Complexity: O(log n · k)
    @inlinable
    public func rank(of key: UnsafeRawBufferPointer) throws(StorageError) -> UInt64 {
        try requireKind(.bytes)
        return try rank(.bytes(key))
    }

    /// The number of byte-string keys less than `key`.
    /// - Complexity: O(log n · k)
    @inlinable
    public func rank(of key: [UInt8]) throws(StorageError) -> UInt64 {
        try withBytes(key) { k throws(StorageError) in try rank(of: k) }
    }
}
