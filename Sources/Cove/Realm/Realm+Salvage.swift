// Realm.salvage(fromFile:toFile:): what can still be read of a damaged file, copied into a new
// one (as sqlite3's `.recover` does). The damaged file is read without being trusted or written
// (CoveStorage, Storage+Salvage.swift); the copy goes through the same new-file commit as
// writeCopy (CatalogCopy.writeFile), its tables filled by the object layer's salvage
// (CoveCore, Salvage.swift), which builds indexes and backlinks anew.
import CoveCore
import CoveStorage
import FoundationEssentials
import Glibc

extension Realm {
    /// Copies everything that can still be read of the damaged file at `damaged` into a new
    /// file at `path`: the schema, every object on a page that can be read with its values and
    /// collections (what of them can be read), links between them (a link to a lost object
    /// becomes null or leaves its list or set), and indexes and backlinks built anew. The
    /// damaged file is opened read-only, without its lock file and without recovery: of the
    /// versions its meta slots hold, the newest whose schema can be read is salvaged, even one
    /// an ordinary open would discard. Run it on a file no other program is writing. An
    /// encrypted file needs its `encryptionKey`; the new file is encrypted with the same key.
    ///
    /// - Returns: what was copied and what was lost, per class, with the damaged pages
    ///   (`SalvageReport.isComplete` when nothing was).
    /// - Throws: `.invalidArgument` when `path` is `damaged` or exists already (a salvage goes
    ///   to a new file); `.corrupt` when nothing can be salvaged (no meta slot holds together,
    ///   or no version's schema can be read; no file is written); `.io`, `.noSpace` when a file
    ///   cannot be read or written (a partial new file is removed); `.format` for a file of a
    ///   newer Cove; `.decryption` for an encrypted file without its key.
    public static func salvage(fromFile damaged: String, toFile path: String, encryptionKey: Data? = nil) throws(CoveError) -> SalvageReport {
        let key = encryptionKey.map { [UInt8]($0) }
        if damaged == path || resolved(damaged) == resolved(path) {
            throw CoveError(.invalidArgument, "salvage: '\(path)' is the damaged file itself: a salvage goes to a new file")
        }
        if access(path, F_OK) == 0 {
            throw CoveError(.invalidArgument, "salvage: '\(path)' already exists: a salvage goes to a new file")
        }
        let storage: Storage
        let versions: [SalvageVersion]
        do { (storage, versions) = try Storage.openForSalvage(path: damaged, encryptionKey: key) } catch { throw CoveError(error) }
        defer { storage.close() }
        let newest = versions[0]
        // The versions newer than the one salvaged, with why their schema could not be read.
        var unreadable: [(version: UInt64, why: String)] = []
        for version in versions {
            let snapshot: Snapshot
            do { snapshot = try storage.salvageSnapshot(version) } catch { throw CoveError(error) }
            defer { snapshot.end() }
            let catalog: SalvageCatalog
            do { catalog = try SalvageCatalog(reading: SalvagePages(snapshot)) } catch {
                unreadable.append((version.version, error.message))
                continue
            }
            var report: SalvageReport?
            var failure: CoveError?
            do throws(StorageError) {
                try CatalogCopy.writeFile(path, encryptionKey: key) { (w) throws(StorageError) in
                    do throws(CoveError) { report = try Salvage.copy(catalog, into: w, newestVersion: newest.version) } catch {
                        failure = error
                        throw .internal(error.message)
                    }
                }
            } catch {
                throw failure ?? CoveError(error)
            }
            guard var report else { throw CoveError(.internal, "salvage: no report") }
            report.versionNotes = unreadable.map { "version \($0.version) was not salvaged: \($0.why)" }
            if let problem = version.problem {
                let older = versions.first { $0.version < version.version && $0.problem == nil }
                report.versionNotes.append("version \(version.version) does not check out (\(problem))"
                    + (older.map { ": an ordinary open takes version \($0.version) instead" } ?? ""))
            }
            return report
        }
        throw CoveError(.corrupt, "nothing can be salvaged from '\(damaged)': " + unreadable.map(\.why).joined(separator: "; "))
    }

    /// `path` with its links and dots resolved, or as it is when it names no file.
    private static func resolved(_ path: String) -> String {
        guard let p = realpath(path, nil) else { return path }
        defer { free(p) }
        return String(cString: p)
    }
}
