// The `cove` command-line tool, run as a user runs it: exit status and output of `demo`,
// `check` and `info`, on good files, a file that is not a Cove file, and a missing one.
import XCTest
import Cove
#if canImport(Glibc)
import Glibc
#endif

final class CLITests: CoveTestCase {
    /// The `cove` executable built beside this test bundle.
    private static let tool: String = {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let exe = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        var dir = exe
        // The bundle is <build>/debug/CovePackageTests.xctest: its folder holds the products.
        while let slash = dir.lastIndex(of: "/"), !dir.hasSuffix("/debug"), !dir.hasSuffix("/release") {
            dir = String(dir[..<slash])
        }
        return dir + "/cove"
    }()

    override func setUpWithError() throws {
        try super.setUpWithError()
        // `swift build --build-tests` builds the tool beside the tests; its absence is a failure.
        _ = try XCTUnwrap(access(Self.tool, X_OK) == 0 ? Self.tool : nil, "no cove tool at \(Self.tool)")
    }

    func testCheckGoodFile() throws {
        let path = "\(folder)/good.cove"
        let realm = try Realm(configuration: .init(path: path))
        try realm.write {}
        realm.close()
        let (status, output) = run(["check", path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("ok"), output)
    }

    func testCheckRefusesANonCoveFile() {
        let path = "\(folder)/text.txt"
        XCTAssertTrue(FileHelper.write(path, String(repeating: "hello\n", count: 2000)))
        let (status, output) = run(["check", path])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("COVE_ERR_CORRUPT"), output)
        XCTAssertTrue(output.contains("not a Cove file"), output)
    }

    func testCheckMissingFile() {
        let (status, output) = run(["check", "\(folder)/missing.cove"])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("missing.cove"), output)
    }

    func testInfo() throws {
        let path = "\(folder)/info.cove"
        let realm = try Realm(configuration: .init(path: path))
        try realm.write {}
        let version = try realm.version
        realm.close()
        let (status, output) = run(["info", path])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("version: \(version)"), output)
    }

    func testDemo() {
        let (status, output) = run(["demo", "--path", "\(folder)/demo.cove"])
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains("MVCC"), output)
        XCTAssertTrue(output.contains("verify()"), output)
    }

    func testUnknownCommandFails() {
        let (status, _) = run(["no-such-command"])
        XCTAssertNotEqual(status, 0)
    }

    /// Runs the tool with stdout and stderr captured together.
    private func run(_ arguments: [String]) -> (Int32, String) {
        let out = "\(folder)/out.txt"
        let quoted = ([Self.tool] + arguments).map { "'\($0)'" }.joined(separator: " ")
        let status = system("\(quoted) > '\(out)' 2>&1")
        let code = (status >> 8) & 0xff
        return (code, FileHelper.read(out) ?? "")
    }
}
