// realm-swift's shape of sectioned results: the `RealmSectionedResult` protocol that
// `SectionedResults` and `ResultsSection` share, `SectionedResultsChange` with index paths and
// `IndexSet`s, `observe(keyPaths:on:_:)`, and sectioning by a Swift key path or a key block. It
// needs Foundation's `IndexSet`, so it is part of the Swift package only: libcove.so, built
// without Foundation (COVE_NO_FOUNDATION), serves C through `observeChanges` instead.
#if !COVE_NO_FOUNDATION
import CoveCore
import Dispatch
import Foundation

/// What a sectioned-results observer of realm-swift's shape receives: the collection at the
/// first call, then each change as index paths (deletions old, insertions and modifications
/// new) and the sections inserted (new indices) and deleted (old indices). The rows of an
/// inserted or deleted section are not listed; a row whose key changed is a deletion and an
/// insertion.
@frozen
public enum SectionedResultsChange<Collection> {
    /// The sections were cut and can be read without blocking.
    case initial(Collection)
    /// A commit changed the sections or objects in them.
    case update(Collection, deletions: [IndexPath], insertions: [IndexPath], modifications: [IndexPath],
                sectionsToInsert: IndexSet, sectionsToDelete: IndexSet)
    /// Computing the changes failed, or the observation could not start; no call follows.
    case error(Error)

    /// The realm-swift form of a Cove sectioned change, about `collection`.
    init(_ change: SectionedChange, _ collection: Collection) {
        switch change {
        case .initial: self = .initial(collection)
        case .update(let c):
            self = .update(collection, deletions: c.deletions, insertions: c.insertions, modifications: c.modifications,
                           sectionsToInsert: IndexSet(c.sectionsToInsert), sectionsToDelete: IndexSet(c.sectionsToDelete))
        case .error(let e): self = .error(e)
        }
    }
}

/// The name the issue of realm-swift's API also uses for the same change type.
public typealias RealmSectionedResultsChange<Collection> = SectionedResultsChange<Collection>

/// What `SectionedResults` and `ResultsSection` share: thread confinement, equality, and
/// random access to their elements (sections, or a section's rows).
public protocol RealmSectionedResult: ThreadConfined, Equatable, RandomAccessCollection {}

extension SectionedResults: RealmSectionedResult {
    /// Calls `block` with `.initial(sections)` at the realm's next delivery, then with the
    /// changes by index path. A change of a row's section key always notifies, whatever the key
    /// paths. With a `queue`, the block runs on it with a frozen copy. A registration that
    /// cannot be made is `.error` before this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<SectionedResults<Element>>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) },
                  register: { try observeChanges(keyPaths: keyPaths, $0) },
                  convert: { [self] change, toQueue in SectionedResultsChange(change, toQueue ? freeze() : self) })
    }
}

extension ResultsSection: RealmSectionedResult {
    /// Calls `block` with `.initial(section)` at the realm's next delivery, then with the rows
    /// of this key (as (0, row) index paths): when no row has the key any more they are
    /// deletions, when rows have it again insertions; sections are never inserted or deleted.
    /// A registration that cannot be made is `.error` before this returns.
    public func observe(keyPaths: [String]? = nil, on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<ResultsSection<Element>>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) },
                  register: { try observeChanges(keyPaths: keyPaths, $0) },
                  convert: { [self] change, toQueue in SectionedResultsChange(change, toQueue ? freeze() : self) })
    }
}

extension SectionedResults where Element: Object {
    /// `observe` with Swift key paths of the elements (`[\Dog.name]`).
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<SectionedResults<Element>>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) }, names: { () throws(CoveError) in try _KeyPathRecorder.paths(keyPaths, of: Element.self) },
                  observe: { observe(keyPaths: $0, on: queue, block) })
    }
}

extension ResultsSection where Element: Object {
    /// `observe` with Swift key paths of the elements.
    public func observe(keyPaths: [PartialKeyPath<Element>], on queue: DispatchQueue? = nil,
                        _ block: @escaping (SectionedResultsChange<ResultsSection<Element>>) -> Void) -> NotificationToken {
        observing(on: queue, block, failure: { .error($0) }, names: { () throws(CoveError) in try _KeyPathRecorder.paths(keyPaths, of: Element.self) },
                  observe: { observe(keyPaths: $0, on: queue, block) })
    }
}

extension Results where Element: Object {
    /// Sections by the value `keyPath` reads from each object (`dogs.sectioned(by: \.age)`),
    /// in ascending or descending key order; rows keep the results' order within a section.
    /// Stops the program when the key path reads no persisted property or a collection.
    public func sectioned<Key: _PersistableValue>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true) -> SectionedResults<Element> {
        do {
            let name = try _KeyPathRecorder.paths([keyPath], of: Element.self)[0]
            return try sectioned(by: name, ascending: ascending)
        } catch {
            preconditionFailure("Results.sectioned(by:): \(error.message)")
        }
    }

    /// Sections by what `block` says of each object, over the results sorted by
    /// `sortDescriptors` (sections in ascending key order).
    public func sectioned<Key: _PersistableValue>(by block: @escaping (Element) -> Key,
                                                  sortDescriptors: [SortDescriptor]) -> SectionedResults<Element> {
        do {
            return try sectioned(sortDescriptors: sortDescriptors) { (element: Element) throws -> Value in
                try block(element)._coveWrite(element.realm)
            }
        } catch {
            preconditionFailure("Results.sectioned(by:sortDescriptors:): \(error.message)")
        }
    }
}

extension MutableSet where Element: Object {
    /// The set's objects in sections by the value `keyPath` reads (see `Results.sectioned`).
    public func sectioned<Key: _PersistableValue>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true) -> SectionedResults<Element> {
        results().sectioned(by: keyPath, ascending: ascending)
    }

    /// The set's objects in sections by what `block` says of each, sorted by `sortDescriptors`.
    public func sectioned<Key: _PersistableValue>(by block: @escaping (Element) -> Key,
                                                  sortDescriptors: [SortDescriptor]) -> SectionedResults<Element> {
        results().sectioned(by: block, sortDescriptors: sortDescriptors)
    }
}

extension List where Element: Object {
    /// The list's objects in sections by the value `keyPath` reads (see `Results.sectioned`).
    public func sectioned<Key: _PersistableValue>(by keyPath: KeyPath<Element, Key>, ascending: Bool = true) -> SectionedResults<Element> {
        results().sectioned(by: keyPath, ascending: ascending)
    }
}
#endif
