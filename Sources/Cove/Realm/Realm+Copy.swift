// Realm.writeCopy(toFile:): the version a realm reads, copied into a new file with every tree
// rebuilt densely (as SQLite's VACUUM INTO does): tables cluster by cluster in key order,
// indexes, backlinks, collection areas and the trees of large collections entry by entry. Object
// keys, and so every link, stay as they are; the copy starts a history of its own.
import CoveCore
import CoveStorage
import FoundationEssentials
import Glibc

extension Realm {
    /// Writes a compacted copy of the version this realm reads to a new file at `path`: the same
    /// schema, objects, links, collections and indexes, in as few pages as they fit, committed
    /// durably. Other threads and processes may go on writing meanwhile: the copy is of this
    /// realm's version, which stays pinned while it is read. The copy is encrypted with
    /// `encryptionKey` (64 bytes), or plain without one, whatever this realm's file is: a copy
    /// adds, changes or removes a file's key.
    /// - Throws: `.invalidArgument` when a file exists at `path`, the realm is in a write
    ///   transaction, or the key is not 64 bytes; `.io` / `.noSpace` when the copy cannot be
    ///   written (the partial file is removed); `.closed`, `.wrongThread`.
    public func writeCopy(toFile path: String, encryptionKey: Data? = nil) throws(CoveError) {
        try checkOpen()
        if isInWriteTransaction {
            throw CoveError(.invalidArgument, "writeCopy: the realm is in a write transaction: commit or cancel it first")
        }
        if access(path, F_OK) == 0 {
            throw CoveError(.invalidArgument, "writeCopy: '\(path)' already exists: a copy goes to a new file")
        }
        let snapshot = try pinnedSnapshot()
        do { try CatalogCopy.writeFile(path, from: snapshot, encryptionKey: encryptionKey.map { [UInt8]($0) }) } catch { throw CoveError(error) }
    }

    /// Compacts the file at `path` in place when no other handle (in this process or another)
    /// has it open and `shouldCompact(totalBytes, usedBytes)` says so: a compacted copy is
    /// written beside it (`<path>.compacting`), flushed, and renamed over it, so that a crash
    /// leaves the old file or the new one, never neither. Returns whether it compacted. What
    /// `Configuration.shouldCompactOnLaunch` runs before an open. An encrypted file needs its
    /// `encryptionKey`, and stays encrypted with it.
    /// - Throws: `.io`, `.noSpace` (the copy is removed and the file left as it was),
    ///   `.corrupt`, `.format`, `.decryption`, as opening the file does.
    @discardableResult
    public static func compactFile(atPath path: String, encryptionKey: Data? = nil,
                                   shouldCompact: (_ totalBytes: UInt64, _ usedBytes: UInt64) -> Bool = { _, _ in true }) throws(CoveError) -> Bool {
        var options = StorageOptions()
        options.catalogPages = catalogPageWalker
        options.encryptionKey = encryptionKey.map { [UInt8]($0) }
        do throws(StorageError) {
            let storage = try Storage.open(path: path, options: options)
            let compacted = try storage.withSoleAccess { () throws(StorageError) -> Bool in
                let snapshot = try storage.beginRead()
                let size = UInt64(CoveStorage.pageSize)
                guard shouldCompact(snapshot.pageCount * size, (snapshot.pageCount - snapshot.freePageCount) * size) else {
                    snapshot.end()
                    return false
                }
                let temporary = path + ".compacting"
                unlink(temporary)
                unlink(temporary + ".lock")
                do throws(StorageError) { try CatalogCopy.writeFile(temporary, from: snapshot, encryptionKey: options.encryptionKey) } catch {
                    snapshot.end()
                    throw error
                }
                snapshot.end()
                guard rename(temporary, path) == 0 else {
                    let reason = String(cString: strerror(errno))
                    unlink(temporary)
                    throw .io("cannot rename the compacted copy over '\(path)': \(reason)")
                }
                unlink(temporary + ".lock")
                syncFolder(of: path)
                // The file under the name is the new one: the next handle starts a new session.
                storage.closeAndLeave()
                return true
            }
            if compacted != true { storage.close() }
            return compacted ?? false
        } catch {
            throw CoveError(error)
        }
    }

    /// Flushes the folder holding `path`, so that a rename in it survives a power loss.
    private static func syncFolder(of path: String) {
        let folder = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        let fd = open(folder.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : folder, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { return }
        fsync(fd)
        Glibc.close(fd)
    }
}

/// The copy of one version's catalog into a new file (see `Realm.writeCopy`).
enum CatalogCopy {
    /// Writes the version `snapshot` reads into a new file at `path` (encrypted with
    /// `encryptionKey` when given), committed durably; a failed copy is removed.
    static func writeFile(_ path: String, from snapshot: Snapshot, encryptionKey: [UInt8]?) throws(StorageError) {
        try writeFile(path, encryptionKey: encryptionKey) { (w) throws(StorageError) in
            w.catalog = try copy(TransactionPages(.read(snapshot)), catalog: snapshot.catalog, to: TransactionPages(.write(w)))
        }
    }

