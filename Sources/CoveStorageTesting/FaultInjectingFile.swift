// A FileIO that wraps another and misbehaves on purpose, for the tests and the crash-torture
// child: it fails the Nth write, flush or extend with EIO or ENOSPC, and records every write and
// flush so that the images a power loss could leave behind can be rebuilt afterwards.
import CoveStorage
import Synchronization

/// A `FileIO` over another one, with injected failures and a trace of what reached it.
///
/// Every call passes through to the wrapped file (so the process sees its own writes, as it
/// would through the page cache) unless a fault fires. The trace records writes, flushes and
/// extends in order; `crashImage` rebuilds, from a trace prefix, a file a power loss at that
/// point could leave: everything flushed, plus any subset of the later writes, some torn.
public final class FaultInjectingFile: FileIO {
    /// The calls a fault can target.
    public enum Operation: Sendable, Equatable {
        case write, sync, extend
    }

    /// A failure to inject: the `nth` call (1-based) of `operation` fails with `error`, and with
    /// `persistent` every later call of any kind fails too (a device that went away).
    public struct Fault: Sendable {
        public var operation: Operation
        public var nth: Int
        public var error: StorageError
        public var persistent: Bool

        public init(operation: Operation, nth: Int, error: StorageError, persistent: Bool = false) {
            self.operation = operation
            self.nth = nth
            self.error = error
            self.persistent = persistent
        }
    }

    /// One call that reached the file.
    public enum TraceEntry: Sendable {
        case write(offset: UInt64, bytes: [UInt8])
        case sync
        case extend(size: UInt64)
        case truncate(size: UInt64)
    }

    private struct State {
        var writes = 0
        var syncs = 0
        var extends = 0
        var sizeQueries = 0
        var faults: [Fault] = []
        var broken: StorageError?
        var trace: [TraceEntry] = []
        var recording: Bool
    }

    private let base: any FileIO
    private let state: Mutex<State>
    /// Called before each write with its 1-based number, outside any lock: a torture child
    /// can exit there to die in the middle of a commit.
    private let beforeWrite: (@Sendable (Int) -> Void)?

    /// Wraps `base`. With `recordTrace`, every write's bytes are kept (for `crashImage`).
    public init(wrapping base: any FileIO, recordTrace: Bool = false, faults: [Fault] = [],
                beforeWrite: (@Sendable (Int) -> Void)? = nil) {
        self.base = base
        self.beforeWrite = beforeWrite
        state = Mutex(State(faults: faults, recording: recordTrace))
    }

    /// A factory for `StorageOptions.fileFactory` that wraps each opened file and hands it to
    /// `created` (for the test to keep).
    public static func factory(recordTrace: Bool = false, faults: [Fault] = [],
                               beforeWrite: (@Sendable (Int) -> Void)? = nil,
                               created: @escaping @Sendable (FaultInjectingFile) -> Void = { _ in }) -> FileIOFactory {
        return { path, mode throws(StorageError) in
            let file = FaultInjectingFile(wrapping: try PosixFile.open(path: path, mode: mode), recordTrace: recordTrace,
                                          faults: faults, beforeWrite: beforeWrite)
            created(file)
            return file
        }
    }

    public var path: String { base.path }
    public var descriptor: Int32 { base.descriptor }

    /// Adds a fault; `nth` counts from the calls already made.
    public func inject(_ fault: Fault) {
        state.withLock { s in
            var f = fault
            switch f.operation {
            case .write: f.nth += s.writes
            case .sync: f.nth += s.syncs
            case .extend: f.nth += s.extends
            }
            s.faults.append(f)
        }
    }

    /// The calls made so far: writes, flushes, extends.
    public var counts: (writes: Int, syncs: Int, extends: Int) {
        state.withLock { ($0.writes, $0.syncs, $0.extends) }
    }

    /// How many times the size of the file was asked for.
    public var sizeQueries: Int {
        state.withLock { $0.sizeQueries }
    }

    /// The trace so far (empty unless recording).
    public var trace: [TraceEntry] {
        state.withLock { $0.trace }
    }

