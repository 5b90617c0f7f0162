import CommandArguments
import Foundation
import ReceiptHistory
import ReceiptIO
import ReceiptModel
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

/// `export --part-records N` / `--resume`: the tables as folders of parts with `manifest.json`, started afresh
/// or continued from the manifest after a crash, kill or SIGINT. Exit statuses as for `export`: 0 done, 1 could
/// not complete (committed parts kept), 2 usage (including a command that does not match the run in DIR),
/// 128 + the signal when interrupted. `lock` is the folder's lock when the caller holds it; `earlier` are the
/// earlier run's files that `--overwrite` removes (`OutputFolderClaim`).
func runInParts(
    _ setup: ExportSetup, _ baseConfig: PipelineConfig, cache: ChainCache?, metadata: RunMetadata,
    lock: OutputLock? = nil, replacing earlier: [String] = []
) -> Int32 {
    var config = baseConfig
    let out = setup.out
    func say(_ s: String) { printError("receiptflow export: \(s)") }

    var fingerprints: [InputFingerprint] = []
    for path in config.inputs {
        do throws(InputError) {
            fingerprints.append(try InputFingerprint.of(path))
        } catch {
            say(error.message)
            return 1
        }
    }
    let identity = RunIdentity(
        format: setup.format.rawValue, inputs: fingerprints,
        options: RowOptions(config: config, trustAnchorsSHA256: metadata.trustAnchorSHA256),
        outputOptions: setup.outputOptions(anchorsSHA256: metadata.trustAnchorSHA256))
    let existing: PartManifest?
    do throws(ManifestError) {
        existing = try PartManifest.load(from: out)
    } catch {
        say(error.message)
        return 1
    }

    if setup.resume, let pipe = identity.inputs.first(where: { !$0.canResume }) {
        say(
            "input '\(pipe.path)' is not a regular file (a pipe or device): what was read from it is gone, so a "
                + "run over it cannot be resumed. Save it to a file and export the file")
        return 2
    }
    var manifest: PartManifest
    switch (setup.resume, existing) {
    case (true, nil):
        guard let n = setup.partRecords else {
            say(
                "nothing to resume: \(out) has no \(PartManifest.fileName). Start the run with --part-records N "
                    + "(a run without it cannot be resumed)")
            return 2
        }
        manifest = PartManifest(identity: identity, partRecords: n)
    case (true, let recorded?):
        if let mismatch = identity.mismatch(resuming: recorded.identity) {
            for reason in mismatch.reasons { say(reason) }
            if mismatch.commandLine.isEmpty {
                say(
                    "the committed parts in \(out) were made from the old input: remove \(out) and export again")
                return 1
            }
            say("--resume needs the inputs and options of the run in \(out); give the command that began it")
            return 2
        }
        if let n = setup.partRecords, n != recorded.partRecords {
            say("--part-records is \(n), the run in \(out) uses \(recorded.partRecords); leave it out with --resume")
            return 2
        }
        if recorded.complete {
            say("the run in \(out) is already complete (\(recorded.parts.count) parts); nothing to resume")
            return writeSummary(setup, config, recorded)
        }
        manifest = recorded
    case (false, let recorded?) where !recorded.complete && !setup.overwrite:
        say(
            "\(out) holds an unfinished resumable run (\(recorded.records) receipts in \(recorded.parts.count) parts): "
                + "add --resume to continue it, or remove \(out) to start over")
        return 2
    case (false, let recorded?) where !setup.overwrite:
        say(
            "\(out) holds a complete run (\(recorded.records) receipts in \(recorded.parts.count) parts): add "
                + "--overwrite to replace it, or give an empty or new --out")
        return 2
    case (false, _):
        manifest = PartManifest(identity: identity, partRecords: setup.partRecords!)
    }
    if setup.overwrite {
        // A run in parts commits part by part, so the earlier run's files go before it starts.
        for path in earlier {
            do throws(SinkError) {
                try OutputFolder.remove(path, in: out)
            } catch {
                say(error.message)
                return 1
            }
        }
    }
    if let pipe = identity.inputs.first(where: { !$0.canResume }) {
        let name = pipe.path == "-" ? "standard input" : "'\(pipe.path)' (not a regular file)"
        say("note: \(name) cannot be resumed; if this run stops, export from a file instead")
    }

    // Parts end at batch boundaries: batches no larger than a part keep parts close to the asked size.
    config.reader.maxRecordsPerBatch = min(config.reader.maxRecordsPerBatch, manifest.partRecords)
    config.resumeAfter = manifest.parts.isEmpty ? nil : manifest.resume.position
    let output: ResumableOutput
    do throws(SinkError) {
        output = try ResumableOutput(
            directory: out, manifest: manifest, metadata: metadata, options: setup.sinkOptions, cache: cache, lock: lock
        )
    } catch {
        say(error.message)
        return 1
    }
    if let after = config.resumeAfter, setup.showProgress {
        say(
            "resuming after \(manifest.records) receipts in \(manifest.parts.count) parts "
                + "(\(config.inputs[min(after.source, config.inputs.count - 1)]) line \(after.line))")
    }

    // The history spill of each committed part is kept with it (listed in the manifest); a resumed run merges
    // them with its own when the last part is committed.
    var history: HistoryCollector? = nil
    if setup.history {
        let collector = setup.makeHistoryCollector(resumable: true)
        collector.removeUncommitted(keeping: Set(manifest.parts.compactMap(\.history)))
        for part in manifest.parts {
            guard let folder = part.history else {
                say(
                    "part \(part.index) in \(out) was committed without the purchase history (the run began with "
                        + "--no-history): resume with --no-history, or remove \(out) and export again")
                return 2
            }
            do throws(HistoryError) {
                try collector.adoptPart(folder)
            } catch {
                say(error.message)
                return 1
            }
        }
        output.history = collector
        output.finishHistory = { () throws(HistoryError) -> HistorySummary in
            try finishHistory(collector, setup, metadata)
        }
        history = collector
    }
    // The progress line covers the whole run: the committed receipts, and the inputs this attempt skips whole
    // (the input it resumes in is read again from its start, so its bytes count as this attempt's).
    var already = ProgressLine.Base(records: manifest.parts.isEmpty ? 0 : manifest.records)
    if let after = config.resumeAfter {
        for path in config.inputs.prefix(after.source) {
            already.inputBytes += ((try? InputOpener.probe(path)) ?? nil) ?? 0
        }
    }
    let pipeline = ExportPipeline(config: config, sink: output, cache: cache, checkpoint: output, history: history)
    switch runInterruptibly(pipeline, showProgress: setup.showProgress, already: already) {
    case .completed:
        return writeSummary(setup, config, output.manifest)
    case .failed(let failure, _):
        say(failure.message)
        say(
            "the run did not complete; its \(output.manifest.parts.count) committed parts are kept: after fixing "
                + "the problem, the same command with --resume continues it.")
        return 1
    case .cancelled:
        let m = output.manifest
        say(
            "interrupted; \(m.records) receipts are committed in \(m.parts.count) parts, the part in progress was "
                + "removed. Run the same command with --resume to continue.")
        return interruptedStatus()
    }
}

