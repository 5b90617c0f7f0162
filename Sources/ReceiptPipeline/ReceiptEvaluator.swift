import ReceiptDER
import ReceiptModel
import ReceiptVerify

/// Receipt bytes in, a verdict out: parse, verify at the run's validation time (by default the receipt's creation
/// date), then apply the run's policies in order. `export` (through `RecordProcessor`) and `inspect` both judge
/// receipts here.
///
/// Parsing and judging are two steps so that a caller holding two parsed receipts can digest their signed contents
/// together (`signedContent`, `ContentHasher.digests`) before judging either; `evaluate` does both for one receipt.
/// One per worker thread (the verifier and hasher hold scratch); judging a receipt does not allocate unless it is
/// rejected by the verifier (whose detail is a sentence built on failure).
public final class ReceiptEvaluator {
    /// When certificates are judged valid.
    public let time: ValidationTime
    let verifier: ReceiptVerifier?
    let policies: [any RecordPolicy]
    let hasher = ContentHasher()

    /// - Parameters:
    ///   - verifier: nil for `--no-verify`: nothing is verified and `verified` stays false.
    ///   - policies: applied in order to every receipt that parsed.
    ///   - time: when the certificates must be valid.
    public init(
        verifier: ReceiptVerifier?, policies: [any RecordPolicy], at time: ValidationTime = .receiptCreationDate
    ) {
        self.verifier = verifier
        self.policies = policies
        self.time = time
    }

    /// Receipt bytes to verdict, with `parser` (whose views then describe the receipt).
    public func evaluate(
        _ der: UnsafeRawBufferPointer, with parser: ReceiptParser, device: RecordDevice = .absent
    ) -> Verdict {
        judge(der, parsedBy: parser, parseError: parse(der, with: parser), device: device)
    }

    /// Parses `der` with `parser`; the error, when parsing failed (the parser keeps what it decoded before it).
    public func parse(_ der: UnsafeRawBufferPointer, with parser: ReceiptParser) -> ReceiptError? {
        do throws(ReceiptError) {
            try parser.parse(der)
            return nil
        } catch {
            return error
        }
    }

    /// The content a parsed receipt's signature covers the digest of, and the digest's algorithm: nil when not
    /// verifying, or when the receipt names another algorithm (the verifier then decides alone). The content lies
    /// in `der` or in the parser's scratch, both unchanged until the parser's next receipt.
    public func signedContent(
        _ der: UnsafeRawBufferPointer, parsedBy parser: ReceiptParser
    ) -> (content: UnsafeRawBufferPointer, algorithm: DigestAlgorithm)? {
        guard verifier != nil else { return nil }
        let algorithm = parser.container.digestAlgorithm
        guard algorithm != .unsupported else { return nil }
        return (parser.withContent(der) { $0 }, algorithm)
    }

    /// The verdict on the receipt `parser` last parsed from `der`.
    ///
    /// - Parameters:
    ///   - parseError: what `parse` returned; a receipt that did not parse is rejected with it, unchecked.
    ///   - contentDigest: the digest of the signed content when computed already (`signedContent`).
    ///   - device: what the record says about its device, for `DeviceHashPolicy`.
    public func judge(
        _ der: UnsafeRawBufferPointer, parsedBy parser: ReceiptParser, parseError: ReceiptError?,
        contentDigest: ContentDigest? = nil, device: RecordDevice = .absent
    ) -> Verdict {
        if let e = parseError { return Verdict(rejected: e.code, Detail(e)) }
        return parser.withContent(der) { payload in
            var verdict = Verdict()
            let fields = parser.fields
            if let verifier {
                let outcome = verifier.verify(
                    der: der, container: parser.container, content: payload, at: time,
                    creationDate: fields.receiptCreationDate, contentDigest: contentDigest)
                verdict.signer = outcome.signerSHA256
                verdict.validationTime = outcome.validationTime
                if let code = outcome.error {
                    verdict.reject(code, outcome.status, .string(outcome.detail(timeName: time.name) ?? code.rawValue))
                } else {
                    verdict.verified = true
                }
            } else {
                verdict.signer = signerFingerprint(der, parser.container)
            }
            policies.apply(to: PolicyInput(receipt: payload, fields: fields, device: device), &verdict)
            return verdict
        }
    }

    /// With `--no-verify`: the hex SHA-256 of the embedded certificate the SignerInfo names, found by issuer and
    /// serial number, without checking anything.
    private func signerFingerprint(_ der: UnsafeRawBufferPointer, _ c: SignedDataView) -> String? {
        guard c.signerSerial.upperBound <= der.count, c.signerIssuer.upperBound <= der.count else { return nil }
        let serial = der[c.signerSerial]
        let issuer = der[c.signerIssuer]
        for tlv in c.certificates where tlv.upperBound <= der.count {
            guard let cert = try? CertificateView.parse(der, tlv) else { continue }
            if der[cert.serial].elementsEqual(serial) && der[cert.issuer].elementsEqual(issuer) {
                return hasher.sha256(UnsafeRawBufferPointer(rebasing: der[tlv])).hex
            }
        }
        return nil
    }
}
