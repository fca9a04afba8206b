// Insertion and update, and the path walk every mutation shares: descend to the leaf recording
// the path, edit the leaf, then carry the outcome (new page, split, underflow, count change) up
// the path one branch at a time until nothing above changes. Every page on the way is written
// copy-on-write; the loop's depth is the tree's height, never more.

/// One branch level (or the leaf, last) of the path from the root.
struct PathStep {
    var ref = PageRef.none
    /// The node's subtree count, as its parent (or the root) records it.
    var count: UInt64 = 0
    /// The child taken (a branch) or the key's position (the leaf).
    var index = 0
    var level = 0
}

/// The change a mutation makes in its leaf.
enum LeafEdit {
    case put(UnsafeRawBufferPointer)
    /// A put that leaves an existing entry alone.
    case insert(UnsafeRawBufferPointer)
    case remove
}

extension BTree {
    // MARK: - Public API

    /// Stores `value` under `key`, replacing any value it had.
    ///
    /// `value` must not point into this store's pages. A value stays in the leaf when it is at
    /// most 1006 bytes long (in a UInt64 tree; see `inlineValueLimit`), otherwise it goes to
    /// overflow pages.
    ///
    /// Replacing a value by one of the same size in a leaf this transaction already wrote
    /// allocates and frees no page (when both values are inline), and a put never merges pages
    /// unless it shrinks a value or the tree shares splits (`sharesSplits`): owners that edit a
    /// tree while accounting for its pages (the free-space tree) may rely on both once they
    /// turn sharing off.
    /// - Returns: true if `key` is new.
    /// - Throws: `.invalidArgument` on a byte-keyed tree or for a value over `maxValueLength`;
    ///   `.corrupt`; the store's allocation errors.
    /// - Complexity: O(log n), plus O(m) for a value of m bytes.
    @discardableResult
    public mutating func put(_ key: UInt64, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try requireKind(.u64)
        return try update(.u64(key), .put(value))
    }

    /// Stores `value` under `key`, replacing any value it had.
    /// - Returns: true if `key` is new.
    /// - Complexity: O(log n + m)
    @discardableResult
    public mutating func put(_ key: UInt64, _ value: [UInt8]) throws(StorageError) -> Bool {
        try withBytes(value) { v throws(StorageError) in try put(key, v) }
    }

    /// Stores `value` under the byte-string `key`, replacing any value it had.
    /// - Returns: true if `key` is new.
    /// - Throws: `.invalidArgument` on a UInt64-keyed tree, for a key longer than
    ///   `maxKeyLength` or a value over `maxValueLength`; `.corrupt`; allocation errors.
    /// - Complexity: O(log n · k + m) for a key of k bytes and a value of m bytes.
    @discardableResult
    public mutating func put(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try requireKind(.bytes)
        guard key.count <= Self.maxKeyLength else {
            throw .invalidArgument("B+tree key of \(key.count) bytes is longer than the maximum of \(Self.maxKeyLength)")
        }
        return try update(.bytes(key), .put(value))
    }

    /// Stores `value` under the byte-string `key`, replacing any value it had.
    /// - Returns: true if `key` is new.
    /// - Complexity: O(log n · k + m)
    @discardableResult
    public mutating func put(_ key: [UInt8], _ value: [UInt8]) throws(StorageError) -> Bool {
        try withBytes(value) { v throws(StorageError) in try put(key, v) }
    }

    /// Stores the bytes `value` points at under the byte-string `key` (a value made in
    /// temporary memory).
    /// - Returns: true if `key` is new.
    @discardableResult
    public mutating func put(_ key: [UInt8], _ value: UnsafeRawBufferPointer) throws(StorageError) -> Bool {
        try withBytes(key) { k throws(StorageError) in try put(k, value) }
    }