    /// Counts a call and throws if a fault targets it.
    private func check(_ op: Operation) throws(StorageError) {
        try state.withLock { s throws(StorageError) in
            if let broken = s.broken { throw broken }
            let n: Int
            switch op {
            case .write: s.writes += 1; n = s.writes
            case .sync: s.syncs += 1; n = s.syncs
            case .extend: s.extends += 1; n = s.extends
            }
            if let i = s.faults.firstIndex(where: { $0.operation == op && $0.nth == n }) {
                let f = s.faults.remove(at: i)
                if f.persistent { s.broken = f.error }
                throw f.error
            }
        }
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try base.read(into: buffer, at: offset)
    }

    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        if let beforeWrite {
            beforeWrite(state.withLock { $0.writes } + 1)
        }
        try check(.write)
        try base.write(bytes, at: offset)
        state.withLock { s in
            if s.recording { s.trace.append(.write(offset: offset, bytes: Array(bytes))) }
        }
    }

    /// One write of the pages gathered into one buffer: counted, traced and faulted as the
    /// single call the real file makes of it.
    public func writePages(_ pages: UnsafeBufferPointer<UnsafeRawPointer>, at offset: UInt64) throws(StorageError) {
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: pages.count * pageSize, alignment: 16)
        defer { buffer.deallocate() }
        for (i, page) in pages.enumerated() {
            (buffer + i * pageSize).copyMemory(from: page, byteCount: pageSize)
        }
        try write(UnsafeRawBufferPointer(start: buffer, count: pages.count * pageSize), at: offset)
    }

    public func sync() throws(StorageError) {
        try check(.sync)
        try base.sync()
        state.withLock { s in
            if s.recording { s.trace.append(.sync) }
        }
    }

    public func extend(to size: UInt64) throws(StorageError) {
        try check(.extend)
        try base.extend(to: size)
        state.withLock { s in
            if s.recording { s.trace.append(.extend(size: size)) }
        }
    }

    public func truncate(to size: UInt64) throws(StorageError) {
        try check(.extend)
        try base.truncate(to: size)
        state.withLock { s in
            if s.recording { s.trace.append(.truncate(size: size)) }
        }
    }

    public func size() throws(StorageError) -> UInt64 {
        state.withLock { $0.sizeQueries += 1 }
        return try base.size()
    }

    public func close() {
        base.close()
    }

    // MARK: Power loss

    /// What became of one write that was not yet flushed when the power went.
    public enum PendingFate: Sendable {
        case lost, kept
        /// Kept in part: each 512-byte sector whose bit is set in the mask (sector i of the
        /// write uses bit i % 64).
        case torn(sectorMask: UInt64)
    }

    /// The file a power loss after the first `point` trace entries could leave: every write up
    /// to the last flush before `point`, then the writes after it in a random order, each lost,
    /// kept or torn as `fate` decides (given its index among them and their number).
    public static func crashImage(trace: [TraceEntry], at point: Int,
                                  fate: (_ index: Int, _ count: Int) -> PendingFate,
                                  order: ([Int]) -> [Int] = { $0 }) -> [UInt8] {
        let end = min(point, trace.count)
        var lastSync = -1
        for i in 0..<end { if case .sync = trace[i] { lastSync = i } }
        var image: [UInt8] = []
        func apply(_ offset: UInt64, _ bytes: [UInt8], mask: UInt64?) {
            let start = Int(offset)
            if image.count < start + bytes.count { image.append(contentsOf: repeatElement(0, count: start + bytes.count - image.count)) }
            guard let mask else {
                image.replaceSubrange(start..<start + bytes.count, with: bytes)
                return
            }
            var sector = 0
            while sector * 512 < bytes.count {
                if mask & (1 << UInt64(sector % 64)) != 0 {
                    let lo = sector * 512
                    let hi = min(lo + 512, bytes.count)
                    image.replaceSubrange(start + lo..<start + hi, with: bytes[lo..<hi])
                }
                sector += 1
            }
        }
        func grow(_ size: UInt64) {
            if image.count < Int(size) { image.append(contentsOf: repeatElement(0, count: Int(size) - image.count)) }
        }
        func shrink(_ size: UInt64) {
            if image.count > Int(size) { image.removeLast(image.count - Int(size)) }
        }
        for i in 0..<max(lastSync, 0) {
            switch trace[i] {
            case .write(let offset, let bytes): apply(offset, bytes, mask: nil)
            case .extend(let size): grow(size)
            case .truncate(let size): shrink(size)
            case .sync: break
            }
        }
        var pending: [Int] = []
        for i in (lastSync + 1)..<end where i >= 0 {
            switch trace[i] {
            case .write: pending.append(i)
            case .extend(let size): grow(size) // the size may or may not survive; assume it does
            // So may a shortening (the engine shortens only right after a flush, before any
            // write of the next commit: applied before the writes that follow it).
            case .truncate(let size): shrink(size)
            case .sync: break
            }
        }
        let count = pending.count
        for (k, i) in order(Array(0..<count)).map({ ($0, pending[$0]) }) {
            guard case .write(let offset, let bytes) = trace[i] else { continue }
            switch fate(k, count) {
            case .lost: break
            case .kept: apply(offset, bytes, mask: nil)
            case .torn(let mask): apply(offset, bytes, mask: mask)
            }
        }
        return image
    }
}
