import Foundation
import ReceiptModel
import ReceiptSink
import Testing

@testable import ReceiptHistory

/// The history state a run keeps (`HistoryStateFormat`) and a run continuing it (`continueChain`): the chain's
/// tables equal one run's over the same inputs in order, and a state that was changed or is not one is refused.
@Suite("History state and runs on a base")
struct HistoryStateTests {
    /// Runs the history over `batches` of this run (`inputs` its inputs), on `base` when given; returns the tables
    /// and the folder (holding the state).
    func run(
        _ batches: [(ColumnBatch, Int)], inputs: [String], base: HistoryStateFile? = nil, asOf: Int64? = nil,
        memoryBudget: Int? = nil, unverified: Bool = false
    ) throws -> (HistoryTables, String) {
        let dir = temporaryDirectory("state")
        let chain = (base?.header.inputs ?? []) + inputs
        let collector = HistoryCollector(directory: dir, inputs: chain, resumable: false, memoryBudget: memoryBudget)
        collector.ownRecordsUnverified = unverified
        if let base { collector.continueChain(base) }
        for (b, input) in batches { try collector.add(b, input: input) }
        let result = try collector.finish(asOf: asOf, format: .csv, metadata: RunMetadata())
        collector.removeSpill()
        let p = try String(contentsOfFile: dir + "/purchases.csv", encoding: .isoLatin1)
        let s = try String(contentsOfFile: dir + "/subscriptions.csv", encoding: .isoLatin1)
        return (HistoryTables(purchasesCSV: p, subscriptionsCSV: s, result: result), dir)
    }

    func state(_ dir: String) throws -> HistoryStateFile {
        try HistoryStateFile.open(dir + "/" + HistoryStateFormat.fileName)
    }

    /// Day one: a subscription's two periods (the first refunded), a renewal info, and a purchase seen at day 10.
    let first = batch(
        [
            Receipt(
                line: 1, created: day(10),
                entries: [
                    Entry(transactionID: "1", originalTransactionID: "1", purchase: day(1), expires: day(31)),
                    Entry(transactionID: "5", product: "tie-first", purchase: day(2)),
                ]),
            Receipt(
                line: 2, created: day(40),
                entries: [
                    Entry(
                        transactionID: "1", originalTransactionID: "1", purchase: day(1), expires: day(31),
                        cancellation: day(20), reason: 1),
                    Entry(transactionID: "2", originalTransactionID: "1", purchase: day(31), expires: day(61)),
                ]),
        ],
        renewals: [Renewal(line: 3, originalTransactionID: "1", signed: day(35), autoRenewStatus: 1)],
        source: "day1.ndjson")

    /// Day two: the refund omitted, a renewal, the day-10 purchase again at the same creation date (this later
    /// run's occurrence is newer), a newer renewal info.
    let second = batch(
        [
            Receipt(
                line: 1, created: day(10), entries: [Entry(transactionID: "5", product: "tie-second", purchase: day(2))]
            ),
            Receipt(
                line: 2, created: day(70),
                entries: [
                    Entry(transactionID: "1", originalTransactionID: "1", purchase: day(1), expires: day(31)),
                    Entry(transactionID: "2", originalTransactionID: "1", purchase: day(31), expires: day(61)),
                    Entry(transactionID: "3", originalTransactionID: "1", purchase: day(61), expires: day(91)),
                ]),
        ],
        renewals: [Renewal(line: 3, originalTransactionID: "1", signed: day(65), autoRenewStatus: 0)],
        source: "day2.ndjson")

