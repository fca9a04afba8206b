// The fuzz target of the file parser: any bytes, written as a database file, must open and verify
// or be refused with an error (CORRUPT, FORMAT...), never crash or hang, both as a storage file
// (Storage.verify) and as a realm (Realm.verify, which walks the object layer's catalog: tables,
// clusters, indexes and backlinks, then every object of every class read as `cove dump` reads
// it). Built with `-sanitize=fuzzer` it is a libFuzzer entry point; built plainly it replays files
// given on the command line (the corpus), which the tests do on every run. An input that is an
// encrypted file (its first trailer's magic) is opened with `fuzzKey`, the key of the corpus's
// encrypted seed: a mutated byte must be refused as cleanly as in a plain file.
import Cove
import CoveStorage
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Where each input is written: one file per process, reused.
let scratchPath: String = {
    let base = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    return "\(base)/cove-fuzz-file-\(getpid()).cove"
}()

func removeScratchFiles() {
    unlink(scratchPath)
    unlink(scratchPath + ".lock")
}

/// Opens `bytes` as a Cove file, reads every reachable page through verify(), and closes it;
/// then opens it as a realm, verifies it and reads every object. When recomputing the checksums
/// of its pages and meta slots changes the bytes, does the same again with them, so that a
/// mutation inside a page also reaches the decoders behind its checksum. Returns what happened,
/// for the replayer's output.
func exercise(_ bytes: UnsafeRawBufferPointer) -> String {
    if isEncrypted(bytes) {
        guard writeScratch(bytes) else { return "cannot write \(scratchPath)" }
        return "encrypted: " + exerciseStorage(key: fuzzKey) + "; " + exerciseRealm(key: fuzzKey)
    }
    var outcome = exerciseFile(bytes)
    if let repaired = withChecksumsRepaired(bytes) {
        outcome += " | checksums repaired: " + repaired.withUnsafeBytes { exerciseFile($0) }
    }
    return outcome
}

/// The key the corpus's encrypted seed was written with (Tests/Corpus/make-realm-seeds.py).
let fuzzKey: [UInt8] = Array(0..<64)

/// Whether `bytes` holds an encrypted file's trailer magic ("CoveEnc1") after its first page's
/// cipher text.
func isEncrypted(_ bytes: UnsafeRawBufferPointer) -> Bool {
    bytes.count >= pageSize + 8 && Array(bytes[pageSize..<pageSize + 8]) == Array("CoveEnc1".utf8)
}

/// Writes `bytes` as the scratch file, then opens it as a storage file and as a realm.
func exerciseFile(_ bytes: UnsafeRawBufferPointer) -> String {
    guard writeScratch(bytes) else { return "cannot write \(scratchPath)" }
    return exerciseStorage() + "; " + exerciseRealm()
}

/// Replaces the scratch file with `bytes` (and removes its lock file).
func writeScratch(_ bytes: UnsafeRawBufferPointer) -> Bool {
    unlink(scratchPath + ".lock")
    let fd = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    if fd < 0 { return false }
    defer { close(fd) }
    var written = 0
    while written < bytes.count {
        let n = write(fd, bytes.baseAddress! + written, bytes.count - written)
        if n <= 0 { return false }
        written += n
    }
    return true
}

/// `bytes` with the checksum of every whole page recomputed (a meta slot's, any page that starts
/// with the Cove magic, over its first 4092 bytes; every other page's over its bytes after the
/// checksum field), or nil when none changes. The written-page list of the newest slot still records the pages' old checksums, so
/// its commit is discarded and the one before opened, whose pages reach the decoders.
func withChecksumsRepaired(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
    var copy = Array(bytes)
    var changed = false
    copy.withUnsafeMutableBytes { b in
        for i in 0..<(b.count / pageSize) {
            let page = b.baseAddress! + i * pageSize
            let meta = page.loadUnaligned(as: UInt64.self) == UInt64(littleEndian: 0x0000_4244_4556_4F43) // "COVEDB\0\0"
            let at = meta ? pageSize - 4 : PageHeader.checksumOffset
            let crc = meta ? crc32c(UnsafeRawBufferPointer(start: page, count: pageSize - 4)) : PageHeader.computeChecksum(page)
            if page.loadUnaligned(fromByteOffset: at, as: UInt32.self) != crc.littleEndian {
                page.storeBytes(of: crc.littleEndian, toByteOffset: at, as: UInt32.self)
                changed = true
            }
        }
    }
    return changed ? copy : nil
}

/// Opens the scratch file as a read-only realm with the schema it holds, verifies it, and
/// reads every property of every object of every class that is not embedded (embedded objects
/// through their parents), collections and links included.
func exerciseRealm(key: [UInt8]? = nil) -> String {
    do {
        let realm = try Realm(configuration: Realm.Configuration(path: scratchPath, readOnly: true, durability: .noSync,
                                                                 encryptionKey: key.map { Data($0) }))
        defer { realm.close() }
        let report = try realm.verify()
        var objects = 0
        for cls in realm.schema.classes where !cls.isEmbedded {
            for object in try realm.dynamicObjects(cls.className) {
                _ = try ObjectJSON.encode(object)
                objects += 1
            }
        }
        return "realm opened, \(objects) objects: \(report)"
    } catch {
        return "realm refused: \(error)"
    }
}

/// Opens the scratch file read-only as a storage file and reads every reachable page through
/// verify().
func exerciseStorage(key: [UInt8]? = nil) -> String {
    do {
        var options = StorageOptions(durability: .noSync, readOnly: true)
        options.encryptionKey = key
        let storage = try Storage.open(path: scratchPath, options: options)
        defer { storage.close() }
        let report = try storage.verify()
        return "opened: \(report)"
    } catch {
        return "refused: \(error)"
    }
}

#if COVE_LIBFUZZER
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = exercise(UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size))
    return 0
}

@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(_ argc: UnsafeMutablePointer<Int32>,
                     _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                     _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM names an executable's entry point after its module; hand control to libFuzzer there.
@_cdecl("cove_fuzz_file_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var vector = argv
    // libFuzzer ends the run with exit(); the scratch file goes with it.
    atexit { removeScratchFiles() }
    return runFuzzerDriver(&count, &vector) { data, size in fuzzOne(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        var opened = 0, refused = 0, realms = 0, repaired = 0
        for path in CommandLine.arguments.dropFirst() {
            guard let bytes = readFile(path) else {
                print("cannot read \(path)")
                exit(2)
            }
            let outcome = bytes.withUnsafeBytes { exercise($0) }
            if outcome.hasPrefix("opened") || outcome.hasPrefix("encrypted: opened") { opened += 1 } else { refused += 1 }
            if outcome.contains("realm opened") { realms += 1 }
            if outcome.contains("checksums repaired") { repaired += 1 }
            print("\(path): \(outcome.prefix(240))")
        }
        removeScratchFiles()
        print("replayed \(opened + refused) inputs: \(opened) opened and verified, \(refused) refused with an error; \(realms) opened and read as realms; \(repaired) tried again with their checksums repaired")
    }

    static func readFile(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return bytes
    }
}
#endif
