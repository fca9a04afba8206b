// The difference between the schema a file holds and the one a program opens it with: what the
// migration must do, and whether it can happen without the program's help (additive changes).

/// What changed from an old schema to a new one, each list in the new schema's declared order
/// (removals in the old schema's order).
public struct SchemaChanges: Equatable, Sendable {
    /// A property of a class, by name.
    public struct PropertyReference: Equatable, Sendable {
        /// The class name.
        public var className: String
        /// The property name.
        public var propertyName: String
        /// Whether the property is backlinks (computed, not stored).
        public var isBacklinks: Bool

        init(_ className: String, _ property: Property) {
            self.className = className
            self.propertyName = property.name
            self.isBacklinks = property.isBacklinks
        }
    }

    /// A property present in both schemas whose type, collection or optionality differs.
    public struct PropertyChange: Equatable, Sendable {
        /// The class name.
        public var className: String
        /// The property as the old schema declares it.
        public var old: Property
        /// The property as the new schema declares it.
        public var new: Property
    }

    /// The kind of an index.
    public enum IndexKind: Equatable, Sendable {
        /// A secondary index (`"indexed"`).
        case regular
        /// A full-text index (`"fulltext"`).
        case fullText
    }

    /// An index added to or removed from a property present in both schemas.
    public struct IndexChange: Equatable, Sendable {
        /// The class name.
        public var className: String
        /// The property name.
        public var propertyName: String
        /// Which index.
        public var kind: IndexKind
        /// True when the new schema adds the index, false when it removes it.
        public var isAdded: Bool
    }

    /// A class whose primary key differs.
    public struct PrimaryKeyChange: Equatable, Sendable {
        /// The class name.
        public var className: String
        /// The old primary key, if any.
        public var old: String?
        /// The new primary key, if any.
        public var new: String?
    }

    /// Classes only the new schema has.
    public var addedClasses: [String] = []
    /// Classes only the old schema has.
    public var removedClasses: [String] = []
    /// Classes in both whose embedded flag differs.
    public var embeddingChanges: [String] = []
    /// Properties only the new schema has (in classes both have).
    public var addedProperties: [PropertyReference] = []
    /// Properties only the old schema has (in classes both have).
    public var removedProperties: [PropertyReference] = []
    /// Properties in both whose type, collection or optionality differs.
    public var changedProperties: [PropertyChange] = []
    /// Indexes added or removed on properties in both.
    public var indexChanges: [IndexChange] = []
    /// Classes in both whose primary key differs.
    public var primaryKeyChanges: [PrimaryKeyChange] = []

    /// True when nothing differs (declared order aside).
    public var isEmpty: Bool { self == SchemaChanges() }

    /// True when nothing differs but backlinks properties, which are computed, never stored.
    public var isEmptyBesidesBacklinks: Bool {
        var rest = self
        rest.addedProperties.removeAll { $0.isBacklinks }
        rest.removedProperties.removeAll { $0.isBacklinks }
        rest.changedProperties.removeAll { $0.old.isBacklinks && $0.new.isBacklinks }
        return rest.isEmpty
    }

    /// True when the change needs no migration: only added classes, added properties and added
    /// indexes, plus changes to backlinks (computed, never stored). A removed class or property,
    /// a changed property, a removed index, a primary key or embedding change is not additive.
    public var isAdditiveOnly: Bool {
        removedClasses.isEmpty && embeddingChanges.isEmpty && primaryKeyChanges.isEmpty
            && removedProperties.allSatisfy { $0.isBacklinks }
            && changedProperties.allSatisfy { $0.old.isBacklinks && $0.new.isBacklinks }
            && indexChanges.allSatisfy(\.isAdded)
    }
}

extension Schema {
    /// What changed from `old` to this schema. Classes and properties are matched by name; keys
    /// and declared order are ignored.
    /// - Complexity: O(classes + properties).
    public func changes(from old: Schema) -> SchemaChanges {
        var changes = SchemaChanges()
        for cls in classes where old[cls.className] == nil {
            changes.addedClasses.append(cls.className)
        }
        for cls in old.classes where self[cls.className] == nil {
            changes.removedClasses.append(cls.className)
        }
        for new in classes {
            guard let prev = old[new.className] else { continue }
            let c = new.className
            if new.isEmbedded != prev.isEmbedded { changes.embeddingChanges.append(c) }
            if new.primaryKey != prev.primaryKey {
                changes.primaryKeyChanges.append(.init(className: c, old: prev.primaryKey, new: new.primaryKey))
            }
            for p in new.properties {
                guard let q = prev[property: p.name] else {
                    changes.addedProperties.append(.init(c, p))
                    continue
                }
                if !p.hasSameShape(as: q) {
                    changes.changedProperties.append(.init(className: c, old: q, new: p))
                }
                // A primary key's index comes and goes with the key, reported there.
                if p.isIndexed != q.isIndexed && !p.isPrimaryKey && !q.isPrimaryKey {
                    changes.indexChanges.append(.init(className: c, propertyName: p.name, kind: .regular, isAdded: p.isIndexed))
                }
                if p.isFullText != q.isFullText {
                    changes.indexChanges.append(.init(className: c, propertyName: p.name, kind: .fullText, isAdded: p.isFullText))
                }
            }
            for q in prev.properties where new[property: q.name] == nil {
                changes.removedProperties.append(.init(c, q))
            }
        }
        return changes
    }
}

extension SchemaChanges: CustomStringConvertible {
    /// The changes in words, for messages: "classes removed: Dog, Address; property 'Box.any'
    /// changed from mixed to string".
    public var description: String {
        var parts: [String] = []
        func names(_ what: String, _ list: [String]) {
            if !list.isEmpty { parts.append("\(what): \(list.joined(separator: ", "))") }
        }
        names("classes added", addedClasses)
        names("classes removed", removedClasses)
        names("embedded flag changed", embeddingChanges)
        names("properties added", addedProperties.map { "\($0.className).\($0.propertyName)" })
        names("properties removed", removedProperties.map { "\($0.className).\($0.propertyName)" })
        for c in changedProperties {
            parts.append("property '\(c.className).\(c.new.name)' changed from \(c.old.typeNotation) to \(c.new.typeNotation)")
        }
        for c in indexChanges {
            let kind = c.kind == .fullText ? "full-text index" : "index"
            parts.append("\(kind) \(c.isAdded ? "added to" : "removed from") '\(c.className).\(c.propertyName)'")
        }
        for c in primaryKeyChanges {
            parts.append("primary key of '\(c.className)' changed from \(c.old.map { "'\($0)'" } ?? "none") to \(c.new.map { "'\($0)'" } ?? "none")")
        }
        return parts.isEmpty ? "no changes" : parts.joined(separator: "; ")
    }
}
