// cove_config_set_migration and cove_migration_*: a C callback as the engine's migration block.
// cove_open runs the engine's open with a block that calls the C function with a
// cove_migration_t valid for that call only; the realm handle the callback gets for the new realm
// is the one cove_open returns.
import CCove
import Cove

/// The C migration callback a configuration holds (its user data freed when the last reference
/// goes: the configuration's, or that of an open in progress).
typealias MigrationCallback = CCallback<cove_migration_fn>

/// One cove_open's migration: the configuration's callback, and the handle made for the realm
/// being migrated, which cove_open then returns.
///
/// `@unchecked Sendable` because the engine asks for a `@Sendable` block but calls it only
/// synchronously inside `Realm(configuration:)`, which `openRealm` runs on cove_open's caller's
/// thread: that one thread is the only one to touch this object, before, during and after the
/// block. The opened realm keeps the block (in its configuration) and so this object, but
/// `finish()` has emptied it by then, and a later call finds no callback and fails.
final class MigrationRun: @unchecked Sendable {
    private var callback: MigrationCallback?
    private(set) var newRealmHandle: RealmHandle?

    init(_ callback: MigrationCallback) {
        self.callback = callback
    }

    /// The engine's migration block: calls the C function with a migration handle valid for the
    /// call only. Throwing `.callback` fails the open and leaves the file as it was.
    func migrate(_ migration: Migration, _ oldSchemaVersion: UInt64) throws(CoveError) {
        guard let callback else {
            throw CoveError(.callback, "the migration callback is no longer available (its cove_open returned)")
        }
        let newRealm = RealmHandle(migration.newRealm)
        newRealmHandle = newRealm
        let handle = MigrationHandle(.init(migration: migration, oldSchemaVersion: oldSchemaVersion,
                                           oldRealm: RealmHandle(migration.oldRealm, ownsRealm: false),
                                           newRealm: newRealm))
        let succeeded = callback.function(callback.userdata, handle.borrowedPointer())
        handle.end()
        if !succeeded {
            throw CoveError(.callback, "the migration callback returned false")
        }
    }

    /// Drops the callback and the realm handle once the open returned.
    func finish() {
        callback = nil
        newRealmHandle = nil
    }
}

/// Opens the realm a configuration handle describes, running its C migration callback if the
/// file needs it. The realm's handle is the one the callback saw as the new realm, if it ran.
func openRealm(_ c: ConfigHandle) throws(CFailure) -> RealmHandle {
    var configuration = c.configuration
    if let compact = c.shouldCompact {
        configuration.shouldCompactOnLaunch = { total, used in compact.function(compact.userdata, total, used) }
    }
    guard let callback = c.migration else {
        let realm = try call { () throws(CoveError) in try Realm(configuration: configuration) }
        return RealmHandle(realm)
    }
    let run = MigrationRun(callback)
    defer { run.finish() }
    configuration.migrationBlock = { migration, oldSchemaVersion in try run.migrate(migration, oldSchemaVersion) }
    let realm = try call { () throws(CoveError) in try Realm(configuration: configuration) }
    if let h = run.newRealmHandle, h.realm === realm { return h }
    return RealmHandle(realm)
}

/// Refuses to end the write of, or close, a realm a migration callback is working on: cove_open
/// commits that write when the callback returns (or cancels it), and closes the old realm.
func refuseDuringMigration(_ h: RealmHandle, in function: StaticString) throws(CFailure) {
    if h.isMigrating {
        throw failure(Int32(COVE_ERR_IN_WRITE),
            "\(function): the realm belongs to the migration in progress; cove_open commits its write and closes the old realm when the migration callback returns")
    }
}

/// The scope of a migration handle that is still valid.
private func migrationScope(_ p: OpaquePointer?, in function: StaticString) throws(CFailure) -> MigrationHandle.Scope {
    let m = try handle(p, MigrationHandle.self, "migration", in: function)
    guard let scope = m.scope else {
        throw failure(Int32(COVE_ERR_INVALIDATED),
            "\(function): the migration is over: a cove_migration_t is valid only during the migration callback")
    }
    return scope
}

