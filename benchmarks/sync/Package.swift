// swift-tools-version: 6.1
// The sync benchmark's client: many clients of one cove-sync-server (run.sh starts it, release
// build, with a PostgreSQL of its own) over loopback HTTP. A package of its own: it needs an HTTP
// client able to hold a thousand connections (AsyncHTTPClient), which nothing else needs.
import PackageDescription

let package = Package(
    name: "sync-bench",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        // A link to the repository's Sources/CoveSyncCore: the changesets the clients upload.
        .target(name: "CoveSyncCore"),
        .executableTarget(name: "sync-bench", dependencies: [
            "CoveSyncCore",
            .product(name: "AsyncHTTPClient", package: "async-http-client"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOHTTP1", package: "swift-nio"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
