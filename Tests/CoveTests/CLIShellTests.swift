// The `cove` tool's shell and output formats, run as a user runs them: the shell through a
// pseudo-terminal with scripted keystrokes (line editing, history) and through a pipe (a
// script on standard input); the other commands through pipes. Also: a whole file holding every
// type dumps, imports into a new file and dumps the same; CSV loads; a write waits for a lock
// another process holds and names it; bad input exits non-zero with a message. Every wait on a
// child process is bounded.
import XCTest
import Cove
#if canImport(Glibc)
import Glibc
#endif

/// The built `cove` tool and ways to run it.
enum CLITool {
    /// The `cove` executable built beside this test bundle.
    static let path: String = {
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

    /// The text of the file at `path` once it holds `text`, or after 10 s.
    static func waitFor(_ text: String, inFile path: String) -> String {
        var content = ""
        for _ in 0..<200 where !content.contains(text) {
            usleep(50_000)
            content = FileHelper.read(path) ?? ""
        }
        return content
    }

    /// Runs the tool with `input` on standard input, for at most `seconds`; returns the exit
    /// status (124 when it timed out), standard output and standard error.
    static func run(_ arguments: [String], input: String = "", in folder: String,
                    seconds: Int = 60, environment: [String: String] = [:]) -> (status: Int32, out: String, err: String) {
        let (inFile, outFile, errFile) = ("\(folder)/stdin.txt", "\(folder)/stdout.txt", "\(folder)/stderr.txt")
        _ = FileHelper.write(inFile, input)
        func quote(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let quoted = ([path] + arguments).map(quote).joined(separator: " ")
        let variables = environment.sorted { $0.key < $1.key }.map { "\($0.key)=\(quote($0.value)) " }.joined()
        let status = system("\(variables)timeout -s KILL \(seconds) \(quoted) < '\(inFile)' > '\(outFile)' 2> '\(errFile)'")
        return ((status >> 8) & 0xff, FileHelper.read(outFile) ?? "", FileHelper.read(errFile) ?? "")
    }
}

/// A child process on a pseudo-terminal: what it prints is read back with a deadline.
final class TerminalProcess {
    let pid: pid_t
    let master: Int32
    private(set) var output = ""

    init?(_ arguments: [String], environment: [String]) {
        // Everything the child needs is made before the fork: it only calls execve.
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var fd: Int32 = -1
        var size = winsize(ws_row: 24, ws_col: 100, ws_xpixel: 0, ws_ypixel: 0)
        let child = forkpty(&fd, nil, nil, &size)
        if child == 0 {
            execve(argv[0]!, argv, envp)
            _exit(127)
        }
        guard child > 0 else { return nil }
        pid = child
        master = fd
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        close(master)
    }

    /// Sends keys once the line editor reads the terminal in raw mode (keys sent before would
    /// be read by the terminal's own line editing: Ctrl-D would be lost).
    func send(_ keys: String) {
        for _ in 0..<200 {
            var t = termios()
            if tcgetattr(master, &t) == 0 && t.c_lflag & tcflag_t(ICANON) == 0 { break }
            usleep(10_000)
        }
        _ = keys.withCString { write(master, $0, strlen($0)) }
    }

    /// Reads until the output holds `text` `times` times or `seconds` pass; whether it did.
    @discardableResult
    func read(until text: String, times: Int = 1, seconds: Double = 20) -> Bool {
        let deadline = Double(monotonicMs()) + seconds * 1000
        while output.components(separatedBy: text).count - 1 < times {
            let left = deadline - Double(monotonicMs())
            if left <= 0 { return false }
            var p = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, Int32(min(left, 200))) >= 0 else { return false }
            if p.revents == 0 { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = Glibc.read(master, &buffer, buffer.count)
            if n <= 0 { return false }
            output += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        return true
    }

    /// The exit status once the child exits within `seconds`, else nil (and it is killed).
    func exitStatus(seconds: Double = 20) -> Int32? {
        let deadline = Double(monotonicMs()) + seconds * 1000
        var status: Int32 = 0
        while Double(monotonicMs()) < deadline {
            // Drain what it prints, so that it never blocks on a full terminal.
            _ = read(until: "\u{0}", seconds: 0.05)
            if waitpid(pid, &status, WNOHANG) == pid { return (status >> 8) & 0xff }
        }
        return nil
    }

    private func monotonicMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

final class CLIShellTests: CoveTestCase {
    override func setUpWithError() throws {
        try super.setUpWithError()
        _ = try XCTUnwrap(access(CLITool.path, X_OK) == 0 ? CLITool.path : nil, "no cove tool at \(CLITool.path)")
    }

    private func run(_ arguments: [String], input: String = "") -> (status: Int32, out: String, err: String) {
        CLITool.run(arguments, input: input, in: folder)
    }

    /// A file of people (primary key: name) and their dogs (no primary key).
    private func makePeople() throws -> String {
        let path = "\(folder)/people.cove"
        let schema = try Schema(jsonText: #"{"Person": {"primaryKey": "name", "properties": {"name": "string", "age": "int", "dog": "Dog?"}}, "#
            + #""Dog": {"properties": {"name": "string", "owners": "@links(Person.dog)"}}}"#)
        let realm = try Realm(configuration: .init(path: path, schema: schema, schemaVersion: 1))
        defer { realm.close() }
        try realm.write {
            let rex = try realm.dynamicCreate("Dog", values: [("name", .string("Rex"))])
            try realm.dynamicCreate("Person", primaryKey: .string("Ann"), values: [("age", .int(31)), ("dog", .link(rex.link))])
            try realm.dynamicCreate("Person", primaryKey: .string("Bob"), values: [("age", .int(28))])
            try realm.dynamicCreate("Person", primaryKey: .string("Cy"), values: [("age", .int(45))])
        }
        return path
    }

    // MARK: The shell on a terminal

    func testShellOnATerminalEditsLinesAndKeepsHistory() throws {
        let path = try makePeople()
        let history = "\(folder)/history"
        let environment = ["TERM=xterm", "HOME=\(folder)", "COVE_HISTORY=\(history)", "PATH=/usr/bin:/bin"]
        var shell = try XCTUnwrap(TerminalProcess([CLITool.path, "shell", path], environment: environment))
        XCTAssertTrue(shell.read(until: "cove> "), shell.output)
        XCTAssertTrue(shell.output.contains(".help"), shell.output)

        shell.send(".mode csv\r")
        XCTAssertTrue(shell.read(until: "cove> ", times: 2), shell.output)
        shell.send("Person WHERE age > 30 SORT(name ASC)\r")
        XCTAssertTrue(shell.read(until: "Cy,45,", seconds: 20), shell.output)
        XCTAssertTrue(shell.output.contains(#"Ann,31,"{""$ref"":0}""#), shell.output)
        XCTAssertTrue(shell.read(until: "cove> ", times: 3), shell.output)

        // Up arrow brings the query back; Enter runs it again.
        shell.send("\u{1B}[A\r")
        XCTAssertTrue(shell.read(until: "Cy,45,", times: 2), shell.output)
        XCTAssertTrue(shell.read(until: "cove> ", times: 4), shell.output)

        // Ctrl-A goes to the start of the line, where the class name is typed in front.
        shell.send(" WHERE name == 'Bob'\u{01}Person\r")
        XCTAssertTrue(shell.read(until: "Bob,28,"), shell.output)
        XCTAssertTrue(shell.read(until: "cove> ", times: 5), shell.output)

        // An error is a message; the shell goes on.
        shell.send("Nobody\r")
        XCTAssertTrue(shell.read(until: "no class or command 'Nobody'"), shell.output)
        XCTAssertTrue(shell.read(until: "cove> ", times: 6), shell.output)
        shell.send(".quit\r")
        XCTAssertEqual(shell.exitStatus(), 0, shell.output)
        XCTAssertTrue((FileHelper.read(history) ?? "").contains("Person"), FileHelper.read(history) ?? "no history")

        // A new shell reads the history: the up arrow finds the last line of the last one.
        shell = try XCTUnwrap(TerminalProcess([CLITool.path, "shell", path, "--format", "csv"], environment: environment))
        XCTAssertTrue(shell.read(until: "cove> "), shell.output)
        shell.send("\u{1B}[A\u{1B}[A\r")
        XCTAssertTrue(shell.read(until: "no class or command 'Nobody'"), shell.output)
        XCTAssertTrue(shell.read(until: "cove> ", times: 2), shell.output)
        // Ctrl-D at an empty prompt leaves.
        shell.send("\u{04}")
        XCTAssertEqual(shell.exitStatus(), 0, shell.output)
    }

    // MARK: The shell reading a script

    func testShellReadsAScriptFromStandardInput() throws {
        let path = try makePeople()
        let script = """
            .classes
            Person WHERE age > $0 SORT(name ASC)
            .mode json
            .columns name,dog.name
            Person SORT(name DESC) LIMIT(1)
            .columns
            create Person {"name": "Dee", "age": 52, "dog": {"$key": 0}}
            set Person {"age": 53} WHERE name == 'Dee'
            .mode line
            Person name == 'Dee'
            .args "Dee"
            delete Person WHERE name == $0
            .count Person
            .explain Person name == 'Ann'
            .timer on
            .mode markdown
            Person age < 30
            .timer off
            .info
            .check quick
            .schema Dog
            .quit
            Person
            """
        let (status, out, err) = run(["shell", path, "--arg", "30"], input: script)
        XCTAssertEqual(status, 0, err)
        XCTAssertEqual(err, "")
        XCTAssertTrue(out.contains("Person  3        name"), out)
        XCTAssertTrue(out.contains("Ann   31   {\"$ref\":0}\nCy    45"), out)
        XCTAssertTrue(out.contains(#"{"name":"Cy","dog.name":null}"#), out)
        XCTAssertTrue(out.contains("created 1 Person object\nupdated 1 Person object\n"), out)
        XCTAssertTrue(out.contains("name: Dee\n age: 53\n dog: {\"$ref\":0}"), out)
        XCTAssertTrue(out.contains("deleted 1 Person object\ncount: 3\n"), out)
        XCTAssertTrue(out.contains("primary-key"), out)
        XCTAssertTrue(out.contains("| name | age | dog |\n|---|---|---|\n| Bob | 28 |  |\ntime: real "), out)
        XCTAssertTrue(out.contains("objects.Person: 3"), out)
        XCTAssertTrue(out.contains("quick check"), out)
        XCTAssertTrue(out.contains(#""Dog": {"#), out)
        XCTAssertFalse(out.contains("cove> "), out)
    }

    func testShellScriptErrorsNameTheLineAndFailTheRun() throws {
        let path = try makePeople()
        var (status, out, err) = run(["shell", path], input: "Person age >\nPerson name == 'Ann'\n.mode nope\ncreate Person {\"name\": \"Ann\", \"age\": \"old\"}\n")
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("error: line 1: ") && err.contains("position"), err)
        XCTAssertTrue(err.contains("error: line 3: .mode takes table|csv|json|markdown|line"), err)
        XCTAssertTrue(err.contains("error: line 4: property 'age' of class 'Person' is int"), err)
        XCTAssertTrue(out.contains("Ann"), out)
        (status, out, err) = run(["shell", path, "--bail"], input: "Nope\nPerson\n")
        XCTAssertEqual(status, 1)
        XCTAssertEqual(out, "")
        XCTAssertTrue(err.contains("error: line 1: no class or command 'Nope'"), err)
        (status, _, err) = run(["shell", path, "--read-only"], input: "delete Person TRUEPREDICATE\n")
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("read"), err)
        (status, _, err) = run(["shell", "\(folder)/missing.cove"])
        XCTAssertEqual(status, 1)
        XCTAssertTrue(err.contains("missing.cove"), err)
    }

    // MARK: Formats, arguments and columns

    func testFormatsArgumentsAndColumns() throws {
        let path = try makePeople()
        var r = run(["query", path, "Person", "age > $0 SORT(age ASC)", "--arg", "29", "--format", "csv", "--columns", "name,age,dog.name"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "name,age,dog.name\nAnn,31,Rex\nCy,45,\n")
        r = run(["query", path, "Person", "name IN $0", "--arg", #"["Ann","Bob"]"#, "--format", "table", "--columns", "name"])
        XCTAssertEqual(r.out, "name\n----\nAnn \nBob \n".replacingOccurrences(of: " \n", with: "\n"))
        r = run(["query", path, "Person", "WHERE name == $0", "--arg", "Bob"])
        XCTAssertEqual(r.out, #"{"name":"Bob","age":28,"dog":null}"# + "\n")
        r = run(["query", path, "Dog", "--columns", "name,owners,$key", "--format", "csv"])
        XCTAssertEqual(r.out, "name,owners,$key\nRex,\"[\"\"Ann\"\"]\",0\n")
        r = run(["query", path, "Person", "SORT(age DESC)", "--count", "--format", "csv"])
        XCTAssertEqual(r.out, "count\n3\n")
        r = run(["dump", path, "Dog", "--format", "markdown"])
        XCTAssertEqual(r.out, "| name |\n|---|\n| Rex |\n")
        r = run(["info", path, "--format", "json"])
        XCTAssertTrue(r.out.contains(#""schema_version":1,"#) && r.out.contains(#""objects.Person":3"#), r.out)
        XCTAssertTrue(r.out.contains(#""format_version":6,"#) && r.out.contains(#""recovery":null"#), r.out)
        XCTAssertTrue(r.out.contains(#""used_bytes":"#) && r.out.contains(#""free_bytes":"#), r.out)
        r = run(["check", path, "--format", "csv"])
        XCTAssertTrue(r.out.hasPrefix("file,check,ok,report\n") && r.out.contains(",full,true,"), r.out)
        r = run(["check", path, "--quick"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("quick check") && r.out.hasSuffix("people.cove: ok\n"), r.out)
        r = run(["schema", path, "--format", "csv"])
        XCTAssertTrue(r.out.contains("Person,dog,Dog?,false,false"), r.out)

        // Writes from the command line.
        r = run(["create", path, "Person", #"{"name": "Eve", "age": 22}"#, "--format", "json"])
        XCTAssertEqual(r.out, #"{"created":1}"# + "\n", r.err)
        r = run(["set", path, "Person", #"{"dog": null, "age": 23}"#, "age < $0", "--arg", "30"])
        XCTAssertEqual(r.out, "updated 2 Person objects\n", r.err)
        r = run(["delete", path, "Person", "name BEGINSWITH 'E'"])
        XCTAssertEqual(r.out, "deleted 1 Person object\n", r.err)
        r = run(["query", path, "Person", "age == 23", "--count"])
        XCTAssertEqual(r.out, "1\n")
    }

    // MARK: Dump and import

    /// A file with every type, links by primary key and to objects without one (forward and in
    /// a cycle), embedded objects holding links, collections of each kind, and mixed values of
    /// every type (NaN, dates, links...), after a deletion so that object keys have a gap.
    private func makeEveryType() throws -> String {
        let path = "\(folder)/every.cove"
        let schema = try Schema(jsonText: """
            {"Thing": {"primaryKey": "id", "indexed": ["i"], "properties": {
                "id": "string", "b": "bool", "i": "int", "f": "float", "d": "double", "s": "string?",
                "bytes": "data?", "when": "date?", "dec": "decimal128?", "oid": "objectId?", "u": "uuid?",
                "any": "mixed", "anys": "mixed[]", "anyMap": "mixed{}", "ints": "int?[]", "tags": "string<>",
                "scores": "double{}", "dates": "date[]", "note": "Note?", "notes": "Note[]", "noteMap": "Note{}",
                "next": "Thing?", "all": "Thing<>", "byName": "Thing{}", "box": "Box?", "boxes": "Box[]"}},
             "Note": {"properties": {"text": "string", "thing": "Thing?", "other": "Note?", "bits": "Box[]"}},
             "Box": {"embedded": true, "properties": {"label": "string", "thing": "Thing?", "note": "Note?", "inner": "Box?"}},
             "Empty": {"properties": {"n": "int?"}}}
            """)
        let realm = try Realm(configuration: .init(path: path, durability: .noSync, schema: schema, schemaVersion: 3))
        defer { realm.close() }
        try realm.write {
            let gone = try realm.dynamicCreate("Note", values: [("text", .string("gone"))])
            let n1 = try realm.dynamicCreate("Note", values: [("text", .string("first ü \"quoted\"\n"))])
            let n2 = try realm.dynamicCreate("Note", values: [("text", .string("second"))])
            try realm.delete(gone)
            let when = Timestamp(seconds: 1_700_000_000, nanoseconds: 123_456_789)
            let a = try realm.dynamicCreate("Thing", primaryKey: .string("a"), values: [
                ("b", .bool(true)), ("i", .int(-42)), ("f", .float(1.5)), ("d", .double(.nan)), ("s", .string("")),
                ("bytes", .data([0, 1, 255])), ("when", .timestamp(when)), ("dec", .decimal128(try Decimal128("-12.345"))),
                ("oid", .objectId(try ObjectId("0123456789abcdef01234567"))), ("u", .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!)),
                ("any", .double(.nan))])
            let b = try realm.dynamicCreate("Thing", primaryKey: .string("b"), values: [("d", .double(-.infinity)), ("f", .float(.infinity)), ("any", .timestamp(when))])
            try realm.dynamicCreate("Thing", primaryKey: .string("c"), values: [("any", .link(n2.link)), ("d", .double(1e300))])
            try realm.dynamicCreate("Empty", values: [])
            try a.setValue(.link(b.link), forKey: "next")
            try b.setValue(.link(a.link), forKey: "next")
            try a.setValue(.link(n2.link), forKey: "note")
            try n1.setValue(.link(n2.link), forKey: "other")
            try n2.setValue(.link(n1.link), forKey: "other")
            try n2.setValue(.link(a.link), forKey: "thing")
            for v: Value in [.int(1), .float(2.5), .double(.infinity), .string("3"), .bool(false), .null, .link(a.link), .link(n1.link),
                             .decimal128(try Decimal128("1e-3")), .data([9]), .timestamp(Timestamp(seconds: -5))] {
                try a.dynamicList("anys").append(v)
            }
            try a.dynamicMap("anyMap").setValue(.double(-.nan), forKey: "nan")
            try a.dynamicMap("anyMap").setValue(.objectId(try ObjectId("aaaaaaaaaaaaaaaaaaaaaaaa")), forKey: "oid")
            for v: Value in [.int(1), .null, .int(3)] { try a.dynamicList("ints").append(v) }
            _ = try a.dynamicMutableSet("tags").insert(.string("x"))
            _ = try a.dynamicMutableSet("tags").insert(.string("y, z"))
            try a.dynamicMap("scores").setValue(.double(0.1), forKey: "k")
            try a.dynamicList("dates").append(.timestamp(when))
            try a.dynamicList("notes").append(.link(n1.link))
            try a.dynamicList("notes").append(.link(n1.link))
            try a.dynamicMap("noteMap").setValue(.link(n2.link), forKey: "two")
            try a.dynamicMap("noteMap").setValue(.null, forKey: "none")
            _ = try a.dynamicMutableSet("all").insert(.link(a.link))
            _ = try a.dynamicMutableSet("all").insert(.link(b.link))
            try a.dynamicMap("byName").setValue(.link(b.link), forKey: "b")
            let box = try a.createEmbeddedObject(forProperty: "box")
            try box.setValue(.string("outer"), forKey: "label")
            try box.setValue(.link(b.link), forKey: "thing")
            try box.setValue(.link(n1.link), forKey: "note")
            try box.createEmbeddedObject(forProperty: "inner").setValue(.string("inner"), forKey: "label")
            try a.dynamicList("boxes").appendEmbedded().setValue(.string("in a list"), forKey: "label")
            try n1.dynamicList("bits").appendEmbedded().setValue(.link(a.link), forKey: "thing")
        }
        return path
    }

    func testWholeFileDumpImportsIntoTheSameDump() throws {
        let source = try makeEveryType()
        let first = run(["dump", source])
        XCTAssertEqual(first.status, 0, first.err)
        let lines = first.out.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[0].hasPrefix(#"{"$schema":{"Thing":"#) && lines[0].hasSuffix(#""$schemaVersion":3}"#), lines[0])
        XCTAssertTrue(first.out.contains(#""d":"NaN""#), first.out)
        XCTAssertTrue(first.out.contains(#""any":{"$double":"NaN"}"#), first.out)
        XCTAssertTrue(first.out.contains(#""any":{"$date":"2023-11-14T22:13:20.123456789Z"}"#), first.out)
        XCTAssertTrue(first.out.contains(#""any":{"$link":{"class":"Note","$ref":1}}"#), first.out)
        XCTAssertTrue(first.out.contains(#"{"$float":2.5}"#) && first.out.contains(#"{"$double":"Infinity"}"#), first.out)
        XCTAssertTrue(first.out.contains(#"{"$class":"Note","$ref":0,"text":"first ü \"quoted\"\n","thing":null,"other":{"$ref":1}"#), first.out)
        XCTAssertTrue(first.out.contains(#""next":"b""#), first.out)
        XCTAssertEqual(lines.count, 1 + 3 + 2 + 1, first.out)

        let dumpFile = "\(folder)/every.jsonl"
        XCTAssertTrue(FileHelper.write(dumpFile, first.out))
        let copy = "\(folder)/copy.cove"
        let load = run(["import", copy, dumpFile, "--batch-size", "2"])
        XCTAssertEqual(load.status, 0, load.err)
        XCTAssertEqual(load.out, "imported 6 objects of 3 classes from 7 lines in 3 batches\n")
        let second = run(["dump", copy])
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertEqual(second.out, first.out)
        XCTAssertEqual(run(["check", copy]).status, 0)

        // Standard input works as the data, and loading into the file again updates by
        // primary key (objects without one are added).
        let again = run(["import", copy, "-"], input: first.out)
        XCTAssertEqual(again.status, 0, again.err)
        XCTAssertTrue(run(["info", copy]).out.contains("objects.Thing: 3\n   objects.Note: 4"), run(["info", copy]).out)
    }

    func testCSVExportLoadsBack() throws {
        let source = try makeEveryType()
        let columns = "id,b,i,f,d,s,bytes,when,dec,oid,u,ints,tags,scores,dates,next"
        let csv = run(["dump", source, "Thing", "--format", "csv", "--columns", columns])
        XCTAssertEqual(csv.status, 0, csv.err)
        XCTAssertTrue(csv.out.contains(#"a,true,-42,1.5,NaN,,AAH/,2023-11-14T22:13:20.123456789Z,-12.345,"#), csv.out)
        XCTAssertTrue(csv.out.contains(#""[""x"",""y, z""]""#), csv.out)
        XCTAssertTrue(FileHelper.write("\(folder)/things.csv", csv.out))
        let schema = run(["schema", source])
        XCTAssertTrue(FileHelper.write("\(folder)/schema.json", schema.out))
        let copy = "\(folder)/csv.cove"
        let load = run(["import", copy, "Thing", "\(folder)/things.csv", "--schema", "\(folder)/schema.json", "--schema-version", "3"])
        XCTAssertEqual(load.status, 0, load.err)
        XCTAssertEqual(load.out, "imported 3 Thing objects from 3 lines in 1 batches\n")
        XCTAssertEqual(run(["dump", copy, "Thing", "--format", "csv", "--columns", columns]).out, csv.out)

        // A short row and a bad number name their line.
        XCTAssertTrue(FileHelper.write("\(folder)/bad.csv", "id,i\nx,1\ny\n"))
        var r = run(["import", copy, "Thing", "\(folder)/bad.csv"])
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("bad.csv:3: 1 fields, the header has 2"), r.err)
        XCTAssertTrue(FileHelper.write("\(folder)/bad2.csv", "id,i\nx,one\n"))
        r = run(["import", copy, "Thing", "\(folder)/bad2.csv"])
        XCTAssertTrue(r.err.contains("bad2.csv:2: property 'i' is int: cannot read \"one\""), r.err)
    }

    func testImportRefusesBadDumpLines() throws {
        let path = try makePeople()
        let cases: [(String, String)] = [
            (#"{"$class":"Nope"}"#, "no class 'Nope'"),
            (#"{"name":"Zed"}"#, "no $class member"),
            (#"{"$class":"Dog","$ref":"x","name":"Fido"}"#, "$ref takes an integer"),
            (#"{"$class":"Person","name":"Zed","dog":{"$ref":7}}"#, "no Dog with $ref 7 was loaded"),
            (#"{"$class":"Person","name":"Zed","dog":"Rex"}"#, "Dog has no primary key"),
            ("[1]", "must be a JSON object"),
            ("{", "line 1"),
        ]
        for (line, message) in cases {
            XCTAssertTrue(FileHelper.write("\(folder)/bad.jsonl", line + "\n"))
            let r = run(["import", path, "\(folder)/bad.jsonl"])
            XCTAssertEqual(r.status, 1, line)
            XCTAssertTrue(r.err.contains(message), "\(line): \(r.err)")
        }
        XCTAssertEqual(run(["import", path]).status, 1)
        XCTAssertEqual(run(["dump", path, "--format", "csv"]).status, 1)
        XCTAssertEqual(run(["query", path, "Person", "--format", "yaml"]).status, 64)
        XCTAssertTrue(run(["query", path, "Person", "--columns", "nope"]).err.contains("no property 'nope'"))
        XCTAssertTrue(run(["query", path, "Person", "age == $0"]).err.contains("$0"))
        XCTAssertTrue(run(["query", path, "Person", "age == $0", "--arg", #"{"$date": 1}"#]).err.contains("argument $0: $date takes a string"))
        XCTAssertTrue(run(["watch", path, "Person", "--seconds", "nan"]).err.contains("--seconds must be a number"))
        XCTAssertTrue(run(["create", path, "Person", "{}", "--timeout=-1"]).err.contains("--timeout must be a number"))
        XCTAssertEqual(run(["set", path, "Person", "[1]", "TRUEPREDICATE"]).status, 1)
        XCTAssertEqual(run(["delete", path, "Person", " "]).status, 1)
    }

    // MARK: Locks and watch

    func testWriteWaitsForTheLockAndNamesTheHolder() throws {
        let path = try makePeople()
        let realm = try Realm(configuration: .init(path: path))
        defer { realm.close() }
        try realm.beginWrite()
        let r = run(["delete", path, "Person", "TRUEPREDICATE", "--timeout", "0.5"])
        try realm.cancelWrite()
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.err.contains("waiting for the write lock of '\(path)', held by pid \(getpid())"), r.err)
        XCTAssertTrue(r.err.contains("was not free within 0.5 s, held by pid \(getpid())"), r.err)
        XCTAssertEqual(run(["query", path, "Person", "--count"]).out, "3\n")
    }

    func testWatchPrintsKeysPropertiesVersionAndTime() throws {
        let path = try makePeople()
        let realm = try Realm(configuration: .init(path: path, durability: .noSync))
        defer { realm.close() }
        let out = "\(folder)/watch.txt"
        let csv = "\(folder)/watch.csv"
        XCTAssertEqual(system("timeout -s KILL 30 '\(CLITool.path)' watch '\(path)' Person 'age > 20' --changes 1 --seconds 20 > '\(out)' 2>&1 &"), 0)
        XCTAssertEqual(system("timeout -s KILL 30 '\(CLITool.path)' watch '\(path)' Person --format csv --changes 1 --seconds 20 > '\(csv)' 2>&1 &"), 0)
        XCTAssertEqual(CLITool.waitFor("time", inFile: csv), "time,version,change,key,properties\n")
        var text = CLITool.waitFor("initial", inFile: out)
        XCTAssertTrue(text.contains(#"{"initial":3,"version":"#), text)
        try realm.write {
            try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Ann"))?.setValue(.int(32), forKey: "age")
            try realm.dynamicCreate("Person", primaryKey: .string("Dee"), values: [("age", .int(60))])
            if let bob = try realm.dynamicObject(ofType: "Person", forPrimaryKey: .string("Bob")) { try realm.delete(bob) }
        }
        text = CLITool.waitFor("modified", inFile: out)
        XCTAssertTrue(text.contains(#""deleted":["Bob"],"inserted":["Dee"],"modified":[{"key":"Ann","properties":["age"]}]"#), text)
        let version = try realm.version
        XCTAssertTrue(text.contains(#""time":"20"#) && text.contains(#"{"version":\#(version),"#), text)
        let rows = CLITool.waitFor("modified", inFile: csv)
        XCTAssertTrue(rows.contains(",\(version),deleted,Bob,\n") && rows.contains(",\(version),inserted,Dee,\n")
                      && rows.contains(",\(version),modified,Ann,age\n"), rows)
    }
}
