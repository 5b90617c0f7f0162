import Foundation
import ReceiptHistory
import ReceiptModel
import ReceiptPipeline
import ReceiptSink

/// The earlier run an export continues (`--base PREV`): checked before anything is written (a complete run
/// that wrote history, its state readable and intact, and not the output folder itself), then read only.
struct BaseRun {
    /// The folder as given on the command line.
    let folder: String
    let state: HistoryStateFile

    /// Why PREV cannot be a base; every refusal is a usage error (exit status 2) and nothing is written.
    enum Refusal: Error {
        case missing(String)
        case notAFolder(String)
        case incomplete(String)
        case noHistory(String)
        case state(String, HistoryStateError)
        case sameFolder(String)

        var message: String {
            switch self {
            case .missing(let p): return "\(p): no such folder; give the output folder of an earlier run"
            case .notAFolder(let p): return "\(p) is not a folder; give the output folder of an earlier run"
            case .incomplete(let p):
                return "\(p) holds no complete run (no summary.json): its run did not finish, or a parts run "
                    + "is still unfinished (complete it with --resume first)"
            case .noHistory(let p):
                return "\(p) was written with --no-history: it keeps no purchase history to continue; export "
                    + "its inputs again without --no-history to start a chain"
            case .state(let label, let e): return "\(label): " + e.message
            case .sameFolder(let p):
                return "--out and \(p) are the same folder: a run on a base writes a new folder and only reads its "
                    + "base; give another --out"
            }
        }
    }

    /// What `summary.json` says about this base.
    var summary: BaseSummary {
        BaseSummary(folder: folder, run: state.header.run, stateSHA256: state.checksum)
    }

    /// Checks `folder` as the base of a run writing to `out`; `option` names it in messages (`--base`, or empty
    /// for a run given to `merge`).
    static func open(_ folder: String, out: String, option: String = "--base") -> Result<BaseRun, Refusal> {
        let label = option.isEmpty ? folder : option + " " + folder
        guard let base = fileID(folder) else { return .failure(.missing(label)) }
        guard base.isFolder else { return .failure(.notAFolder(label)) }
        if let target = fileID(out), target.device == base.device, target.inode == base.inode {
            return .failure(.sameFolder(label))
        }
        let dir = pathByDescriptor(folder, directory: true)
        guard let data = FileManager.default.contents(atPath: join(dir, CommitUnit.marker)),
            let summary = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            summary["tool_version"] is String
        else { return .failure(.incomplete(label)) }
        guard summary["history"] != nil else { return .failure(.noHistory(label)) }
        let statePath = join(dir, HistoryStateFormat.fileName)
        do throws(HistoryStateError) {
            let state = try HistoryStateFile.open(statePath)
            // The run may write over nothing of its base.
            ProtectedFiles.protect([statePath])
            return .success(BaseRun(folder: folder, state: state))
        } catch {
            if error.code == .missing {
                return .failure(
                    .state(
                        label,
                        HistoryStateError(
                            .foreignVersion, path: statePath,
                            detail: "the run wrote history but no state: a version that kept none")))
            }
            return .failure(.state(label, error))
        }
    }

    private static func fileID(_ path: String) -> (device: UInt64, inode: UInt64, isFolder: Bool)? {
        var st = stat()
        guard RawPath.withFileSystemPath(path, { stat($0, &st) }) == 0 else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino), (st.st_mode & S_IFMT) == S_IFDIR)
    }

    private static func join(_ d: String, _ n: String) -> String { d.hasSuffix("/") ? d + n : d + "/" + n }
}

extension ExportSetup {
    /// The history stage of this run: on a base, continuing its chain.
    func makeHistoryCollector(resumable: Bool) -> HistoryCollector {
        let chain = (base?.state.header.inputs ?? []) + config.inputs.map(config.sourceName)
        let collector = HistoryCollector(directory: out, inputs: chain, resumable: resumable)
        collector.threads = config.threads
        collector.ownRecordsUnverified = !config.verify
        if let base { collector.continueChain(base.state) }
        return collector
    }
}
