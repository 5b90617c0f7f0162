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

    /// Why the folder cannot be used: the message is printed, the status is the exit status.
    struct Refusal: Error {
        var status: Int32
    }

    static func take(_ setup: ExportSetup) -> Result<OutputFolderClaim, Refusal> {
        func refuse(_ message: String, _ status: Int32) -> Result<OutputFolderClaim, Refusal> {
            printError("receiptflow export: \(message)")
            return .failure(Refusal(status: status))
        }
        let out = setup.out
        let created = !FileManager.default.fileExists(atPath: out)
        let lock: OutputLock
        do throws(SinkError) {
            try makeDirectory(out)
            lock = try OutputLock(directory: out)
            try OutputFolder.removeTemporaries(in: out)
        } catch {
            return refuse(error.message, 1)
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
            return refuse(
                "\(out) holds another run's files (\(earlier.joined(separator: ", "))): add --overwrite to replace "
                    + "that run, or give an empty or new --out", 2)
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
