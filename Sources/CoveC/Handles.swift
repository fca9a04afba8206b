// Handles: every pointer the C API hands out is a retained Swift object whose class tells its
// kind, so a handle of the wrong kind is refused with a status instead of being misread.
import CCove
import Cove

/// The base of every handle; its reference count is the handle's.
class Handle {
    /// The name C callers know the kind by, for messages.
    class var kindName: String { "handle" }

    /// A new +1 pointer for C.
    final func retainedPointer() -> OpaquePointer {
        OpaquePointer(Unmanaged.passRetained(self).toOpaque())
    }
}

/// A `cove_config_t`.
final class ConfigHandle: Handle {
    override class var kindName: String { "cove_config_t" }
    var configuration: Realm.Configuration

    init(_ configuration: Realm.Configuration) {
        self.configuration = configuration
    }
}

/// A `cove_realm_t`: a live or frozen realm, and the buffers of the strings and binaries it
/// handed out, which stay valid until its next write, refresh, delivery or close.
final class RealmHandle: Handle {
    override class var kindName: String { "cove_realm_t" }
    let realm: Realm
    private var scratch: [UnsafeMutableRawPointer] = []

    init(_ realm: Realm) {
        self.realm = realm
    }

    deinit {
        realm.close()
        clearScratch()
    }

    /// A copy of `bytes` that lives until `clearScratch()`; (nil, 0) for no bytes.
    func keep(_ bytes: [UInt8]) -> (UnsafeMutableRawPointer?, Int) {
        if bytes.isEmpty { return (nil, 0) }
        let p = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 1)
        bytes.withUnsafeBytes { UnsafeMutableRawBufferPointer(start: p, count: bytes.count).copyMemory(from: $0) }
        scratch.append(p)
        return (p, bytes.count)
    }

    /// Frees the strings and binaries handed out so far (the header's lifetime rule).
    func clearScratch() {
        for p in scratch { p.deallocate() }
        scratch.removeAll()
    }
}

/// A handle made from a realm handle, which it keeps alive: its strings and binaries go into that
/// realm handle's scratch, and it is frozen when that realm is.
protocol RealmChild: Handle {
    var realmHandle: RealmHandle { get }
}

/// A `cove_object_t`: an object of a realm (its handle keeps the realm handle alive).
final class ObjectHandle: Handle, RealmChild {
    override class var kindName: String { "cove_object_t" }
    let realmHandle: RealmHandle
    let object: DynamicObject

    init(_ realmHandle: RealmHandle, _ object: DynamicObject) {
        self.realmHandle = realmHandle
        self.object = object
    }
}

/// A `cove_list_t`: a list property of one object.
final class ListHandle: Handle, RealmChild {
    override class var kindName: String { "cove_list_t" }
    let realmHandle: RealmHandle
    let list: DynamicList

    init(_ realmHandle: RealmHandle, _ list: DynamicList) {
        self.realmHandle = realmHandle
        self.list = list
    }
}

/// A `cove_set_t`: a set property of one object.
final class SetHandle: Handle, RealmChild {
    override class var kindName: String { "cove_set_t" }
    let realmHandle: RealmHandle
    let set: DynamicSet

    init(_ realmHandle: RealmHandle, _ set: DynamicSet) {
        self.realmHandle = realmHandle
        self.set = set
    }
}

/// A `cove_map_t`: a map property of one object.
final class MapHandle: Handle, RealmChild {
    override class var kindName: String { "cove_map_t" }
    let realmHandle: RealmHandle
    let map: DynamicMap

    init(_ realmHandle: RealmHandle, _ map: DynamicMap) {
        self.realmHandle = realmHandle
        self.map = map
    }
}

/// The handle behind `pointer`, which must be of kind `H`. A made-up pointer is undefined
/// behaviour, as the header says; NULL and other kinds are refused.
func handle<H: Handle>(_ pointer: UnsafeRawPointer?, _ kind: H.Type, _ name: StaticString,
                       in function: StaticString) throws(CFailure) -> H {
    guard let pointer else { throw invalidArgument(function, "\(name) is NULL") }
    let object = Unmanaged<Handle>.fromOpaque(pointer).takeUnretainedValue()
    guard let typed = object as? H else {
        throw invalidArgument(function, "\(name) is a \(type(of: object).kindName), expected a \(H.kindName)")
    }
    return typed
}

func handle<H: Handle>(_ pointer: OpaquePointer?, _ kind: H.Type, _ name: StaticString,
                       in function: StaticString) throws(CFailure) -> H {
    try handle(UnsafeRawPointer(pointer), kind, name, in: function)
}
