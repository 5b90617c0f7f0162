import ReceiptModel

/// Byte ranges of one X.509 certificate's parts, read without copies (RFC 5280 section 4.1).
public struct CertificateView: Sendable, Equatable {
    /// The TBSCertificate TLV (what the issuer signed).
    public var tbs: Range<Int>
    /// Contents octets of the serialNumber INTEGER.
    public var serial: Range<Int>
    /// The issuer Name TLV.
    public var issuer: Range<Int>
    /// The subject Name TLV.
    public var subject: Range<Int>
    /// notBefore and notAfter as epoch milliseconds.
    public var notBefore: Int64
    public var notAfter: Int64
    /// The SubjectPublicKeyInfo TLV.
    public var subjectPublicKeyInfo: Range<Int>
    /// Contents of the `[3]` extensions wrapper (the Extensions SEQUENCE TLV), when present.
    public var extensions: Range<Int>?

    /// Reads the certificate whose TLV is `tlv` within `buf`.
    public static func parse(_ buf: UnsafeRawBufferPointer, _ tlv: Range<Int>) throws(ReceiptError) -> CertificateView {
        let r = BERReader(buf)
        let cert = try r.expect(BERTag.sequence, at: tlv.lowerBound, limit: tlv.upperBound)
        let tbs = try r.firstChild(of: cert, depth: 0)
        guard tbs.identifier == BERTag.sequence else {
            throw ReceiptError(.malformedDER, at: tbs.start, "a certificate has no TBSCertificate")
        }
        var e = try r.firstChild(of: tbs, depth: 1)
        if e.identifier == BERTag.context0 {  // [0] EXPLICIT version
            guard let n = try r.next(after: e, in: tbs, depth: 1) else { throw truncated(e) }
            e = n
        }
        guard e.identifier == BERTag.integer else {
            throw ReceiptError(.malformedDER, at: e.start, "a certificate has no serial number")
        }
        let serial = e
        guard let sigAlg = try r.next(after: serial, in: tbs, depth: 1), sigAlg.identifier == BERTag.sequence,
            let issuer = try r.next(after: sigAlg, in: tbs, depth: 1), issuer.identifier == BERTag.sequence,
            let validity = try r.next(after: issuer, in: tbs, depth: 1), validity.identifier == BERTag.sequence,
            let subject = try r.next(after: validity, in: tbs, depth: 1), subject.identifier == BERTag.sequence,
            let spki = try r.next(after: subject, in: tbs, depth: 1), spki.identifier == BERTag.sequence
        else { throw ReceiptError(.malformedDER, at: tbs.start, "a certificate's TBSCertificate is malformed") }
        let nb = try r.firstChild(of: validity, depth: 2)
        guard let na = try r.next(after: nb, in: validity, depth: 2),
            let notBefore = time(r, nb), let notAfter = time(r, na)
        else { throw ReceiptError(.malformedDER, at: validity.start, "a certificate's validity is malformed") }
        var extensions: Range<Int>? = nil
        var x = spki
        while let n = try r.next(after: x, in: tbs, depth: 1) {
            if n.identifier == BERTag.context3 {
                let seq = try r.firstChild(of: n, depth: 2)
                extensions = seq.tlv
            }
            x = n
        }
        return CertificateView(
            tbs: tbs.tlv, serial: serial.content, issuer: issuer.tlv, subject: subject.tlv, notBefore: notBefore,
            notAfter: notAfter, subjectPublicKeyInfo: spki.tlv, extensions: extensions)
    }

    static func truncated(_ e: BERElement) -> ReceiptError {
        ReceiptError(.malformedDER, at: e.start, "a certificate is truncated")
    }

    static func time(_ r: BERReader, _ e: BERElement) -> Int64? {
        let s = UnsafeRawBufferPointer(rebasing: r.bytes[e.content])
        switch e.identifier {
        case BERTag.utcTime: return DateParser.parseCertificateTime(s, generalized: false)
        case BERTag.generalizedTime: return DateParser.parseCertificateTime(s, generalized: true)
        default: return nil
        }
    }
}