    /// Adds `value` under the byte-string `key` unless the key is present (one descent where a
    /// lookup then a put would take two: a unique index's insert).
    /// - Returns: true if the entry was added, false if `key` was there (nothing changed).
    /// - Throws: as `put`.
    /// - Complexity: O(log n · k + m)
    @discardableResult
    public mutating func insert(_ key: [UInt8], _ value: [UInt8]) throws(StorageError) -> Bool {
        try requireKind(.bytes)
        guard key.count <= Self.maxKeyLength else {
            throw .invalidArgument("B+tree key of \(key.count) bytes is longer than the maximum of \(Self.maxKeyLength)")
        }
        return try withBytes(key) { k throws(StorageError) in
            try withBytes(value) { v throws(StorageError) in try update(.bytes(k), .insert(v)) }
        }
    }

    /// The longest value kept in the leaf under a key of `keyLength` bytes (ignored in a UInt64
    /// tree, where it is 1006); longer values go to overflow pages.
    /// - Complexity: O(1)
    public func inlineValueLimit(keyLength: Int = 8) -> Int {
        let keyPart = keyKind == .u64 ? 8 : 2 + keyLength
        return Swift.max(BTreeLayout.overflowRefSize, BTreeLayout.maxInlineCell - keyPart - 2)
    }

    // MARK: - The mutation path

    /// Applies `edit` to the entry for `key`.
    ///
    /// Specialized for the write transaction: callers in other modules reach this generic code
    /// through `put`/`remove`, which are not inlinable, and would otherwise run it through the
    /// store's witness table (every page lookup an indirect call).
    /// - Returns: for a put, whether the key is new; for a remove, whether it was present.
    @_specialize(where Store == WriteTransaction)
    mutating func update(_ key: BTreeKey, _ edit: LeafEdit) throws(StorageError) -> Bool {
        if let value = edit.value, value.count > Self.maxValueLength {
            throw .invalidArgument("B+tree value of \(value.count) bytes is longer than the maximum of \(Self.maxValueLength)")
        }
        if root.page.isNone {
            guard let value = edit.value else { return false }
            try plantRoot(key, value)
            return true
        }
        // The path is left uninitialized (only the first `depth` steps are written and read;
        // initializing 64 cost more than the rest of a typical put), and on the stack unless
        // the tree is unusually deep (a temporary allocation over 1 KiB goes to the heap).
        let top = try self.node(root.page, level: -1)
        let capacity = top.level < 24 ? 24 : BTreeLayout.maxLevels
        return try withUnsafeTemporaryAllocation(of: PathStep.self, capacity: capacity) {
            (path) throws(StorageError) -> Bool in
            try update(key, edit, root: top, path: path.baseAddress!)
        }
    }

    /// `update` starting at the decoded root `top`, with room for its path at `path` (at least
    /// `top.level` steps).
    private mutating func update(_ key: BTreeKey, _ edit: LeafEdit, root top: BTreeNode,
                                 path: UnsafeMutablePointer<PathStep>) throws(StorageError) -> Bool {
        var depth = 0
        var ref = root.page
        var count = root.count
        var node = top
        var rightmost = true
        var leftmost = true
        while node.level > 0 {
            let i = try node.childIndex(key)
            (path + depth).initialize(to: PathStep(ref: ref, count: count, index: i, level: node.level))
            depth += 1
            rightmost = rightmost && i == node.count - 1
            leftmost = leftmost && i == 0
            (ref, count) = try node.child(i)
            node = try self.node(ref, level: node.level - 1)
        }
        let (index, found) = try node.lowerBound(key)
        let isRoot = depth == 0

        var outcome: NodeOutcome
        let delta: Int
        var bias = SplitBias.balanced
        var childRef = ref
        var level = depth - 1
        var shared = false
        // A new key at the end (or the start) of the tree: the split, if any, packs the page
        // the key leaves behind.
        if !found && rightmost && index == node.count { bias = .packLeft }
        if !found && leftmost && index == 0 { bias = .packRight }
        if !found, depth > 0, sharesSplits, bias == .balanced, let value = edit.value,
           let split = try shareInsert(node, ref, key, value, at: index, parent: path[depth - 1]) {
            // A full leaf in the middle of the tree shares its entries with a neighbour; its
            // parent records the outcome, and the levels above it as usual.
            let step = path[depth - 1]
            outcome = try applyShared(step, split, count: step.count &+ 1, isRoot: depth == 1, bias: bias)
            delta = 1
            childRef = step.ref
            level = depth - 2
            shared = true
        } else {
            switch edit {
            case .remove:
                guard found else { return false }
                outcome = try removeFromLeaf(node, ref, at: index, isRoot: isRoot)
                delta = -1
            case .insert(let value):
                if found { return false }
                outcome = try putInLeaf(node, ref, key, value, at: index, replacing: false, isRoot: isRoot, bias: bias)
                delta = 1
            case .put(let value):
                outcome = try putInLeaf(node, ref, key, value, at: index, replacing: found, isRoot: isRoot, bias: bias)
                delta = found ? 0 : 1
            }
        }

        // Carry the outcome up. Once a level reports the same page, no split, no underflow and
        // no count change, nothing above it changes either.
        while level >= 0 {
            if outcome.ref == childRef && outcome.sibling == nil && !outcome.underflow && delta == 0 {
                return edit.isRemove ? found : !found
            }
            let step = path[level]
            outcome = try applyToBranch(step, outcome, delta: delta, isRoot: level == 0, bias: bias)
            childRef = step.ref
            level -= 1
        }
        // A put of a new key merges no page unless its leaf's split was shared (a branch
        // whose separators got shorter may then fall under its fill and merge), so it cannot
        // leave the root with a single child: the root need not be read again to find out.
        try installRoot(outcome, level: depth == 0 ? 0 : path[0].level, mayCollapse: edit.isRemove || found || shared)
        return edit.isRemove ? found : !found
    }

