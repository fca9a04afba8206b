// Reading a damaged file for salvage: an open that trusts nothing and writes nothing (no lock
// file, no recovery, every valid meta slot offered), a page store that remembers which page a
// read failed on, and walks of B+trees and tables that skip what they cannot read and say what
// it was instead of failing. The object layer's salvage (CoveCore, Salvage.swift) copies what
// these walks hand out into a new file.
import Glibc

/// One version a damaged file's meta slots hold, as `Storage.openForSalvage` finds it.
public struct SalvageVersion: Sendable {
    /// The commit version.
    public let version: UInt64
    /// Why the commit's written-page list does not check out (a page it wrote no longer holds
    /// what it wrote: the version an ordinary open would discard), or nil when it does.
    public let problem: String?
    let meta: MetaSlot
    let slot: Int
}

/// Part of a tree that a tolerant walk could not read: a page that fails its checksum, does not
/// decode, or is not the version its reference names.
public struct LostPage: Sendable, Equatable {
    /// The page the read failed on.
    public let page: PageNumber
    /// How many entries the reference to the page counted below it, when it tells (the objects of
    /// a table's cluster, the entries of a B+tree's subtree); nil when nothing counts them (a
    /// table's clusters are counted by cluster, not by object).
    public let entries: UInt64?
    /// What failed.
    public let reason: String

    public init(page: PageNumber, entries: UInt64?, reason: String) {
        self.page = page
        self.entries = entries
        self.reason = reason
    }
}

extension Storage {
    /// Opens the file at `path` to read what can still be read of it: read-only, without its
    /// lock file (nothing is created or written), without recovery. Every meta slot that
    /// decodes and fits the file is offered, newest first, each with whether its commit checks
    /// out. Run it on a file no other process is writing: nothing here keeps a writer from
    /// reusing pages.
    /// - Throws: `.io` (cannot open), `.corrupt` (not a Cove file, or no meta slot holds
    ///   together), `.format` (a newer format).
    public static func openForSalvage(path: String, encryptionKey: [UInt8]? = nil) throws(StorageError) -> (Storage, [SalvageVersion]) {
        let key = try encryptionKey.map { bytes throws(StorageError) in try EncryptionKey(bytes) }
        var io = try PosixFile.open(path: path, mode: .readOnly)
        try refuseForeignFile(io, encrypted: key != nil)
        if let key { io = try EncryptedFile(wrapping: io, key: key) }
        let file = try PageFile(io: io, reservation: StorageOptions().maxFileSize)
        let filePages = try io.size() / UInt64(pageSize)
        guard filePages >= 1 else { throw .corrupt("'\(path)' is not a Cove file (shorter than a meta slot)") }
        try file.ensureMapped(pages: filePages)
        let scan = try scanSlots(file, filePages: filePages)
        guard let newest = scan.candidates.first else {
            throw .corrupt("the meta slots of '\(path)' are damaged: " + scan.reasons.joined(separator: "; "))
        }
        var versions: [SalvageVersion] = []
        for c in scan.candidates {
            var problem: String?
            do throws(StorageError) { try scan.checkWrittenPages(of: c, in: file) } catch { problem = error.message }
            versions.append(SalvageVersion(version: c.meta.version, problem: problem, meta: c.meta, slot: c.slot))
        }
        file.secondSlot = newest.meta.secondSlot
        let lock = try LockFile.inMemory(description: "'\(path)' (read for salvage)", fileId: newest.meta.fileId)
        lock.initialize(fileId: newest.meta.fileId, latestVersion: newest.meta.version, latestSlot: UInt64(newest.slot))
        var options = StorageOptions()
        options.readOnly = true
        let storage = Storage(path: path, options: options, file: file, lock: lock, meta: newest.meta, slot: newest.slot)
        return (storage, versions)
    }

    /// A snapshot of `version`, one of those `openForSalvage` returned.
    /// - Throws: `.tooManyVersions` when every reader slot is taken, `.closed`.
    public func salvageSnapshot(_ version: SalvageVersion) throws(StorageError) -> Snapshot {
        try checkUsable()
        let slot = try lock.claimSlot(pid: pid)
        return Snapshot(storage: self, slot: slot, box: MetaBox(version.meta))
    }
}

/// The pages of a snapshot of a damaged file, remembering the page asked for last: when a read
/// fails, that is the page it failed on (a tree reads a page, then decodes it).
public final class SalvagePages: PageStore {
    public let snapshot: Snapshot
    /// The page `page(_:)` was asked for last.
    public private(set) var lastPage: PageNumber = 0

    public init(_ snapshot: Snapshot) {
        self.snapshot = snapshot
    }

    public var version: UInt64 { snapshot.version }

