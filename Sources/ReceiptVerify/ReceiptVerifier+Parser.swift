import ReceiptDER
import ReceiptModel

extension ReceiptVerifier {
    /// Verifies the receipt that `parser` last parsed from `der`, at `time` (by default the receipt's own creation
    /// date).
    ///
    /// A receipt without a creation date (attribute 12) gives no time to judge certificate validity at under
    /// `.receiptCreationDate`, so it is rejected as `malformed_attribute` (21002) rather than judged at some other
    /// time. Everything else is as `verify(der:container:content:at:creationDate:receiptDigest:)`.
    public func verify(
        _ der: UnsafeRawBufferPointer, parsedBy parser: ReceiptParser, at time: ValidationTime = .receiptCreationDate
    ) -> VerifyOutcome {
        let container = parser.container
        let created = parser.fields.receiptCreationDate
        return parser.withContent(der) { content in
            verify(der: der, container: container, content: content, at: time, creationDate: created)
        }
    }
}