@c @implementation
public func cove_config_set_migration(_ config: OpaquePointer?, _ migration: cove_migration_fn?,
                                      _ userdata: UnsafeMutableRawPointer?, _ freeUserdata: cove_free_fn?) -> cove_status_t {
    entry { () throws(CFailure) in
        let c = try handle(config, ConfigHandle.self, "config", in: "cove_config_set_migration")
        if let migration {
            c.migration = MigrationCallback(migration, userdata, freeUserdata)
        } else {
            c.migration = nil
            freeUserdata?(userdata)
        }
    }
}

@c @implementation
public func cove_migration_old_version(_ migration: OpaquePointer?, _ out: UnsafeMutablePointer<UInt64>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_migration_old_version")
        out.pointee = try migrationScope(migration, in: "cove_migration_old_version").oldSchemaVersion
    }
}

@c @implementation
public func cove_migration_old_realm(_ migration: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_migration_old_realm")
        out.pointee = try migrationScope(migration, in: "cove_migration_old_realm").oldRealm.retainedPointer()
    }
}

@c @implementation
public func cove_migration_new_realm(_ migration: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let out = try required(out, "out", in: "cove_migration_new_realm")
        out.pointee = try migrationScope(migration, in: "cove_migration_new_realm").newRealm.retainedPointer()
    }
}

@c @implementation
public func cove_migration_rename_property(_ migration: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                           _ oldName: UnsafePointer<CChar>?, _ newName: UnsafePointer<CChar>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let scope = try migrationScope(migration, in: "cove_migration_rename_property")
        let cls = try string(className, "class_name", in: "cove_migration_rename_property")
        let from = try string(oldName, "old_name", in: "cove_migration_rename_property")
        let to = try string(newName, "new_name", in: "cove_migration_rename_property")
        try call { () throws(CoveError) in try scope.migration.renameProperty(onType: cls, from: from, to: to) }
    }
}

@c @implementation
public func cove_migration_delete_data(_ migration: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                       _ outDeleted: UnsafeMutablePointer<Bool>?) -> cove_status_t {
    entry { () throws(CFailure) in
        let scope = try migrationScope(migration, in: "cove_migration_delete_data")
        let cls = try string(className, "class_name", in: "cove_migration_delete_data")
        let deleted = try call { () throws(CoveError) in try scope.migration.deleteData(forType: cls) }
        outDeleted?.pointee = deleted
    }
}

/// Thrown through the engine's enumeration to stop it when the C callback returns false.
private struct EnumerationStopped: Error {
    let index: Int
}

@c @implementation
public func cove_migration_enumerate(_ migration: OpaquePointer?, _ className: UnsafePointer<CChar>?,
                                     _ callback: cove_migration_object_fn?, _ userdata: UnsafeMutableRawPointer?) -> cove_status_t {
    entry { () throws(CFailure) in
        let scope = try migrationScope(migration, in: "cove_migration_enumerate")
        let name = try string(className, "class_name", in: "cove_migration_enumerate")
        guard let callback else { throw invalidArgument("cove_migration_enumerate", "callback is NULL") }
        var index = 0
        do {
            try scope.migration.enumerateObjects(ofType: name) { old, new in
                // Borrowed by the callback: these references keep the handles alive during the
                // call, and a handle the callback retained outlives them.
                let oldObject = ObjectHandle(scope.oldRealm, old)
                let newObject = new.map { ObjectHandle(scope.newRealm, $0) }
                let goOn = withExtendedLifetime((oldObject, newObject)) {
                    callback(userdata, oldObject.borrowedPointer(), newObject?.borrowedPointer())
                }
                if !goOn { throw EnumerationStopped(index: index) }
                index += 1
            }
        } catch let stop as EnumerationStopped {
            throw failure(Int32(COVE_ERR_CALLBACK),
                "cove_migration_enumerate: the callback returned false at object \(stop.index) of class '\(name)'")
        } catch let error as CoveError {
            throw failure(error.code.rawValue, error.message)
        } catch {
            throw failure(Int32(COVE_ERR_INTERNAL), "cove_migration_enumerate: \(error)")
        }
    }
}
