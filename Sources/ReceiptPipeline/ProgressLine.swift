import Foundation

/// The progress line on standard error: records, receipts per second, MB/s, and percentage and time left when
/// the input size is known. A run that writes the purchase history shows it as a second step ("[2/2] merging the
/// purchase history"), after the records step is done, so that a finished read never reads as a finished run.
/// Redrawn in place (`\r`) twice a second; the clock is read only here. For a resumed
/// run the records and the percentage cover the whole run (`Base`: what earlier attempts did), the rates this
/// attempt.
public final class ProgressLine: @unchecked Sendable {
    /// What earlier attempts of a resumed run did: committed records, and input bytes of the inputs this attempt
    /// does not read again.
    public struct Base: Sendable, Equatable {
        public var records: Int
        public var inputBytes: Int
        public init(records: Int = 0, inputBytes: Int = 0) {
            self.records = records
            self.inputBytes = inputBytes
        }
    }

    private let timer: DispatchSourceTimer
    /// Signalled by the timer's cancel handler, which runs once no redraw can start or is under way.
    private let cancelled = DispatchSemaphore(value: 0)
    private let started = ContinuousClock.now
    private let read: @Sendable () -> RunResult
    private let already: Base
    /// When the records step was seen to end (seconds since the start), drawn from the timer's thread only.
    private var recordsEnded: Double? = nil

    /// Starts redrawing from `read` until `stop`.
    public init(interval: Double = 0.5, already: Base = Base(), read: @escaping @Sendable () -> RunResult) {
        self.read = read
        self.already = already
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "receiptflow.progress"))
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [weak self] in self?.draw(final: false) }
        let cancelled = self.cancelled
        timer.setCancelHandler { cancelled.signal() }
        timer.resume()
    }

    /// Draws the last line and ends it with a newline. Called once.
    public func stop() {
        timer.cancel()
        // A redraw already under way finishes before the last line, which then stays last.
        cancelled.wait()
        draw(final: true)
    }

    private func draw(final: Bool) {
        let r = read()
        let e = ContinuousClock.now - started
        let seconds = max(Double(e.components.seconds) + Double(e.components.attoseconds) * 1e-18, 1e-9)
        if r.phase != .records && recordsEnded == nil { recordsEnded = seconds }
        let text = Self.text(
            r, seconds: recordsEnded ?? seconds, final: final, already: already,
            stepSeconds: recordsEnded.map { seconds - $0 })
        FileHandle.standardError.write(Data(text.utf8))
    }

    /// The line for `r` after `seconds` of the records step; `\r`-prefixed so that it overwrites the previous
    /// one. `stepSeconds` is the time spent since the records step ended (nil while it runs).
    public static func text(
        _ r: RunResult, seconds: Double, final: Bool, already: Base = Base(), stepSeconds: Double? = nil
    ) -> String {
        let c = r.counts
        let rate = Double(c.records) / seconds
        let mbps = Double(c.inputBytes) / seconds / 1_000_000
        let records = already.records + c.records
        let later = final ? 0 : Int((stepSeconds ?? 0).rounded())
        var s = "\r"
        if r.hasHistory && !final { s += r.phase == .records ? "[1/2] " : "[2/2] " }
        if !final && r.phase == .history {
            s += "merging the purchase history of \(records) records: \(later)s"
            return padded(s, final: false)
        }
        s += "\(records) records, \(Int(rate.rounded())) receipts/s, \(String(format: "%.1f", mbps)) MB/s"
        if let size = r.inputSize, size > 0 {
            let done = min(Double(already.inputBytes + c.inputBytes), Double(size))
            s += String(format: ", %.1f%%", done / Double(size) * 100)
            if !final && r.phase == .records && c.inputBytes > 0 {
                let left = seconds * (Double(size) - done) / Double(c.inputBytes)
                s += ", \(Int(left.rounded()))s left"
            }
        }
        if !final && r.phase == .finishing { s += ", finishing the files" }
        if final, let stepSeconds, r.hasHistory {
            s += String(format: "; history and files %.0fs", stepSeconds)
        }
        return padded(s, final: final)
    }

    private static func padded(_ line: String, final: Bool) -> String {
        var s = line
        // Pad so that a shorter line fully covers the one it overwrites.
        let width = 79
        if s.count < width { s += String(repeating: " ", count: width - s.count) }
        return final ? s + "\n" : s
    }
}
