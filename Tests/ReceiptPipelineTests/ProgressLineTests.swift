import ReceiptPipeline
import Testing

@Suite struct ProgressLineTests {
    @Test func showsRecordsRatesPercentAndTimeLeftWhenTheSizeIsKnown() {
        var r = RunResult()
        r.counts.records = 5000
        r.counts.inputBytes = 50_000_000
        r.inputSize = 200_000_000
        let line = ProgressLine.text(r, seconds: 2, final: false)
        #expect(line.hasPrefix("\r5000 records, 2500 receipts/s, 25.0 MB/s, 25.0%, 6s left"))
        #expect(!line.hasSuffix("\n"))
    }

    @Test func omitsPercentWithoutAKnownSizeAndEndsTheFinalLine() {
        var r = RunResult()
        r.counts.records = 10
        r.counts.inputBytes = 1_000_000
        let line = ProgressLine.text(r, seconds: 1, final: true)
        #expect(line.hasPrefix("\r10 records, 10 receipts/s, 1.0 MB/s "))
        #expect(!line.contains("%"))
        #expect(line.hasSuffix("\n"))
        // Every line is as wide, so a short one covers a longer predecessor.
        #expect(line.count == ProgressLine.text(r, seconds: 1, final: false).count + 1)
    }

    @Test func aResumedRunCountsWhatEarlierAttemptsDid() {
        // 30,000 receipts committed before; the inputs skipped whole held 100 MB of the 200 MB. This attempt
        // read 50 MB (5,000 receipts) in 2 s: 150 MB done, 50 MB left at 25 MB/s.
        var r = RunResult()
        r.counts.records = 5000
        r.counts.inputBytes = 50_000_000
        r.inputSize = 200_000_000
        let already = ProgressLine.Base(records: 30_000, inputBytes: 100_000_000)
        let line = ProgressLine.text(r, seconds: 2, final: false, already: already)
        #expect(line.hasPrefix("\r35000 records, 2500 receipts/s, 25.0 MB/s, 75.0%, 2s left"))
        let last = ProgressLine.text(r, seconds: 2, final: true, already: already)
        #expect(last.hasPrefix("\r35000 records, 2500 receipts/s, 25.0 MB/s, 75.0% "))
    }

    @Test func aRunWithHistoryNumbersItsStepsAndShowsTheMergeAsTheSecond() {
        var r = RunResult()
        r.counts.records = 20_000
        r.counts.inputBytes = 200_000_000
        r.inputSize = 200_000_000
        r.hasHistory = true
        let reading = ProgressLine.text(r, seconds: 4, final: false)
        #expect(reading.hasPrefix("\r[1/2] 20000 records, 5000 receipts/s, 50.0 MB/s, 100.0%, 0s left"))
        r.phase = .history
        let merging = ProgressLine.text(r, seconds: 4, final: false, stepSeconds: 7.2)
        #expect(merging.hasPrefix("\r[2/2] merging the purchase history of 20000 records: 7s"))
        #expect(!merging.contains("%") && !merging.contains("left"))
        r.phase = .finishing
        let finishing = ProgressLine.text(r, seconds: 4, final: false, stepSeconds: 9)
        #expect(finishing.hasPrefix("\r[2/2] 20000 records, 5000 receipts/s, 50.0 MB/s, 100.0%, finishing the files"))
        // The final line keeps the records step's rates and says how long the rest took.
        let last = ProgressLine.text(r, seconds: 4, final: true, stepSeconds: 9)
        #expect(last.hasPrefix("\r20000 records, 5000 receipts/s, 50.0 MB/s, 100.0%; history and files 9s"))
        #expect(last.hasSuffix("\n"))
    }
}
