// What the Cove tests share: a fresh folder per test, the check that a call fails with a given
// code and message, the names of the objects a query selects, and plain file access without
// Foundation.
import XCTest
import Cove
#if canImport(Glibc)
import Glibc
#endif

/// A test case with its own empty folder, removed afterwards.
class CoveTestCase: XCTestCase {
    var folder = ""

    override func setUpWithError() throws {
        folder = try makeTemporaryFolder("cove-tests")
    }

    override func tearDownWithError() throws {
        if !folder.isEmpty { _ = system("rm -rf '\(folder)'") }
    }

    /// Checks that `body` throws a CoveError with `code` whose message contains `text`.
    func assertThrows(_ code: CoveError.Code, containing text: String,
                      file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("expected \(code)", file: file, line: line)
        } catch let error as CoveError {
            XCTAssertEqual(error.code, code, error.message, file: file, line: line)
            XCTAssertTrue(error.message.contains(text), "message: \(error.message)", file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    /// The `name` of each object of `className` that `query` selects, in order; a failure
    /// (and no names) when the query fails.
    func names(in realm: Realm, _ className: String, _ query: String, _ args: [QueryArgument] = [],
               file: StaticString = #filePath, line: UInt = #line) -> [String] {
        do {
            return try realm.objects(className).filter(query, arguments: args).elements().map { object -> String in
                guard case .string(let s) = try object["name"] else { return "?" }
                return s
            }
        } catch {
            XCTFail("\(query): \(error)", file: file, line: line)
            return []
        }
    }
}

/// Plain file access for the tests, without Foundation.
enum FileHelper {
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    static func write(_ path: String, _ text: String) -> Bool {
        guard let f = fopen(path, "w") else { return false }
        defer { fclose(f) }
        return fputs(text, f) >= 0
    }

    static func read(_ path: String) -> String? {
        guard let f = fopen(path, "r") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A new empty folder under $TMPDIR (or /tmp) for one test.
func makeTemporaryFolder(_ prefix: String) throws -> String {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(base)/\(prefix)-XXXXXX".utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer -> String? in
        guard let p = mkdtemp(buffer.baseAddress!) else { return nil }
        return String(cString: p)
    }
    return try XCTUnwrap(made, "mkdtemp failed under \(base)")
}
