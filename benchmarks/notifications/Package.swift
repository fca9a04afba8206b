// swift-tools-version: 6.1
// Notification latency and cost: a package of its own so that the benchmark compiles Cove with
// release optimisations; Sources/Cove and Sources/CoveStorage are symlinks to the engine's sources.
import PackageDescription

let package = Package(
    name: "CoveNotificationsBench",
    targets: [
        .target(name: "CoveStorage"),
        .target(name: "Cove", dependencies: ["CoveStorage"]),
        .executableTarget(name: "notifications-bench", dependencies: ["Cove"]),
    ],
    swiftLanguageModes: [.v6]
)