    @Test("a run on a base writes the tables of one run over both runs' inputs in order", arguments: [nil, 65_536])
    func chainEqualsOneRun(memoryBudget: Int?) throws {
        let (one, _) = try run(
            [(first, 0), (second, 1)], inputs: ["day1.ndjson", "day2.ndjson"], memoryBudget: memoryBudget)
        let (_, dir1) = try run([(first, 0)], inputs: ["day1.ndjson"], memoryBudget: memoryBudget)
        let (chained, dir2) = try run(
            [(second, 0)], inputs: ["day2.ndjson"], base: try state(dir1), memoryBudget: memoryBudget)
        #expect(chained.purchasesCSV == one.purchasesCSV)
        #expect(chained.subscriptionsCSV == one.subscriptionsCSV)
        let rows = chained.purchases
        // The tie on day 10 goes to the later run; the refund seen in the base stays known.
        #expect(rows.first { $0["transaction_id"] == "5" }?["product_id"] == "tie-second")
        #expect(rows.first { $0["transaction_id"] == "5" }?["source"] == "day2.ndjson")
        #expect(rows.first { $0["transaction_id"] == "1" }?["cancellation_date"] == ts(day(20)))
        #expect(rows.first { $0["transaction_id"] == "1" }?["occurrences"] == "3")
        #expect(rows.first { $0["transaction_id"] == "2" }?["source"] == "day2.ndjson")
        #expect(chained.subscriptions.first?["auto_renew_status"] == "0")
        let header = try state(dir2).header
        #expect(header.run == 2)
        #expect(header.inputs == ["day1.ndjson", "day2.ndjson"])
        #expect(header.horizon == day(70))
    }

    /// Merges the states kept in `dirs` as one chain (`mergeChains`, as `receiptflow merge` does); the tables.
    func merge(_ dirs: [String], inputs: [String], memoryBudget: Int? = nil) throws -> HistoryTables {
        let dir = temporaryDirectory("merge")
        let collector = HistoryCollector(directory: dir, inputs: inputs, resumable: false, memoryBudget: memoryBudget)
        collector.mergeChains(try dirs.map { try state($0) })
        let result = try collector.finish(asOf: nil, format: .csv, metadata: RunMetadata())
        collector.removeSpill()
        let p = try String(contentsOfFile: dir + "/purchases.csv", encoding: .isoLatin1)
        let s = try String(contentsOfFile: dir + "/subscriptions.csv", encoding: .isoLatin1)
        return HistoryTables(purchasesCSV: p, subscriptionsCSV: s, result: result)
    }

    @Test(
        "merged states are one run over their inputs: a tie on the creation date goes to the later run",
        arguments: [nil, 65_536])
    func mergeNumbersEveryRecencyAfterTheChainsBefore(memoryBudget: Int?) throws {
        var a = Entry(transactionID: "7", purchase: day(1))
        a.token = "token-a"
        var b = a
        b.token = "token-b"
        // The first run's receipt sits on a later line than the second's: only the input order tells them apart.
        let first = batch(
            [Receipt(line: 5, created: day(10), entries: [a], user: "alice", userField: true)], source: "a.ndjson")
        let second = batch(
            [Receipt(line: 1, created: day(10), entries: [b], user: "bob", userField: true)], source: "b.ndjson")
        let inputs = ["a.ndjson", "b.ndjson"]
        let (one, _) = try run([(first, 0), (second, 1)], inputs: inputs, memoryBudget: memoryBudget)
        let (_, dir1) = try run([(first, 0)], inputs: ["a.ndjson"], memoryBudget: memoryBudget)
        let (_, dir2) = try run([(second, 0)], inputs: ["b.ndjson"], memoryBudget: memoryBudget)
        let merged = try merge([dir1, dir2], inputs: inputs, memoryBudget: memoryBudget)
        #expect(merged.purchasesCSV == one.purchasesCSV)
        let p = try #require(merged.purchases.first)
        #expect(p["user_id"] == "bob")
        #expect(p["app_account_token"] == "token-b")
        #expect(p["multiple_user_ids"] == "true")
        #expect(p["source"] == "b.ndjson")
    }

    @Test("the as-of time of a run on a base defaults to the chain's horizon")
    func horizonSpansTheChain() throws {
        let late = batch([Receipt(line: 1, created: day(90), entries: [Entry(transactionID: "7")])])
        let early = batch([Receipt(line: 1, created: day(5), entries: [Entry(transactionID: "8")])])
        let (_, dir1) = try run([(late, 0)], inputs: ["a"])
        let (chained, _) = try run([(early, 0)], inputs: ["b"], base: try state(dir1))
        #expect(chained.result.asOf == day(90))
    }

