// swift-tools-version: 6.1
// Cove's storage engine side by side with LMDB and SQLite. A package of its own so that the
// root package gains no dependency on either library; Sources/CoveStorage is a symlink to the
// engine's sources, compiled here with release optimisations.
import PackageDescription

// As libcove.so is built (CMakeLists.txt): the engine's generic code specialised across modules,
// without dynamic exclusivity checks.
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"])]

let package = Package(
    name: "CoveStorageBench",
    targets: [
        .target(name: "CoveStorage", dependencies: ["CCoveCPU"], swiftSettings: crossModule),
        .systemLibrary(name: "CCoveCPU", path: "Sources/CCoveCPU"),
        // Debian's liblmdb-dev and libsqlite3-dev, as Clang modules.
        .systemLibrary(name: "CLMDB", path: "Sources/CLMDB"),
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .executableTarget(name: "storage-bench", dependencies: ["CoveStorage", "CLMDB", "CSQLite"]),
    ],
    swiftLanguageModes: [.v6]
)
