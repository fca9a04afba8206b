// `cove demo`: a short tour of what Cove does today, on a temporary file. It grows with the
// product: storage first, then objects, queries and live results.
import ArgumentParser
import Cove
#if canImport(Glibc)
import Glibc
#endif

struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show Cove at work on a temporary file.")

    @Option(help: "Where to put the demo file (default: a new temporary folder).")
    var path: String?

    func run() throws {
        do {
            try tour()
        } catch let error as CoveError {
            throw exitWith(error)
        }
    }

    private func tour() throws {
        let folder = path == nil ? makeTemporaryFolder() : nil
        let file = path ?? folder! + "/demo.cove"
        print("Cove \(CoveVersion.string) demo: \(file)\n")
        // A temporary demo file goes away afterwards; one the user named stays.
        defer {
            if let folder {
                unlink(file)
                unlink(file + ".lock")
                rmdir(folder)
            }
        }

        let writer = try Realm(configuration: .init(path: file))
        let reader = try Realm(configuration: .init(path: file))
        defer {
            writer.close()
            reader.close()
        }
        print("1. Two handles open the same file; both see version \(try writer.version).")

        let before = try reader.version
        let frozen = try reader.freeze()
        for _ in 0..<3 {
            try writer.write {}
        }
        print("2. The writer commits three durable transactions: it is at version \(try writer.version).")
        print("   The reader still sees its snapshot, version \(try reader.version) (MVCC isolation).")

        let advanced = try reader.refresh()
        print("3. reader.refresh() advanced: \(advanced); it now sees version \(try reader.version).")
        print("   A frozen snapshot taken earlier stays at version \(try frozen.version) (was \(before)).")
        print("   Versions pinned in the file now: \(try writer.activeVersionCount()).")
        frozen.close()
        print("   After the frozen snapshot closes: \(try writer.activeVersionCount()).")

        print("4. verify() checks every page's checksum and that live and free pages partition the file:")
        for line in try writer.verify().split(separator: "\n") {
            print("   \(line)")
        }
        print("\nObjects, queries and live results build on this storage engine.")
    }

    private func makeTemporaryFolder() -> String {
        let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(base)/cove-demo-XXXXXX".utf8CString)
        return template.withUnsafeMutableBufferPointer { buffer in
            guard let start = buffer.baseAddress, let p = mkdtemp(start) else { return "." }
            return String(cString: p)
        }
    }
}