    @Test("the state's header names run 1, its inputs and horizon; its bytes end with their SHA-256")
    func stateHeader() throws {
        let (_, dir) = try run([(first, 0)], inputs: ["day1.ndjson"])
        let s = try state(dir)
        #expect(s.header == HistoryStateHeader(run: 1, horizon: day(40), inputs: ["day1.ndjson"]))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: s.path))
        #expect(s.checksum == bytes.suffix(32).map { String(format: "%02x", $0) }.joined())
        #expect(bytes.prefix(8) == Data("RFHSTATE".utf8))
    }

    @Test("a state says whether its chain merged unverified records: from that run on, and through a merge")
    func unverifiedMarkFollowsTheChain() throws {
        let (_, plain) = try run([(first, 0)], inputs: ["day1.ndjson"])
        let (_, unverified) = try run([(first, 0)], inputs: ["day1.ndjson"], unverified: true)
        #expect(try state(plain).header.unverified == false)
        #expect(try state(unverified).header.unverified == true)
        let (_, onPlain) = try run([(second, 0)], inputs: ["day2.ndjson"], base: try state(plain))
        let (_, onUnverified) = try run([(second, 0)], inputs: ["day2.ndjson"], base: try state(unverified))
        #expect(try state(onPlain).header.unverified == false)
        #expect(try state(onUnverified).header.unverified == true)
        for (dirs, expected) in [([plain, onPlain], false), ([plain, unverified], true)] {
            let collector = HistoryCollector(
                directory: temporaryDirectory("merge"), inputs: [], resumable: false)
            collector.mergeChains(try dirs.map { try state($0) })
            #expect(collector.historyFromUnverifiedRecords == expected)
        }
    }

    @Test("a header that ends before the verification mark says verified; a mark other than 0 or 1 is refused")
    func verificationMarkIsOptionalAndChecked() throws {
        let header = HistoryStateHeader(run: 3, horizon: day(4), inputs: ["a", "b"], unverified: true)
        var w = SpillWriter()
        header.encode(into: &w)
        #expect(try HistoryStateHeader.decode(w.bytes, path: "s") == header)
        var older = header
        older.unverified = false
        #expect(try HistoryStateHeader.decode(Array(w.bytes.dropLast()), path: "s") == older)
        var odd = w.bytes
        odd[odd.count - 1] = 2
        #expect(throws: HistoryStateError.self) { try HistoryStateHeader.decode(odd, path: "s") }
    }

    func damaged(_ change: (inout [UInt8]) -> Void) throws -> HistoryStateError.Code? {
        let (_, dir) = try run([(first, 0)], inputs: ["day1.ndjson"])
        let path = dir + "/" + HistoryStateFormat.fileName
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        change(&bytes)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do throws(HistoryStateError) {
            _ = try HistoryStateFile.open(path)
            return nil
        } catch {
            #expect(error.message.contains(path))
            return error.code
        }
    }

    @Test("any flipped byte after the version fails the checksum")
    func flippedByte() throws {
        for at in [{ (_: Int) in 12 }, { _ in 20 }, { $0 / 2 }, { $0 - 40 }, { $0 - 1 }] {
            #expect(try damaged { b in b[at(b.count)] ^= 0x10 } == .checksumMismatch)
        }
    }

    @Test("another format version is refused as foreign; a cut or foreign file is refused")
    func foreignAndCut() throws {
        #expect(try damaged { $0[8] = UInt8(truncatingIfNeeded: HistoryStateFormat.version + 1) } == .foreignVersion)
        #expect(try damaged { $0.removeLast(20) } == .checksumMismatch)
        #expect(try damaged { $0[0] = UInt8(ascii: "X") } == .notState)
        #expect(try damaged { $0 = Array($0.prefix(5)) } == .notState)
        #expect(throws: HistoryStateError.self) { try HistoryStateFile.open(temporaryDirectory("none") + "/x") }
    }
}
