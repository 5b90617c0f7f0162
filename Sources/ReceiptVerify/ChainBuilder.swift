import COpenSSL
import ReceiptDER
import ReceiptModel

/// The cache-miss path: decodes the certificates, verifies the chain to an anchor with OpenSSL and applies Apple's
/// policy. Runs once per distinct chain, so it may allocate and decode freely.
enum ChainBuilder {
    /// Extension OIDs that mark Apple's receipt signer and its WWDR intermediate (receipt-format.md section 1).
    static let receiptSigningOID = "1.2.840.113635.100.6.11.1"
    static let intermediateOID = "1.2.840.113635.100.6.2.1"

    /// What a chain's entry is built from: a receipt's certificates and signer identifier (ranges inside `der`, all
    /// checked by the caller to lie inside it) and the anchors to judge them against.
    struct Request {
        var id: UInt64
        var key: SHA256Digest
        var der: UnsafeRawBufferPointer
        var certificates: [Range<Int>]
        var issuer: Range<Int>
        var serial: Range<Int>
        var anchors: TrustAnchors
    }

    /// Makes a chain's entry: `build(_:)`, or a stand-in in tests.
    typealias Build = @Sendable (Request) -> ChainEntry

    static func build(_ request: Request) -> ChainEntry {
        let (id, chainKey, der, certificates) = (request.id, request.key, request.der, request.certificates)
        let (issuer, serial, anchors) = (request.issuer, request.serial, request.anchors)
        var bytes: [UInt8] = []
        var ends: [Int] = []
        for r in certificates {
            bytes += UnsafeRawBufferPointer(rebasing: der[r])
            ends.append(bytes.count)
        }
        let sidIssuer = [UInt8](UnsafeRawBufferPointer(rebasing: der[issuer]))
        let sidSerial = [UInt8](UnsafeRawBufferPointer(rebasing: der[serial]))
        func entry(
            signer: Int?, sha: String?, key: OpaquePointer?, _ verdict: ChainVerdict, _ windows: [CertificateWindow]
        ) -> ChainEntry {
            ChainEntry(
                id: id, key: chainKey, certificateBytes: bytes, certificateEnds: ends,
                sidIssuer: sidIssuer,
                sidSerial: sidSerial, signerIndex: signer, signerSHA256: sha, publicKey: key, verdict: verdict,
                windows: windows)
        }

        guard let signer = findSigner(der, certificates: certificates, issuer: issuer, serial: serial) else {
            return entry(signer: nil, sha: nil, key: nil, .untrusted("the signer is not among the certificates"), [])
        }
        let signerDER = UnsafeRawBufferPointer(rebasing: der[certificates[signer]])
        let sha = OpenSSL.sha256Hex(signerDER)
        guard let leaf = OpenSSL.certificate(der: signerDER) else {
            return entry(
                signer: signer, sha: sha, key: nil, .untrusted("the signing certificate cannot be decoded"), [])
        }
        defer { X509_free(leaf) }
        var key = X509_get_pubkey(leaf)  // a new reference, owned by the entry
        if let k = key, EVP_PKEY_get_base_id(k) != EVP_PKEY_RSA {
            EVP_PKEY_free(k)
            key = nil
        }
        ERR_clear_error()
        // Keys no Apple certificate has are refused before any signature by or over them is checked.
        let others = certificates.indices.filter { $0 != signer }.compactMap { i in
            OpenSSL.certificate(der: UnsafeRawBufferPointer(rebasing: der[certificates[i]]))
        }
        defer { others.forEach { X509_free($0) } }
        if let why = KeyShape.refusal(certificates: [leaf] + others) {
            if let k = key { EVP_PKEY_free(k) }
            return entry(signer: signer, sha: sha, key: nil, .refusedKey(why), window(leaf).map { [$0] } ?? [])
        }

        // Xcode receipts: the signer is the self-signed StoreKit certificate. Trusted only because the user
        // configured it; Apple's OIDs do not apply to it.
        if anchors.isAnchor(signerDER) {
            guard let w = window(leaf) else {
                return entry(signer: signer, sha: sha, key: key, .untrusted("the signer's validity is unreadable"), [])
            }
            return entry(signer: signer, sha: sha, key: key, .trusted, [w])
        }

        let (verdict, windows) = verifyChain(leaf: leaf, intermediates: others, anchors: anchors)
        let leafWindow = window(leaf).map { [$0] } ?? []
        return entry(signer: signer, sha: sha, key: key, verdict, windows.isEmpty ? leafWindow : windows)
    }

    /// The index of the certificate whose issuer and serial are byte-identical to the SignerInfo's.
    static func findSigner(
        _ der: UnsafeRawBufferPointer, certificates: [Range<Int>], issuer: Range<Int>, serial: Range<Int>
    ) -> Int? {
        let wantIssuer = UnsafeRawBufferPointer(rebasing: der[issuer])
        let wantSerial = UnsafeRawBufferPointer(rebasing: der[serial])
        for (i, r) in certificates.enumerated() {
            let view: CertificateView
            // An unreadable certificate signs nothing; the others may still hold the signer.
            do { view = try CertificateView.parse(der, r) } catch { continue }
            if UnsafeRawBufferPointer(rebasing: der[view.issuer]).elementsEqual(wantIssuer),
                UnsafeRawBufferPointer(rebasing: der[view.serial]).elementsEqual(wantSerial)
            {
                return i
            }
        }
        return nil
    }

