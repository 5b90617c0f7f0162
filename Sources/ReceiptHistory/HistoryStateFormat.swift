import ReceiptModel
import ReceiptSink

/// The history state a run that writes history keeps in its folder, so that a later run (`export --base`) can
/// continue the history without reading the earlier inputs again (docs/incremental.md, "The history state").
///
/// One file, `.receiptflow-state`, written under a temporary name, synced and renamed with the run's other files:
///
///     magic "RFHSTATE" (8 bytes)
///     format version (int32, little-endian)
///     the body, in zstd-compressed blocks (`StateBlocks`), ended by a uint32 0
///     SHA-256 of every byte before it (32 bytes)
///
/// The body's bytes are frames, each a uint32 length and that many bytes:
///
///     header frame: the record layout, the run's number in its chain, its data horizon, the chain's inputs,
///     and whether a run of the chain built its history from records nobody verified (one byte, 1 if so; a
///     state whose header ends before it says no)
///     renewal frames (the newest renewal info per key, in key order), then an empty frame
///     purchase frames (the merged purchases, in the row order of `purchases`), then an empty frame
///     trailer frame: the number of renewal and purchase records
///
/// Records are encoded by the spill's record encoders (`SpillRecord.encode`), so the state holds exactly what
/// the merge compares.
public enum HistoryStateFormat {
    /// The state's file name inside a run's folder.
    public static let fileName = OutputFolder.historyState
    static let magic: [UInt8] = Array("RFHSTATE".utf8)
    /// The format version this build writes and reads. A change to the file's framing or to a record encoding
    /// must change it.
    public static let version: Int32 = 2
    /// The longest frame a reader accepts.
    static let maxFrame = 64 << 20

    /// The record layout: the `purchases` columns the records carry, so that a build whose records hold other
    /// columns refuses a state it would decode wrongly.
    static var layout: [UInt8] {
        let columns = TableSchema.purchases.columns.map { "\($0.name):\($0.kind):\($0.nullable ? "null" : "value")" }
        return Array(("purchases " + columns.joined(separator: ",") + "; renewals 1").utf8)
    }
}

/// What a history state says about its run, read before its records.
public struct HistoryStateHeader: Sendable, Equatable {
    /// The run's number in its chain: 1 for a run on no base, its base's plus one otherwise.
    public var run: Int64
    /// The greatest creation date of the contributing receipts over the chain (epoch ms); nil when none.
    public var horizon: Int64?
    /// The inputs of every run of the chain, in order, as each run named them (the `source` column of a record
    /// whose input index is i is `inputs[i]`).
    public var inputs: [String]
    /// Whether a run of the chain merged records nobody verified (`--no-verify`) into the history.
    public var unverified: Bool

    public init(run: Int64, horizon: Int64?, inputs: [String], unverified: Bool = false) {
        self.run = run
        self.horizon = horizon
        self.inputs = inputs
        self.unverified = unverified
    }

    func encode(into w: inout SpillWriter) {
        w.text(HistoryStateFormat.layout)
        w.i64(run)
        w.i64(horizon)
        w.i32(Int32(inputs.count))
        for name in inputs { w.text(Array(name.utf8)) }
        w.u8(unverified ? 1 : 0)
    }

    static func decode(_ bytes: [UInt8], path: String) throws(HistoryStateError) -> HistoryStateHeader {
        let decoded: Result<(layout: [UInt8], header: HistoryStateHeader), HistoryError> = bytes.withUnsafeBytes {
            p in
            var r = SpillReader(p)
            do throws(HistoryError) {
                let layout = try r.text()
                let run = try r.i64()
                let horizon = try r.optionalI64()
                let count = Int(try r.i32())
                guard count >= 0 else { throw HistoryError(.spillDamaged, detail: "a negative input count") }
                var inputs: [String] = []
                for _ in 0..<count { inputs.append(String(decoding: try r.text(), as: UTF8.self)) }
                var unverified = false
                if !r.atEnd {
                    switch try r.u8() {
                    case 0: break
                    case 1: unverified = true
                    default: throw HistoryError(.spillDamaged, detail: "an unknown verification mark")
                    }
                }
                let header = HistoryStateHeader(run: run, horizon: horizon, inputs: inputs, unverified: unverified)
                return .success((layout, header))
            } catch {
                return .failure(error)
            }
        }
        switch decoded {
        case .failure: throw HistoryStateError(.damaged, path: path, detail: "its header does not decode")
        case .success(let d):
            guard d.layout == HistoryStateFormat.layout else {
                throw HistoryStateError(
                    .foreignVersion, path: path,
                    detail: "its records carry other columns: \(String(decoding: d.layout, as: UTF8.self))")
            }
            return d.header
        }
    }
}
