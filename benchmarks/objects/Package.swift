// swift-tools-version: 6.1
// Cove's object layer side by side with SQLite's C API on the same objects. A package of its own
// so that the root package gains no dependency on SQLite; Sources/Cove, Sources/CoveCore and
// Sources/CoveStorage are symlinks to the engine's sources, compiled here with release
// optimisations.
import PackageDescription

// As libcove.so is built (CMakeLists.txt): the engine's generic code specialised across modules,
// without dynamic exclusivity checks.
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", "-enforce-exclusivity=unchecked"])]

let package = Package(
    name: "CoveObjectsBench",
    targets: [
        .target(name: "CoveStorage", dependencies: ["CCoveCPU"], swiftSettings: crossModule),
        .systemLibrary(name: "CCoveCPU", path: "Sources/CCoveCPU"),
        .target(name: "CoveCore", dependencies: ["CoveStorage"], swiftSettings: crossModule),
        .target(name: "Cove", dependencies: ["CoveCore", "CoveStorage"], swiftSettings: crossModule),
        // Debian's libsqlite3-dev as a Clang module.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .executableTarget(name: "objects-bench", dependencies: ["Cove", "CSQLite"]),
    ],
    swiftLanguageModes: [.v6]
)
