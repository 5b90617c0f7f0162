import ReceiptModel
import ReceiptPipeline
import Testing

@Suite struct ClosingLineTests {
    /// `records` rows, `valid` of them valid, `jws` of them JWS with `jwsValid` valid.
    static func counts(records: Int, valid: Int, jws: Int = 0, jwsValid: Int = 0, transactions: Int = 0) -> BatchCounts
    {
        var c = BatchCounts()
        c.records = records
        c.byStatus[ReceiptStatus.allCases.firstIndex(of: .valid)!] = valid
        c.byStatus[ReceiptStatus.allCases.firstIndex(of: .malformed)!] = records - valid
        c.jws = jws
        c.jwsValid = jwsValid
        c.transactions = transactions
        return c
    }

    @Test func aReceiptsOnlyRunCountsReceipts() {
        let line = ClosingLine.text(Self.counts(records: 18, valid: 16, transactions: 40), history: nil, out: "o")
        #expect(line == "18 receipts: 16 valid, 2 rejected; 40 transactions; written to o")
    }

    @Test func aJWSOnlyRunCountsJWS() {
        let c = Self.counts(records: 927, valid: 880, jws: 927, jwsValid: 880, transactions: 1)
        #expect(
            ClosingLine.text(c, history: nil, out: "o")
                == "927 JWS: 880 valid, 47 rejected; 1 transaction; written to o")
    }

    @Test func aMixedRunCountsReceiptsAndJWSApart() {
        let c = Self.counts(records: 3427, valid: 3255, jws: 927, jwsValid: 880, transactions: 9)
        #expect(
            ClosingLine.text(c, history: nil, out: "o")
                == "3427 records: 2500 receipts (2375 valid, 125 rejected) and 927 JWS (880 valid, 47 rejected); "
                + "9 transactions; written to o")
    }

    @Test func theHistoryGivesPurchasesSubscriptionsByStateAndTheAsOfTime() {
        let h = HistorySummary(
            asOf: 1_714_521_600_000, purchases: 1600, subscriptions: 180, spilledBytes: 0,
            subscriptionsByState: ["expired": 100, "active": 70, "unknown": 10])
        let line = ClosingLine.text(Self.counts(records: 1, valid: 1), history: h, out: "o")
        #expect(
            line
                == "1 receipt: 1 valid, 0 rejected; 0 transactions; 1600 purchases, 180 subscriptions (70 active, "
                + "100 expired, 10 unknown) as of 2024-05-01T00:00:00.000Z; written to o")
    }

    @Test func everyStateIsListedInOrderZerosIncludedAndAnUnknownOneAfter() {
        let h = HistorySummary(
            asOf: nil, purchases: 0, subscriptions: 3, spilledBytes: 0,
            subscriptionsByState: ["revoked": 1, "zz_new": 2])
        let rows = ClosingLine.byState(h)
        #expect(rows.map(\.state) == ClosingLine.subscriptionStates + ["zz_new"])
        #expect(rows.map(\.count) == [0, 0, 0, 1, 0, 0, 0, 2])
    }
}
