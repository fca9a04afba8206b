// swift-tools-version: 6.1
// Cove: an embedded object database with live queries. This manifest serves Swift users and the
// Swift tests; CMakeLists.txt builds the distributed libcove.so from the same sources.
import PackageDescription

let package = Package(
    name: "Cove",
    products: [
        .library(name: "Cove", targets: ["Cove"]),
        .executable(name: "cove", targets: ["cove"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Pages, meta slots, copy-on-write B+trees, free space, lock file, versions, verify.
        .target(name: "CoveStorage", dependencies: ["CCoveCPU", "CCoveCrypto"]),
        // A header giving Swift the cache prefetch and CRC32C instructions, for the storage.
        .systemLibrary(name: "CCoveCPU", path: "Sources/CCoveCPU"),
        // AES-256-GCM, HMAC and random bytes from OpenSSL's libcrypto (Debian's libssl-dev),
        // for encrypted files.
        .systemLibrary(name: "CCoveCrypto", path: "Sources/CCoveCrypto", providers: [.apt(["libssl-dev"])]),
        // The engine's core: values, JSON, schemas, the object store, queries. Its public types
        // (Value, Schema, CoveError, ...) reach users through Cove, which re-exports it; the
        // rest is `package`, for Cove alone.
        .target(name: "CoveCore", dependencies: ["CoveStorage", "CoveSyncCore"]),
        // The Swift API: realms, dynamic objects, results, notifications, declared models.
        .target(name: "Cove", dependencies: ["CoveCore", "CoveStorage", "CoveSyncCore", "CCoveCurl"]),
        // HTTP for sync sessions through libcurl (Debian's libcurl4-openssl-dev).
        .systemLibrary(name: "CCoveCurl", path: "Sources/CCoveCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // include/cove.h as a Clang module, so the C ABI is checked against the header.
        .systemLibrary(name: "CCove", path: "include"),
        // The C ABI: @c @implementation over include/cove.h.
        .target(name: "CoveC", dependencies: ["Cove", "CCove"], exclude: ["cove.exports"]),
        // libedit's readline interface (Debian's libedit-dev), for `cove shell` alone.
        .systemLibrary(name: "CLibEdit", path: "Sources/CLibEdit", providers: [.apt(["libedit-dev"])]),
        // The command-line tool.
        .executableTarget(name: "cove", dependencies: [
            "Cove",
            "CLibEdit",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The file parser's fuzz target: a libFuzzer entry point under -DCOVE_LIBFUZZER and
        // -sanitize=fuzzer, a corpus replayer otherwise (the tests run it over Tests/Corpus).
        .executableTarget(name: "cove-fuzz-file", dependencies: ["CoveStorage", "Cove"]),
        // What the storage's tests run against besides files: a page store in memory and a
        // file that fails on purpose and records what a power loss could leave.
        .target(name: "CoveStorageTesting", dependencies: ["CoveStorage"]),
        .testTarget(name: "CoveStorageTests", dependencies: ["CoveStorage", "CoveStorageTesting"]),
        .testTarget(name: "CoveTests", dependencies: ["Cove", "CoveCore", "CoveStorage"]),
        // Programs written as realm-swift's reference pages write them, against `import Cove`
        // alone: the pages' examples, realm-swift-style consumers, and declaration checks.
        .testTarget(name: "RealmSwiftStyleTests", dependencies: ["Cove"]),
        // Sync's shared core: clocks, the change model and its JSON-lines encoding, the merge
        // rules, and the subscription query subset with its SQL. Linked by the sync server as
        // well as by libcove, so it depends on the standard library alone: never on the storage
        // engine or libcrypto.
        .target(name: "CoveSyncCore"),
        .testTarget(name: "CoveSyncCoreTests", dependencies: ["CoveSyncCore"]),
    ],
    swiftLanguageModes: [.v6]
)