    /// Runs `X509_verify_cert` without time checks (validity is checked per receipt against the cached windows),
    /// then Apple's policy. Returns the verdict and the windows of the built chain (empty when none was built).
    static func verifyChain(
        leaf: OpaquePointer, intermediates: [OpaquePointer], anchors: TrustAnchors
    ) -> (ChainVerdict, [CertificateWindow]) {
        guard let ctx = X509_STORE_CTX_new(), let untrusted = rf_sk_X509_new_null() else {
            fatalError("OpenSSL allocation failed")
        }
        defer {
            X509_STORE_CTX_free(ctx)
            rf_sk_X509_free(untrusted)  // the stack does not own the certificates
            ERR_clear_error()
        }
        for x in intermediates { _ = rf_sk_X509_push(untrusted, x) }
        guard X509_STORE_CTX_init(ctx, anchors.store, leaf, untrusted) == 1 else {
            return (.untrusted("OpenSSL could not start chain verification: \(OpenSSL.takeErrorText())"), [])
        }
        // NO_CHECK_TIME: the verdict must hold for any receipt date. PARTIAL_CHAIN: any configured anchor ends
        // the chain, even one that is not self-signed (an intermediate given as anchor).
        let flags = UInt(X509_V_FLAG_NO_CHECK_TIME) | UInt(X509_V_FLAG_PARTIAL_CHAIN)
        X509_VERIFY_PARAM_set_flags(X509_STORE_CTX_get0_param(ctx), flags)

        if X509_verify_cert(ctx) != 1 {
            let err = X509_STORE_CTX_get_error(ctx)
            let depth = X509_STORE_CTX_get_error_depth(ctx)
            let who = X509_STORE_CTX_get_current_cert(ctx).map { OpenSSL.subjectLine($0) } ?? "a certificate"
            let why = String(cString: X509_verify_cert_error_string(Int(err)))
            let text = "chain verification failed at depth \(depth) (\(who)): \(why)"
            return (isPolicyError(err) ? .policy(text) : .untrusted(text), [])
        }
        guard let chain = X509_STORE_CTX_get0_chain(ctx) else {
            return (.untrusted("OpenSSL verified no chain"), [])
        }
        let certs = (0..<rf_sk_X509_num(chain)).compactMap { rf_sk_X509_value(chain, $0) }
        var windows: [CertificateWindow] = []
        for x in certs {
            guard let w = window(x) else {
                return (.untrusted("the validity of \(OpenSSL.subjectLine(x)) is unreadable"), [])
            }
            windows.append(w)
        }
        return (policy(certs), windows)
    }

    /// Apple's policy: the leaf carries the receipt-signing OID; the certificate that issued it, and every
    /// certificate between it and the anchor, carry the WWDR intermediate OID.
    static func policy(_ chain: [OpaquePointer]) -> ChainVerdict {
        guard chain.count >= 2 else { return .policy("the chain has no intermediate certificate") }
        if !hasExtension(chain[0], receiptSigningOID) {
            return .policy(
                "the signing certificate \(OpenSSL.subjectLine(chain[0])) lacks the receipt-signing extension "
                    + "\(receiptSigningOID)")
        }
        for x in chain[1..<max(2, chain.count - 1)] where !hasExtension(x, intermediateOID) {
            return .policy(
                "the intermediate certificate \(OpenSSL.subjectLine(x)) lacks the Apple WWDR extension "
                    + "\(intermediateOID)")
        }
        return .trusted
    }

    static func hasExtension(_ x509: OpaquePointer, _ oid: String) -> Bool {
        guard let obj = OBJ_txt2obj(oid, 1) else { return false }
        defer { ASN1_OBJECT_free(obj) }
        return X509_get_ext_by_OBJ(x509, obj, -1) >= 0
    }

    /// Errors that mean "lacks CA rights" rather than "no trusted path" (contract.md: certificate_policy).
    static func isPolicyError(_ err: Int32) -> Bool {
        switch err {
        case X509_V_ERR_INVALID_CA, X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_KEYUSAGE_NO_CERTSIGN,
            X509_V_ERR_INVALID_PURPOSE, X509_V_ERR_INVALID_NON_CA:
            return true
        default:
            return false
        }
    }

    static func window(_ x509: OpaquePointer) -> CertificateWindow? {
        guard let nb = OpenSSL.epochMilliseconds(X509_get0_notBefore(x509)),
            let na = OpenSSL.epochMilliseconds(X509_get0_notAfter(x509))
        else { return nil }
        return CertificateWindow(notBefore: nb, notAfter: na, subject: OpenSSL.subjectLine(x509))
    }
}