    public func page(_ pgno: PageNumber) throws(StorageError) -> UnsafeRawPointer {
        lastPage = pgno
        return try snapshot.page(pgno)
    }

    /// What a failed read lost: the last page read, with `entries` and the error's message.
    public func lost(_ error: StorageError, entries: UInt64?) -> LostPage {
        LostPage(page: lastPage, entries: entries, reason: error.message)
    }

    public func isWritable(_ pgno: PageNumber) -> Bool { false }

    public func writablePage(_ pgno: PageNumber) -> UnsafeMutableRawPointer {
        snapshot.writablePage(pgno)
    }

    public func adoptInPlace(_ pgno: PageNumber) throws(StorageError) -> UnsafeMutableRawPointer? { nil }

    public func allocate(replacing old: PageRef?) throws(StorageError) -> (PageNumber, UnsafeMutableRawPointer) {
        try snapshot.allocate(replacing: old)
    }

    public func free(_ pgno: PageNumber) {}
}

/// A key as a tolerant walk hands it out.
public enum SalvagedKey: Sendable, Equatable {
    case u64(UInt64)
    case bytes([UInt8])
}

extension BTree where Store == SalvagePages {
    /// Calls `body` with every entry that can still be read, in key order. A page that cannot
    /// be read is passed to `lost` with the entries its reference counts, and the walk goes on
    /// with its siblings; an entry whose value cannot be read (a damaged overflow chain) is
    /// passed to `lost` as one entry. Errors `body` throws end the walk.
    public func salvageEach(_ body: (SalvagedKey, [UInt8]) throws(StorageError) -> Void,
                            lost: (LostPage) -> Void) throws(StorageError) {
        if root.page.isNone { return }
        var seen = Set<PageNumber>()
        try salvageNode(root.page, level: -1, entries: root.count, seen: &seen, body, lost: lost)
    }

    private func salvageNode(_ ref: PageRef, level: Int, entries: UInt64, seen: inout Set<PageNumber>,
                             _ body: (SalvagedKey, [UInt8]) throws(StorageError) -> Void,
                             lost: (LostPage) -> Void) throws(StorageError) {
        guard seen.insert(ref.pgno).inserted else {
            lost(LostPage(page: ref.pgno, entries: entries, reason: "page \(ref.pgno) is referenced twice"))
            return
        }
        let node: BTreeNode
        do { node = try self.node(ref, level: level) } catch {
            lost(LostPage(page: ref.pgno, entries: entries, reason: error.message))
            return
        }
        if node.level > 0 {
            for i in 0..<node.count {
                let child: (ref: PageRef, count: UInt64)
                do { child = try node.child(i) } catch {
                    lost(LostPage(page: ref.pgno, entries: nil, reason: error.message))
                    continue
                }
                try salvageNode(child.ref, level: node.level - 1, entries: child.count, seen: &seen, body, lost: lost)
            }
            return
        }
        for i in 0..<node.count {
            let entry: (SalvagedKey, [UInt8])
            do throws(StorageError) {
                let key: SalvagedKey = keyKind == .u64 ? .u64(try node.u64Key(i)) : .bytes(Array(try node.bytesKey(i)))
                entry = (key, try withValue(of: node, i) { Array($0) })
            } catch {
                lost(store.lost(error, entries: 1))
                continue
            }
            try body(entry.0, entry.1)
        }
    }
}

extension ClusterTree where Store == SalvagePages {
    /// Calls `body` with every cluster of the table that can still be read, in key order. A
    /// cluster page that cannot be read is passed to `lost` with the objects its reference
    /// counts; a page of the tree of clusters, with no count (it counts clusters, not objects).
    /// Errors `body` throws end the walk.
    public func salvageClusters(_ body: (ClusterView) throws(StorageError) -> Void,
                                lost: (LostPage) -> Void) throws(StorageError) {
        try index.salvageEach({ (key, value) throws(StorageError) in
            guard case .u64(let k) = key else { return }
            let ref: ClusterRef
            do throws(StorageError) {
                ref = try value.withUnsafeBytes { v in Result { () throws(StorageError) in try ClusterRef(key: k, v) } }.get()
            } catch {
                lost(store.lost(error, entries: nil))
                return
            }
            let leaf: ClusterLeaf
            do throws(StorageError) { leaf = try self.leaf(ref) } catch {
                lost(LostPage(page: ref.page.pgno, entries: ref.count, reason: error.message))
                return
            }
            try body(ClusterView(leaf: leaf, specs: specs, reader: TreeOverflowReader(store)))
        }, lost: { page in lost(LostPage(page: page.page, entries: nil, reason: page.reason)) })
    }
}
