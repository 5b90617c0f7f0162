import ReceiptDER
import ReceiptModel

extension ReceiptVerifier {
    /// Verifies the receipt that `parser` last parsed from `der`, at the receipt's own creation date.
    ///
    /// A receipt without a creation date (attribute 12) gives no time to judge certificate validity at, so it is
    /// rejected as `malformed_attribute` (21002) rather than judged at some other time. Everything else is as
    /// `verify(der:container:content:validationTime:)`.
    public func verify(_ der: UnsafeRawBufferPointer, parsedBy parser: ReceiptParser) -> VerifyOutcome {
        let container = parser.container
        guard let created = parser.fields.receiptCreationDate else {
            return VerifyOutcome(
                .malformedAttribute, .missingCreationDate, entry: nil, digest: container.digestAlgorithm, time: 0)
        }
        return parser.withContent(der) { content in
            verify(der: der, container: container, content: content, validationTime: created)
        }
    }
}
