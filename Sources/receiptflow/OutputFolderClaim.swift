import CommandArguments
import Foundation
import ReceiptSink

/// The output folder of an export, claimed before any work: created when missing, locked against a second
/// writer, cleared of the temporary files a killed run left, and checked for another run's files (refused
/// without `--overwrite`).
struct OutputFolderClaim {
    let directory: String
    let lock: OutputLock
    /// The earlier run's files (relative paths) that a committing run with `--overwrite` removes.
    let earlierRun: [String]
    /// Whether this run created the folder: a run that fails removes it again when it is empty.
    let created: Bool

    /// Why the folder cannot be used; `take` prints the message, and `status` is the exit status.
    enum Refusal: Error {
        /// The folder cannot be created, locked or cleared (the writer's error says which and why).
        case unusable(SinkError)
        /// The folder holds another run's `files` and neither `--overwrite` nor `--resume` was given.
        case holdsAnotherRun(folder: String, files: [String])

        /// 1 for a folder that cannot be used, 2 (a usage error) for one that needs an option to be used.
        var status: Int32 {
            switch self {
            case .unusable: return 1
            case .holdsAnotherRun: return 2
            }
        }

        var message: String {
            switch self {
            case .unusable(let error): return error.message
            case .holdsAnotherRun(let folder, let files):
                return "\(folder) holds another run's files (\(files.joined(separator: ", "))): add --overwrite to "
                    + "replace that run, or give an empty or new --out"
            }
        }
    }

    static func take(_ setup: ExportSetup) -> Result<OutputFolderClaim, Refusal> {
        func refuse(_ refusal: Refusal) -> Result<OutputFolderClaim, Refusal> {
            printError("receiptflow export: \(refusal.message)")
            return .failure(refusal)
        }
        let out = setup.out
        let created = !FileManager.default.fileExists(atPath: out)
        let lock: OutputLock
        do throws(SinkError) {
            try makeDirectory(out)
            lock = try OutputLock(directory: out)
            try OutputFolder.removeTemporaries(in: out)
        } catch {
            return refuse(.unusable(error))
        }
        var earlier = OutputFolder.earlierRun(in: out)
        if setup.inParts && !earlier.contains("manifest.json") {
            // Parts without a manifest are what a run killed before its first manifest write leaves; the parts
            // run removes every part its manifest does not list.
            earlier.removeAll { OutputFolder.tables.contains($0) }
        }
        // A resumed run continues the files in the folder; an unfinished parts run is reported by the parts
        // command (it says how to resume it).
        let partsRunToContinue = setup.inParts && earlier.contains("manifest.json")
        if !earlier.isEmpty && !setup.overwrite && !setup.resume && !partsRunToContinue {
            return refuse(.holdsAnotherRun(folder: out, files: earlier))
        }
        return .success(
            OutputFolderClaim(
                directory: out, lock: lock, earlierRun: setup.overwrite ? earlier : [], created: created))
    }

    /// Releases the folder after a failed run, removing it when this run created it and left it empty.
    func abandon() {
        lock.release()
        if created { rmdir(directory) }
    }
}