    /// Puts the first entry into an empty tree.
    mutating func plantRoot(_ key: BTreeKey, _ value: UnsafeRawBufferPointer) throws(StorageError) {
        let keyPart = keyPartSize(key)
        let inline = Self.keepsInline(keyPart: keyPart, length: value.count)
        let overflow = inline ? nil : try writeOverflow(value)
        let (pgno, page) = try store.allocate()
        initNode(page, level: 0)
        let size = keyPart + 2 + (inline ? value.count : BTreeLayout.overflowRefSize)
        guard let cell = try reserveCell(in: page, pgno: pgno, at: 0, size: size) else {
            throw .internal("B+tree: a \(size)-byte cell does not fit an empty leaf")
        }
        encodeLeafCell(at: cell, key: key, value: value, overflow: overflow)
        root = TreeRoot(page: freshRef(pgno), count: 1)
    }

    /// Stores `value` at `index` of `leaf`, replacing the entry there if `replacing`.
    func putInLeaf(_ leaf: BTreeNode, _ ref: PageRef, _ key: BTreeKey, _ value: UnsafeRawBufferPointer,
                   at index: Int, replacing: Bool, isRoot: Bool, bias: SplitBias) throws(StorageError) -> NodeOutcome {
        var oldChain: (ref: PageRef, length: UInt64)?
        if replacing, case .overflow(let chain, let length) = try leaf.value(index) { oldChain = (chain, length) }
        let keyPart = keyPartSize(key)
        let inline = Self.keepsInline(keyPart: keyPart, length: value.count)
        let overflow = inline ? nil : try writeOverflow(value)
        let size = keyPart + 2 + (inline ? value.count : BTreeLayout.overflowRefSize)

        let (pgno, page) = try makeWritable(ref)
        if replacing { try removeCell(in: page, pgno: pgno, at: index) }
        let outcome: NodeOutcome
        if let cell = try reserveCell(in: page, pgno: pgno, at: index, size: size) {
            encodeLeafCell(at: cell, key: key, value: value, overflow: overflow)
            let used = Self.usedBytes(page)
            outcome = NodeOutcome(ref: freshRef(pgno), count: UInt64(Self.load16(page, PageHeader.countOffset)),
                                  sibling: nil, underflow: !isRoot && used < BTreeLayout.leafMinFill)
        } else {
            // The leaf is full: lay its cells and the new one out over two pages.
            var list = CellList()
            try appendCells(of: BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind), to: &list)
            let cell = try list.insert(at: index, length: size)
            encodeLeafCell(at: cell, key: key, value: value, overflow: overflow)
            outcome = try emit(list, level: 0, reuse: freshRef(pgno), bias: replacing ? .balanced : bias)
        }
        if let oldChain { try freeOverflow(oldChain.ref, length: oldChain.length) }
        return outcome
    }

    /// Records in the branch of `step` what became of its child `step.index`.
    func applyToBranch(_ step: PathStep, _ child: NodeOutcome, delta: Int, isRoot: Bool,
                       bias: SplitBias) throws(StorageError) -> NodeOutcome {
        let count = step.count &+ UInt64(bitPattern: Int64(delta))
        if !child.underflow {
            let (pgno, page) = try makeWritable(step.ref)
            try setChild(in: page, pgno: pgno, at: step.index, child.ref, child.count)
            guard let sibling = child.sibling else {
                return NodeOutcome(ref: freshRef(pgno), count: count, sibling: nil, underflow: false)
            }
            let size = branchCellSize(separatorCount: sibling.separator.count)
            if let cell = try reserveCell(in: page, pgno: pgno, at: step.index + 1, size: size) {
                encodeBranchCell(at: cell, sibling.ref, sibling.count, separator: sibling.separator)
                return NodeOutcome(ref: freshRef(pgno), count: count, sibling: nil, underflow: false)
            }
            var list = CellList()
            try appendCells(of: BTreeNode(UnsafeRawPointer(page), pgno: pgno, kind: keyKind), to: &list)
            try insertBranchCell(&list, at: step.index + 1, sibling.ref, sibling.count, separator: sibling.separator)
            return try emit(list, level: step.level, reuse: freshRef(pgno), bias: bias)
        }
        // The child fell under its minimum fill: merge it with a neighbour or even them out.
        let parent = try node(step.ref, level: step.level)
        var list = CellList()
        try appendCells(of: parent, to: &list)
        BTree.encodeChild(at: list.cell(step.index), child.ref, child.count)
        if list.count > 1 { try rebalance(&list, at: step.index, childLevel: step.level - 1) }
        var outcome = try emit(list, level: step.level, reuse: step.ref, bias: .balanced)
        if isRoot { outcome.underflow = false }
        return outcome
    }

    /// Records the outcome at the top of the path as the new root: a new root above a split, the
    /// empty tree for an emptied leaf, and the only child of a root branch left with one.
    mutating func installRoot(_ outcome: NodeOutcome, level: Int, mayCollapse: Bool = true) throws(StorageError) {
        if let sibling = outcome.sibling {
            guard level + 1 < BTreeLayout.maxLevels else {
                throw .internal("B+tree: the tree would grow past \(BTreeLayout.maxLevels) levels")
            }
            let (pgno, page) = try store.allocate()
            initNode(page, level: level + 1)
            let first = branchCellSize(separatorCount: 0)
            let second = branchCellSize(separatorCount: sibling.separator.count)
            guard let c0 = try reserveCell(in: page, pgno: pgno, at: 0, size: first),
                  let c1 = try reserveCell(in: page, pgno: pgno, at: 1, size: second)
            else { throw .internal("B+tree: two cells do not fit an empty branch") }
            encodeBranchCell(at: c0, outcome.ref, outcome.count, separator: nil)
            encodeBranchCell(at: c1, sibling.ref, sibling.count, separator: sibling.separator)
            root = TreeRoot(page: freshRef(pgno), count: outcome.count &+ sibling.count)
            return
        }
        if level == 0 && outcome.count == 0 {
            store.free(outcome.ref.pgno)
            root = .empty
            return
        }
        var ref = outcome.ref
        var level = level
        while mayCollapse && level > 0 {
            let node = try self.node(ref, level: level)
            guard node.count == 1 else { break }
            let only = try node.child(0).ref
            store.free(ref.pgno)
            ref = only
            level -= 1
        }
        root = TreeRoot(page: ref, count: outcome.count)
    }
}

extension LeafEdit {
    var isRemove: Bool {
        if case .remove = self { return true }
        return false
    }

    /// The value a put or insert writes.
    var value: UnsafeRawBufferPointer? {
        switch self {
        case .put(let v), .insert(let v): return v
        case .remove: return nil
        }
    }
}
