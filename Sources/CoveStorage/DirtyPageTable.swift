// The write transaction's map from page number to the in-memory copy of each page it allocated:
// consulted on every page a B+tree reads or edits, so it is an open-addressing table in raw
// memory (linear probing, multiplicative hashing) rather than a Dictionary.

/// Page number -> page buffer, for the pages a write transaction allocated.
///
/// A value type over manually managed memory: the owner keeps exactly one copy that it mutates
/// (through a pointer, so that no exclusivity check runs per lookup) and calls `deallocate()`
/// once. Copies are read-only views valid until the next mutation.
/// Page number 0 (a meta slot, never allocated) marks an empty slot.
struct DirtyPageTable {
    struct Slot {
        var pgno: PageNumber
        var page: UnsafeMutableRawPointer?
    }

    private var slots: UnsafeMutablePointer<Slot>
    private var mask: Int
    /// Number of pages in the table.
    private(set) var count = 0

    init() {
        let capacity = 64
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot(pgno: 0, page: nil), count: capacity)
        mask = capacity - 1
    }

    /// Frees the table (not the pages it names).
    func deallocate() {
        slots.deallocate()
    }

    @inline(__always)
    private func home(_ pgno: PageNumber) -> Int {
        // Fibonacci hashing: the high bits of the product spread consecutive numbers apart.
        Int(truncatingIfNeeded: (pgno &* 0x9E37_79B9_7F4A_7C15) &>> 32) & mask
    }

    /// The buffer of `pgno`, or nil if the transaction did not allocate it.
    @inline(__always)
    func page(_ pgno: PageNumber) -> UnsafeMutableRawPointer? {
        var i = home(pgno)
        while true {
            let slot = slots[i]
            if slot.pgno == pgno { return slot.page }
            if slot.pgno == 0 { return nil }
            i = (i &+ 1) & mask
        }
    }

    /// Records `page` as the buffer of `pgno` (which must not be in the table).
    mutating func insert(_ pgno: PageNumber, _ page: UnsafeMutableRawPointer) {
        precondition(pgno != 0, "page 0 cannot be allocated")
        if (count + 1) * 2 > mask + 1 { grow() }
        var i = home(pgno)
        while slots[i].pgno != 0 { i = (i &+ 1) & mask }
        slots[i] = Slot(pgno: pgno, page: page)
        count += 1
    }

    /// Removes `pgno` and returns its buffer, or nil if it is not in the table.
    mutating func remove(_ pgno: PageNumber) -> UnsafeMutableRawPointer? {
        var i = home(pgno)
        while slots[i].pgno != pgno {
            if slots[i].pgno == 0 { return nil }
            i = (i &+ 1) & mask
        }
        let page = slots[i].page
        // Backward-shift deletion: move later entries of the probe run into the hole when
        // their home position does not lie between the hole and them (cyclically).
        var hole = i
        var j = i
        while true {
            j = (j &+ 1) & mask
            let s = slots[j]
            if s.pgno == 0 { break }
            let h = home(s.pgno)
            let stays = hole <= j ? (hole < h && h <= j) : (hole < h || h <= j)
            if !stays {
                slots[hole] = s
                hole = j
            }
        }
        slots[hole] = Slot(pgno: 0, page: nil)
        count -= 1
        return page
    }

    private mutating func grow() {
        let old = slots
        let oldCapacity = mask + 1
        let capacity = oldCapacity * 2
        slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
        slots.initialize(repeating: Slot(pgno: 0, page: nil), count: capacity)
        mask = capacity - 1
        for k in 0..<oldCapacity where old[k].pgno != 0 {
            var i = home(old[k].pgno)
            while slots[i].pgno != 0 { i = (i &+ 1) & mask }
            slots[i] = old[k]
        }
        old.deallocate()
    }

    /// Calls `body` with every page number and buffer, in no particular order.
    func forEach(_ body: (PageNumber, UnsafeMutableRawPointer) -> Void) {
        for k in 0...mask where slots[k].pgno != 0 {
            body(slots[k].pgno, slots[k].page!)
        }
    }

    /// Every page number in the table, in no particular order.
    var keys: [PageNumber] {
        var out: [PageNumber] = []
        out.reserveCapacity(count)
        forEach { pgno, _ in out.append(pgno) }
        return out
    }

    /// The slots the table has room for (twice the pages it holds before it grows).
    var capacity: Int { mask + 1 }

    /// Empties the table, keeping its capacity.
    mutating func removeAll() {
        slots.update(repeating: Slot(pgno: 0, page: nil), count: mask + 1)
        count = 0
    }

    /// The buffer of a page known to be in the table.
    subscript(pgno: PageNumber) -> UnsafeMutableRawPointer? {
        page(pgno)
    }
}
