// swift-tools-version: 6.1
// Notification latency and cost: a package of its own so that the benchmark compiles Cove with
// release optimisations; Sources/Cove, Sources/CoveCore and Sources/CoveStorage are symlinks to
// the engine's sources.
import PackageDescription

// The storage module optimised across modules as libcove.so builds it (CMakeLists.txt). Not the
// engine: with its bodies offered to this program, the Swift 6.3 compiler crashes on the
// program's top-level code (an LLVM "swifterror" verifier failure). Both without dynamic
// exclusivity checks, as libcove.so.
let unchecked = "-enforce-exclusivity=unchecked"
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization", unchecked])]

let package = Package(
    name: "CoveNotificationsBench",
    targets: [
        .target(name: "CoveStorage", dependencies: ["CCoveCPU"], swiftSettings: crossModule),
        .systemLibrary(name: "CCoveCPU", path: "Sources/CCoveCPU"),
        .target(name: "CoveCore", dependencies: ["CoveStorage"], swiftSettings: [.unsafeFlags([unchecked])]),
        .target(name: "Cove", dependencies: ["CoveCore", "CoveStorage"], swiftSettings: [.unsafeFlags([unchecked])]),
        .executableTarget(name: "notifications-bench", dependencies: ["Cove"]),
    ],
    swiftLanguageModes: [.v6]
)