    /// Makes a new file at `path` (encrypted with `encryptionKey` when given) and commits
    /// durably what `fill` writes (its catalog included) in the file's first write
    /// transaction; a failed file is removed.
    static func writeFile(_ path: String, encryptionKey: [UInt8]?, _ fill: (WriteTransaction) throws(StorageError) -> Void) throws(StorageError) {
        var options = StorageOptions()
        options.durability = .full
        options.catalogPages = catalogPageWalker
        options.encryptionKey = encryptionKey
        let storage = try Storage.open(path: path, options: options)
        do throws(StorageError) {
            let w = try storage.beginWrite()
            try fill(w)
            _ = try w.commit()
            storage.close()
        } catch {
            storage.close()
            unlink(path)
            unlink(path + ".lock")
            throw error
        }
    }

    /// Rows of a table put in the new file per batch.
    static let batchRows = 256

    /// Copies every entry of the catalog at `root` in `source` into `target`, the trees they
    /// name included; returns the new catalog's root.
    static func copy(_ source: TransactionPages, catalog root: TreeRoot, to target: TransactionPages) throws(StorageError) -> TreeRoot {
        let catalog = BTree(store: source, root: root, keyKind: .bytes)
        var entries: [(key: [UInt8], value: [UInt8])] = []
        try catalog.forEach(from: nil as UnsafeRawBufferPointer?) { (k, v) throws(StorageError) -> Bool in
            entries.append((Array(k), Array(v)))
            return true
        }
        var copied = BTree(store: target, root: .empty, keyKind: .bytes)
        for (key, value) in entries {
            var bytes = value
            switch key.first {
            case CatalogKey.tableTag:
                bytes = try copyTable(value, source, target)
            case CatalogKey.primaryKeyTag, CatalogKey.backlinksTag, CatalogKey.indexTag, CatalogKey.collectionsTag,
                 CatalogKey.syncTag:
                guard value.count == TreeRoot.encodedSize else {
                    throw .corrupt("catalog: an entry of \(value.count) bytes where a tree root was expected")
                }
                let tree = try copyTree(value.withUnsafeBytes { TreeRoot.decode(from: $0.baseAddress!) }, source, target)
                // An empty tree has no catalog entry.
                if tree.page.isNone { continue }
                bytes = [UInt8](repeating: 0, count: TreeRoot.encodedSize)
                bytes.withUnsafeMutableBytes { tree.encode(into: $0.baseAddress!) }
            default:
                break
            }
            _ = try copied.put(key, bytes)
        }
        return copied.root
    }

    /// A copy in `target` of the B+tree at `root` in `source`, entry by entry in key order.
    static func copyTree(_ root: TreeRoot, _ source: TransactionPages, _ target: TransactionPages) throws(StorageError) -> TreeRoot {
        if root.page.isNone { return .empty }
        let tree = try BTree(store: source, root: root)
        var copy = BTree(store: target, root: .empty, keyKind: tree.keyKind)
        if tree.keyKind == .u64 {
            try tree.forEach(from: nil as UInt64?) { (k, v) throws(StorageError) -> Bool in
                _ = try copy.put(k, v)
                return true
            }
        } else {
            try tree.forEach(from: nil as UnsafeRawBufferPointer?) { (k, v) throws(StorageError) -> Bool in
                _ = try copy.put(k, v)
                return true
            }
        }
        guard copy.count == tree.count else {
            throw .corrupt("a tree counting \(tree.count) entries holds \(copy.count)")
        }
        return copy.root
    }

    /// The table entry `value` with its objects copied into `target`: every row under its key,
    /// the trees of its large collections copied with it.
    static func copyTable(_ value: [UInt8], _ source: TransactionPages, _ target: TransactionPages) throws(StorageError) -> [UInt8] {
        let decoded = value.withUnsafeBytes { b in Result { () throws(StorageError) -> TableEntry in try TableEntry.decode(b) } }
        var entry = try decoded.get()
        let specs = entry.columns.map(\.spec)
        let collections = specs.indices.filter { specs[$0].kind == .collection || specs[$0].kind == .collectionInRow }
        let table = ClusterTree(store: source, root: entry.root, columns: specs)
        var copy = ClusterTree(store: target, root: .empty, columns: specs)
        var batch = ClusterBatch(specs: specs)
        var pending = 0
        var row = [CellValue](repeating: .null, count: specs.count)
        try table.forEachCluster { (view) throws(StorageError) -> Bool in
            for i in 0..<view.count {
                for c in 0..<specs.count { row[c] = try view.value(c, i) }
                for c in collections { row[c] = try copyCollection(row[c], source, target) }
                try batch.append(view.key(i), row)
                pending += 1
                if pending == batchRows {
                    try copy.append(&batch)
                    pending = 0
                }
            }
            return true
        }
        try copy.append(&batch)
        guard copy.root.objectCount == table.root.objectCount else {
            throw .corrupt("a table counting \(table.root.objectCount) objects holds \(copy.root.objectCount)")
        }
        entry.root = copy.root
        return try entry.withEncoded { (b) throws(StorageError) -> [UInt8] in Array(b) }
    }

    /// A collection cell with the tree it names (if any) copied into `target`.
    static func copyCollection(_ cell: CellValue, _ source: TransactionPages, _ target: TransactionPages) throws(StorageError) -> CellValue {
        guard let root = ObjectStore.treeRoot(in: cell) else { return cell }
        let copied = try copyTree(root, source, target)
        if case .root = cell { return .root(copied) }
        return ObjectStore.rowValue(.tree(copied))
    }
}
