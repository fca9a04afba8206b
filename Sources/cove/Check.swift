// `cove check FILE`: runs verify() over a file and prints what it found.
import ArgumentParser
import Cove

struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a Cove file: page checksums, tree order and counts, and free space.")

    @Argument(help: "The Cove file to check.")
    var file: String

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            print(try realm.verify())
            print("\(file): ok")
        }
    }
}

/// `cove info FILE`: the version a file is at and how many versions are pinned.
struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the version of a Cove file.")

    @Argument(help: "The Cove file.")
    var file: String

    func run() throws {
        try withReadOnlyRealm(file) { realm in
            print("file: \(file)")
            print("schema version: \(try Realm.schemaVersion(at: file))")
            print("version: \(try realm.version)")
            print("active versions: \(try realm.activeVersionCount())")
        }
    }
}
