import Foundation
import Testing

@testable import ReceiptJWS

/// How a JWS payload's JSON is read: a key given twice counts once, with its last value, at every level (as the
/// NDJSON line scanner reads a line, docs/contract.md).
@Suite struct CompactJWSTests {
    @Test func aDuplicateKeyInAPayloadCountsWithItsLastValue() throws {
        let text = #"{"transactionId":"1","productId":"a","transactionId":"2","inner":{"k":1,"k":2}}"#
        let object = try PayloadJSON.parseObject(Array(text.utf8))
        let fields = JWSFields(object)
        #expect(fields.string("transactionId") == "2")
        #expect(fields.string("productId") == "a")
        #expect(fields.object("inner")?.int64("k") == 2)
        #expect(object.count == 3)
    }
}
