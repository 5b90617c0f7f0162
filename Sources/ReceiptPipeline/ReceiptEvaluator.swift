import ReceiptDER
import ReceiptModel
import ReceiptVerify

/// Receipt bytes in, a verdict out: parse, check what the bytes decide (the signature), then apply the run's
/// policies in order, starting with the trust policies, which judge the chain at the run's validation time (by
/// default the receipt's creation date). `export` (through `RecordProcessor`) and `inspect` both judge
/// receipts here.
///
/// `evaluate` is the whole path for one receipt: `parse`, then `judge` (verify, then the policies). `inspect` calls
/// the two steps itself, to show what was decoded before a parse error. One per worker thread (the verifier and
/// hasher hold OpenSSL contexts).
public final class ReceiptEvaluator {
    /// When certificates are judged valid.
    public let time: ValidationTime
    let verifier: ReceiptVerifier?
    let policies: [any RecordPolicy]
    let hasher = ContentHasher()

    /// - Parameters:
    ///   - verifier: nil for `--no-verify`: nothing is verified and `verified` stays false.
    ///   - policies: applied in order to every receipt that parsed; they must start with the trust policies
    ///     (`PipelineConfig.trustPolicies`), which judge the chain: a receipt whose chain fails them has its
    ///     signature left unchecked and is valid only if they reject it.
    ///   - time: when the certificates must be valid.
    public init(
        verifier: ReceiptVerifier?, policies: [any RecordPolicy], at time: ValidationTime = .receiptCreationDate
    ) {
        self.verifier = verifier
        self.policies = policies
        self.time = time
    }

    /// Receipt bytes to verdict, with `parser` (whose views then describe the receipt).
    ///
    /// - Parameters:
    ///   - receiptDigest: the SHA-256 of `der` when the caller computed it (`receipt_sha256`): a receipt whose
    ///     bytes were verified before in this run reuses that signature verdict.
    ///   - device: what the record says about its device, for `DeviceHashPolicy`.
    public func evaluate(
        _ der: UnsafeRawBufferPointer, with parser: ReceiptParser, receiptDigest: SHA256Digest? = nil,
        device: RecordDevice = .absent
    ) -> Verdict {
        judge(der, parsedBy: parser, parseError: parse(der, with: parser), receiptDigest: receiptDigest, device: device)
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

    /// The verdict on the receipt `parser` last parsed from `der`: verified (unless `--no-verify`), then the
    /// policies applied in order.
    ///
    /// - Parameters:
    ///   - parseError: what `parse` returned; a receipt that did not parse is rejected with it, unchecked.
    ///   - receiptDigest, device: as for `evaluate`.
    public func judge(
        _ der: UnsafeRawBufferPointer, parsedBy parser: ReceiptParser, parseError: ReceiptError?,
        receiptDigest: SHA256Digest? = nil, device: RecordDevice = .absent
    ) -> Verdict {
        if let e = parseError { return Verdict(rejected: e.code, Detail(e)) }
        return parser.withContent(der) { payload in
            var verdict = Verdict()
            let trust = verify(der, parser, payload, receiptDigest, &verdict)
            let input = PolicyInput(
                receipt: payload, fields: parser.fields, device: device, hasher: hasher, trust: trust)
            policies.judge(input, verifying: verifier != nil, signatureVerified: verdict.verified, &verdict)
            return verdict
        }
    }

    /// What the verifier decides from the receipt's bytes, into `verdict` (only the signer's fingerprint with
    /// `--no-verify`); returns the facts the trust policies at the head of `policies` judge.
    private func verify(
        _ der: UnsafeRawBufferPointer, _ parser: ReceiptParser, _ payload: UnsafeRawBufferPointer,
        _ receiptDigest: SHA256Digest?, _ verdict: inout Verdict
    ) -> TrustFacts? {
        guard let verifier else {
            verdict.signer = signerFingerprint(der, parser.container)
            return nil
        }
        let outcome = verifier.establish(
            der: der, container: parser.container, content: payload, at: time,
            creationDate: parser.fields.receiptCreationDate, receiptDigest: receiptDigest)
        verdict.signer = outcome.signerSHA256
        verdict.validationTime = outcome.validationTime
        if let code = outcome.error {
            verdict.reject(code, outcome.status, .string(outcome.detail(timeName: time.name) ?? code.rawValue))
        } else {
            verdict.verified = outcome.signatureVerified
        }
        return outcome.trust
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
