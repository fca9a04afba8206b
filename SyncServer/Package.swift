// swift-tools-version: 6.1
// cove-sync-server: the server Cove files sync with, on Hummingbird 2 (HTTP) and PostgresNIO, its
// data in PostgreSQL. A package of its own, so that libcove never depends on swift-nio.
import PackageDescription

let package = Package(
    name: "cove-sync-server",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "cove-sync-server", targets: ["cove-sync-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0", traits: []),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    ],
    targets: [
        // The sync core the client inside libcove links too: the change model, its encoding and
        // the merge rules (a link to the repository's Sources/CoveSyncCore).
        .target(name: "CoveSyncCore"),
        // Configuration, the PostgreSQL schema and queries, bearer tokens, metrics and the HTTP
        // routes: everything but the command line, so that the tests run the server in process.
        .target(name: "CoveSyncServer", dependencies: [
            "CoveSyncCore",
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "JWTKit", package: "jwt-kit"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "cove-sync-server", dependencies: [
            "CoveSyncServer",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .testTarget(name: "CoveSyncServerTests", dependencies: ["CoveSyncServer", "CoveSyncCore"]),
    ],
    swiftLanguageModes: [.v6]
)
