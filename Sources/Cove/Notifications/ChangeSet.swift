// What a collection notification carries: deletions (old indices), insertions and
// modifications (new indices, with the modified rows' old indices too), moves for lists, and
// the cleared and owner-deleted flags; and how one is computed from two versions of a
// collection's elements: rows in both whose relative order holds (a longest increasing run of
// their old positions) stay, the others are deleted and inserted again.
import CoveCore
import FoundationEssentials

/// The changes of a collection between two deliveries, ready for a table view's batch update:
/// delete `deletions` (old indices), insert `insertions`, reload `modifications` (new indices).
public struct CollectionChangeSet: Equatable, Sendable {
    /// Old indices of the rows that went away, ascending.
    public var deletions: [Int] = []
    /// New indices of the rows that came, ascending.
    public var insertions: [Int] = []
    /// New indices of the rows that stayed and whose objects changed, ascending.
    public var modifications: [Int] = []
    /// The same rows' old indices, in the same order.
    public var modificationsOld: [Int] = []
    /// Lists only: elements moved by the list's own move operations, as (old index, new
    /// index), ascending by new index. Each is also in `deletions` (its old index) and in
    /// `insertions` (its new one), so a consumer that knows nothing of moves applies the change
    /// set correctly; one that animates moves can use these pairs instead.
    public var moves: [(from: Int, to: Int)] = []
    /// The collection was emptied by a clear (`removeAll`) in one of the commits this change set
    /// covers: then `deletions` hold every row it had at the previous delivery, and
    /// `insertions` every row it holds now (those added after the clear, in the same commit or
    /// a later one), and no row is a modification.
    public var cleared = false
    /// The object owning the collection was deleted.
    public var ownerDeleted = false
    /// New indices of rows that moved (so are in `deletions` and `insertions`) and whose
    /// objects changed too: what layers that regroup the rows (sections) need. Not compared.
    var movedModified: [Int] = []
    /// New indices of the rows that kept their place though their sort values may have changed
    /// (sorted results after a write of a property the sort reads), ascending; nil when the
    /// change set came from comparing the rows and does not say. For layers keyed on those
    /// values (sections). Not compared.
    var resorted: [Int]?

    public init() {}

    /// Whether nothing changed.
    public var isEmpty: Bool {
        deletions.isEmpty && insertions.isEmpty && modifications.isEmpty && moves.isEmpty && !cleared && !ownerDeleted
    }

    public static func == (a: CollectionChangeSet, b: CollectionChangeSet) -> Bool {
        a.deletions == b.deletions && a.insertions == b.insertions && a.modifications == b.modifications
            && a.modificationsOld == b.modificationsOld && a.moves.map(\.from) == b.moves.map(\.from)
            && a.moves.map(\.to) == b.moves.map(\.to) && a.cleared == b.cleared && a.ownerDeleted == b.ownerDeleted
    }

    /// The changes from `old` to `new` (object links or values; a list's rows may repeat one),
    /// with `modified(element)` telling which rows that stayed changed. Equal elements pair up
    /// in order: the first occurrence in `new` with the first in `old`, and so on.
    /// - Complexity: O(n log n) in the number of rows.
    static func diff(old: [Value], new: [Value], modified: (Value) -> Bool) -> CollectionChangeSet {
        var result = CollectionChangeSet()
        // Each element's first old position not yet paired; the later ones of an element that
        // occurs more than once wait in `repeats`, last first (rare: kept out of the common path).
        var nextOld: [Value: Int] = [:]
        var repeats: [Value: [Int]] = [:]
        nextOld.reserveCapacity(old.count)
        for (i, v) in old.enumerated().reversed() {
            if let later = nextOld.updateValue(i, forKey: v) { repeats[v, default: []].append(later) }
        }
        // The rows in both, in new order, with their old positions.
        var common: [(new: Int, old: Int)] = []
        var paired = [Bool](repeating: false, count: old.count)
        for (j, v) in new.enumerated() {
            if let i = nextOld[v] {
                if repeats.isEmpty {
                    nextOld[v] = nil
                } else {
                    nextOld[v] = repeats[v]?.popLast()
                }
                common.append((j, i))
                paired[i] = true
            } else {
                result.insertions.append(j)
            }
        }
        for i in old.indices where !paired[i] { result.deletions.append(i) }
        // Those whose old positions do not increase along the new order moved: report them as
        // deleted and inserted, keeping the longest run that did not move.
        let keep = longestIncreasing(common.map(\.old))
        for (k, pair) in common.enumerated() {
            if keep.contains(k) {
                if modified(new[pair.new]) {
                    result.modifications.append(pair.new)
                    result.modificationsOld.append(pair.old)
                }
            } else {
                result.deletions.append(pair.old)
                result.insertions.append(pair.new)
                if modified(new[pair.new]) { result.movedModified.append(pair.new) }
            }
        }
        result.deletions.sort()
        result.insertions.sort()
        return result
    }

