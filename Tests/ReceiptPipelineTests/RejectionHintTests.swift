import ReceiptModel
import ReceiptPipeline
import Testing

@Suite struct RejectionHintTests {
    /// `records` records of which `n` were rejected with `code` and the rest valid.
    static func counts(_ records: Int, _ n: Int, _ code: ErrorCode) -> BatchCounts {
        var c = BatchCounts()
        c.records = records
        c.byStatus[ReceiptStatus.allCases.firstIndex(of: .valid)!] = records - n
        c.byCode[ErrorCode.allCases.firstIndex(of: code)!] = n
        return c
    }

    @Test func untrustedChainsAgainstTheBuiltInRootsPointToTheTestRoot() throws {
        let hint = try #require(RejectionHint.of(Self.counts(2500, 2500, .untrustedChain), .init()))
        #expect(hint.code == .untrustedChain && hint.count == 2500)
        #expect(hint.text.hasPrefix("all 2500 records were rejected as untrusted_chain: "))
        #expect(hint.text.contains("--trust-anchor data/test-root.pem"))
    }

    @Test func untrustedChainsAgainstGivenAnchorsSayToCheckThem() throws {
        let hint = try #require(
            RejectionHint.of(Self.counts(10, 6, .untrustedChain), .init(trustAnchorsGiven: true)))
        #expect(hint.text.hasPrefix("6 of 10 records were rejected as untrusted_chain: "))
        #expect(hint.text.contains("leave out --trust-anchor"))
    }

    @Test func aMissingReceiptKeyNamesTheKeysLookedForAndField() throws {
        let defaults = try #require(RejectionHint.of(Self.counts(4, 4, .missingField), .init()))
        #expect(defaults.text.contains("'receipt-data', 'receipt_data' or 'receipt'"))
        #expect(defaults.text.contains("--field NAME"))
        let given = try #require(RejectionHint.of(Self.counts(4, 4, .missingField), .init(field: "blob")))
        #expect(given.text.contains("under 'blob'"))
    }

    @Test func linesThatAreNotJSONObjectsOrNotBase64PointToNDJSON() throws {
        #expect(try #require(RejectionHint.of(Self.counts(9, 9, .invalidJSON), .init())).text.contains("jq -c"))
        let base64 = try #require(RejectionHint.of(Self.counts(9, 9, .invalidBase64), .init())).text
        #expect(base64.contains("CSV") && base64.contains("jq -c"))
        let one = try #require(RejectionHint.of(Self.counts(1, 1, .invalidBase64), .init())).text
        #expect(one.hasPrefix("the only record was rejected as invalid_base64: "))
    }

    @Test func brokenCSVRowsPointToQuotingAndAMissingReceiptColumnToTheHeader() throws {
        let rows = try #require(RejectionHint.of(Self.counts(8, 5, .invalidCSV), .init())).text
        #expect(rows.hasPrefix("5 of 8 records were rejected as invalid_csv: "))
        #expect(rows.contains("RFC 4180"))
        let base64 = try #require(RejectionHint.of(Self.counts(3, 3, .invalidBase64), .init())).text
        #expect(base64.contains("header line naming its receipt column") && base64.contains("--field NAME"))
    }

    @Test func noHintWhenTheReasonCoversHalfOrLessOrHasNoLikelyCause() {
        #expect(RejectionHint.of(Self.counts(10, 5, .untrustedChain), .init()) == nil)
        #expect(RejectionHint.of(Self.counts(10, 10, .badSignature), .init()) == nil)
        #expect(RejectionHint.of(Self.counts(10, 10, .untrustedChain), .init(verify: false)) == nil)
        #expect(RejectionHint.of(BatchCounts(), .init()) == nil)
    }
}