/// `summary.json` of a complete parts run: every attempt's records, from the manifest.
private func writeSummary(_ setup: ExportSetup, _ config: PipelineConfig, _ manifest: PartManifest) -> Int32 {
    var result = RunResult()
    do throws(ManifestError) {
        result.counts = try manifest.totalCounts()
    } catch {
        printError("receiptflow export: \(error.message)")
        return 1
    }
    result.elapsedSeconds = manifest.elapsedSeconds
    result.chainCacheHits = manifest.chainCacheHits
    result.chainCacheMisses = manifest.chainCacheMisses
    return writeRunSummary(
        result, setup, config, parts: (manifest.parts.count, manifest.partRecords, manifest.attempts),
        history: manifest.history)
}

extension ExportSetup {
    /// The options of this command line that change output, as a parts run's identity records them
    /// (`ExportOptions`): `anchorsSHA256` are the trust anchors in effect.
    func outputOptions(anchorsSHA256: [String]) -> [String: String] {
        var asOfText = [UInt8]()
        if let asOf { CivilTime.appendISO8601(epochMillis: asOf, into: &asOfText) }
        let anchors = Set(anchorsSHA256.map { $0.lowercased() }).sorted()
        var canonical = [
            "--format": format.rawValue,
            "--id-field": config.idField ?? "none",
            "--max-record-size": String(config.reader.maxRecordSize),
            "--trust-anchor": anchors.isEmpty ? "none" : anchors.joined(separator: " "),
        ]
        if asOf != nil { canonical["--as-of"] = String(decoding: asOfText, as: UTF8.self) }
        if let base { canonical["--base"] = base.state.checksum }
        let args = self.args
        return ExportOptions.identity(
            given: { name in args.has(name) && ExportOptions.flags.contains(name) ? [""] : args.values(name) },
            canonical: canonical)
    }
}
