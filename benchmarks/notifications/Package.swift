// swift-tools-version: 6.1
// Notification latency and cost: a package of its own so that the benchmark compiles Cove with
// release optimisations; Sources/Cove and Sources/CoveStorage are symlinks to the engine's sources.
import PackageDescription

// As libcove.so is built (CMakeLists.txt): the engine's generic code specialised across modules.
let crossModule: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"])]

let package = Package(
    name: "CoveNotificationsBench",
    targets: [
        .target(name: "CoveStorage", swiftSettings: crossModule),
        .target(name: "Cove", dependencies: ["CoveStorage"], swiftSettings: crossModule),
        .executableTarget(name: "notifications-bench", dependencies: ["Cove"]),
    ],
    swiftLanguageModes: [.v6]
)