    /// The positions (into `values`) of a longest strictly increasing subsequence.
    /// - Complexity: O(n log n)
    static func longestIncreasing(_ values: [Int]) -> Set<Int> {
        var tails: [Int] = []          // positions of the smallest tail of each length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var out = Set<Int>()
        var k = tails.last ?? -1
        while k >= 0 {
            out.insert(k)
            k = previous[k]
        }
        return out
    }

    /// Applies the change set to `old`, with `new` supplying inserted and modified rows, as a
    /// table view does: deletions (old indices), then insertions (new indices), then the
    /// modified rows read again. Moves need nothing more: each is a deletion and an insertion
    /// too. Tests check that this gives exactly the new contents.
    public static func apply<T>(_ changes: CollectionChangeSet, to old: [T], new: [T]) -> [T] {
        let removals = Set(changes.deletions)
        var rows = old.enumerated().filter { !removals.contains($0.offset) }.map(\.element)
        for j in changes.insertions where j <= rows.count { rows.insert(new[j], at: j) }
        for j in changes.modifications where j < rows.count { rows[j] = new[j] }
        return rows
    }
}

/// What an object observer receives (realm-swift's `ObjectChange<T>`): the properties written
/// since the previous call, with their old and new values, or the object's deletion. `T` is what
/// was observed: the object (`ObjectChange<Dog>`, `ObjectChange<DynamicObject>`) or a projection.
public enum ObjectChange<T> {
    /// Properties of `T` were written (a value written equal to the old one is listed too).
    case change(T, [PropertyChange])
    /// The object was deleted; nothing more is delivered.
    case deleted
    /// Computing the changes failed, or the observation could not start; nothing more is
    /// delivered. The error is a `CoveError`.
    case error(Error)

    /// The same change about another observed value (a projection of the object, say).
    func map<U>(_ transform: (T) -> U) -> ObjectChange<U> {
        switch self {
        case .change(let t, let properties): .change(transform(t), properties)
        case .deleted: .deleted
        case .error(let e): .error(e)
        }
    }
}

/// One written property of an object notification.
public struct PropertyChange {
    /// The property's name (for a projection, the projected name).
    public let name: String
    /// The old value as stored (nil for a collection property).
    public let storedOldValue: Value?
    /// The new value as stored (nil for a collection property).
    public let storedNewValue: Value?
    /// Where a link value's object is looked up, when it is read as a Swift value.
    private weak var realm: Realm?

    /// Its value at the previous delivery as a Swift value (`Int`, `String`, `Date`, `Data`,
    /// `Double`, an object for a link...), nil for null and for a collection property. Made
    /// when read (a link's object is looked up then), so that callers reading the stored values
    /// (C, Python) pay nothing for it.
    public var oldValue: Any? { storedOldValue.flatMap { $0.swiftValue(in: realm) } }
    /// Its value now, as `oldValue`.
    public var newValue: Any? { storedNewValue.flatMap { $0.swiftValue(in: realm) } }

    /// A change of `name` from `old` to `new`, the links among them resolved in `realm`.
    init(name: String, old: Value?, new: Value?, realm: Realm?) {
        self.name = name
        storedOldValue = old
        storedNewValue = new
        self.realm = realm
    }
}

extension Value {
    /// The value as the Swift type a model property of its type holds (nil for null; a link
    /// as the object, of its model class when one is declared, nil when it is gone).
    func swiftValue(in realm: Realm?) -> Any? {
        switch self {
        case .null: return nil
        case .bool(let b): return b
        case .int(let i): return Int(truncatingIfNeeded: i)
        case .float(let f): return f
        case .double(let d): return d
        case .string(let s): return s
        case .data(let bytes): return Data(bytes)
        case .timestamp(let t): return t.date
        case .decimal128(let d): return d
        case .objectId(let o): return o
        case .uuid(let u): return u
        case .link(let link):
            guard let realm, let object = try? realm.object(for: link) else { return nil }
            return ModelRegistry.make(object)
        case .list, .dictionary: return self
        }
    }
}

/// What a collection observer of realm-swift's shape receives (`Results`, `List`, `MutableSet`
/// and `observe(keyPaths:on:_:)`): the collection itself at the first call, then with the
/// indices of each change, ready for a table view's batch update (deletions in the old
/// collection, insertions and modifications in the new one, each ascending; a moved row is a
/// deletion and an insertion). `CollectionChange` is the same with Cove's full change set.
@frozen
public enum RealmCollectionChange<CollectionType> {
    /// The query ran and the collection can be read without blocking.
    case initial(CollectionType)
    /// A commit changed the collection or objects in it.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Computing the changes failed, or the observation could not start; no call follows. The
    /// error is a `CoveError`.
    case error(Error)
}

/// What a collection observer registered with `observeChanges` receives: Cove's full change
/// set, with moves, the modified rows' old indices and the cleared and owner-deleted flags.
public enum CollectionChange: Sendable {
    /// The first delivery, with the collection as it is.
    case initial
    /// A later delivery.
    case update(CollectionChangeSet)
    /// Computing the changes failed; the observation stopped.
    case error(CoveError)
}
