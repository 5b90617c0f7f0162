import CommandArguments
import Foundation
import ReceiptModel
import ReceiptPipeline
import ReceiptSink

/// The output folder of an export, claimed before any work: checked that nothing the run would write over or
/// remove is one of its inputs, created when missing, locked against a second writer, cleared of the temporary
/// files a killed run left, and checked for another run's files (refused without `--overwrite`) and for files
/// named like receiptflow's that no run of it wrote (kept; refused when this run would replace them).
struct OutputFolderClaim {
    /// The folder as the run reaches it (its descriptor's path when its name is not UTF-8).
    let directory: String
    /// The folder as given on the command line.
    let given: String
    let lock: OutputLock
    /// The earlier run's files (relative paths) that a committing run with `--overwrite` removes: only those its
    /// summary or manifest lists.
    let earlierRun: [String]
    /// Whether this run created the folder: a run that fails removes it again when it is empty.
    let created: Bool

    /// Why the folder cannot be used; `take` prints the message, and `status` is the exit status.
    enum Refusal: Error {
        /// The folder cannot be created, locked or cleared (the writer's error says which and why).
        case unusable(SinkError)
        /// The folder holds another run's `files` and neither `--overwrite` nor `--resume` was given.
        case holdsAnotherRun(folder: String, files: [String])
        /// `path` in the folder, which the run would write over, rename or remove, is its input `input`.
        case wouldTouchInput(input: String, path: String)
        /// The folder holds `files` that no run of receiptflow wrote and that this run would replace.
        case foreignFiles(folder: String, files: [String])

        /// 1 for a folder that cannot be used, 2 (a usage error) for one that needs another command.
        var status: Int32 {
            switch self {
            case .unusable: return 1
            case .holdsAnotherRun, .wouldTouchInput, .foreignFiles: return 2
            }
        }

        var message: String {
            switch self {
            case .unusable(let error): return error.message
            case .holdsAnotherRun(let folder, let files):
                return "\(folder) holds another run's files (\(files.joined(separator: ", "))): add --overwrite to "
                    + "replace that run, or give an empty or new --out"
            case .wouldTouchInput(let input, let path):
                let which = input == path ? "" : " (as \(path))"
                return "the input \(input) is in the output directory\(which) under a name this run would write over "
                    + "or remove: nothing was written; move the input out of the output directory or give another --out"
            case .foreignFiles(let folder, let files):
                return "\(folder) holds \(files.joined(separator: ", ")), which no run of receiptflow wrote (no "
                    + "summary.json or manifest.json there lists it) and which this run would replace: nothing was "
                    + "written; move it away or give another --out"
            }
        }
    }

    static func take(_ setup: ExportSetup) -> Result<OutputFolderClaim, Refusal> {
        func refuse(_ refusal: Refusal) -> Result<OutputFolderClaim, Refusal> {
            printError("receiptflow export: \(refusal.message)")
            return .failure(refusal)
        }
        // A folder whose name is not UTF-8 is used through its descriptor, by its exact bytes (`RawPath`).
        let given = setup.out
        var out = given
        let created = RawPath.withFileSystemPath(out) { access($0, F_OK) } != 0
        if !created { out = pathByDescriptor(out, directory: true) }
        // Before anything is written: no file the run may create, replace or remove is one of its inputs. The
        // writers check each file again (`ProtectedFiles`).
        ProtectedFiles.protect(setup.config.inputs + setup.trustAnchors)
        if !created, let hit = InputGuard.touchedInput(in: out) {
            return refuse(.wouldTouchInput(input: hit.input, path: MessagePaths.apply(hit.path)))
        }
        if created { out = pathByDescriptor(out, directory: true, create: true) }
        let lock: OutputLock
        do throws(SinkError) {
            try makeDirectory(out)
            lock = try OutputLock(directory: out)
            try OutputFolder.removeTemporaries(in: out)
        } catch {
            return refuse(.unusable(error))
        }
        var setup = setup
        setup.out = out
        let files = Ownership(out, setup)
        if !files.colliding.isEmpty {
            lock.release()
            return refuse(.foreignFiles(folder: out, files: files.colliding))
        }
        // A resumed run continues the files in the folder; an unfinished parts run is reported by the parts
        // command (it says how to resume it).
        let partsRunToContinue = setup.inParts && files.hasManifest
        if !files.owned.isEmpty && !setup.overwrite && !setup.resume && !partsRunToContinue {
            lock.release()
            return refuse(.holdsAnotherRun(folder: out, files: files.owned))
        }
        if setup.overwrite && !files.kept.isEmpty && !setup.quiet {
            printError(
                "receiptflow export: note: kept \(files.kept.joined(separator: ", ")) in \(out): no summary.json "
                    + "or manifest.json there lists it, so no run of receiptflow wrote it")
        }
        return .success(
            OutputFolderClaim(
                directory: out, given: given, lock: lock, earlierRun: setup.overwrite ? files.removable : [],
                created: created))
    }

    /// Releases the folder after a failed run, removing it when this run created it and left it empty.
    func abandon() {
        lock.release()
        if created { _ = RawPath.withFileSystemPath(given) { rmdir($0) } }
    }
}

/// Which of the files in an output folder that are named like receiptflow's a run of it wrote (its summary or
/// manifest lists them), and which of the others this run would replace.
private struct Ownership {
    /// A run's files (relative paths; part files one by one).
    var owned: [String] = []
    /// What `--overwrite` removes: the owned files, and the table folders holding no part file of anyone else.
    var removable: [String] = []
    /// Files named like receiptflow's that no run wrote: never removed.
    var kept: [String] = []
    /// Of `kept`, those this run would write over.
    var colliding: [String] = []
    var hasManifest = false

    init(_ out: String, _ setup: ExportSetup) {
        let run = EarlierRun.read(out)
        hasManifest = run.files.contains(PartManifest.fileName)
        var writes = Set(["summary.json"])
        if setup.history { writes.formUnion(EarlierRun.historyFiles(setup.format)) }
        // A plain run writes the report's aggregates beside its tables, and the page with `--report`.
        if !setup.inParts { writes.insert("report-data.json") }
        if setup.report { writes.insert("report.html") }
        if setup.inParts {
            writes.formUnion([PartManifest.fileName, ManifestStore.logName])
        } else {
            writes.formUnion(OutputFolder.tableFiles(setup.format))
        }
        for entry in OutputFolder.earlierRun(in: out) {
            let folder = (out as NSString).appendingPathComponent(entry)
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                if run.files.contains(entry) {
                    owned.append(entry)
                    removable.append(entry)
                } else {
                    kept.append(entry)
                    if writes.contains(entry) { colliding.append(entry) }
                }
                continue
            }
            // A parts run removes the part files its manifest does not list (a crash between a part's rename and
            // its entry leaves one): with a manifest present, every part file is that run's.
            let parts = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
                .filter { $0.hasPrefix("part-") }.sorted().map { entry + "/" + $0 }
            var foreign = false
            for part in parts {
                if hasManifest || run.files.contains(part) {
                    owned.append(part)
                    removable.append(part)
                } else {
                    foreign = true
                    kept.append(part)
                    if setup.inParts { colliding.append(part) }
                }
            }
            if !foreign { removable.append(entry) }
        }
    }
}
