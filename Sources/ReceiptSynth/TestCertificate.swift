/// One X.509 certificate of the test PKI: its DER and the parts a signer needs (issuer Name and serial for the
/// SignerInfo's issuerAndSerialNumber).
public struct TestCertificate: Sendable, Equatable {
    /// The certificate DER.
    public let der: [UInt8]
    /// The subject Name TLV.
    public let subject: [UInt8]
    /// The issuer Name TLV.
    public let issuer: [UInt8]
    /// Contents octets of the serial number INTEGER.
    public let serial: [UInt8]

    /// Reads the parts from a certificate DER (definite lengths, as certificates are).
    public init(der: [UInt8]) throws(SynthError) {
        // Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature }
        guard let cert = DERScan.element(der, at: 0), cert.end == der.count,
            let tbs = DERScan.element(der, at: cert.contentStart)
        else { throw SynthError("not a certificate DER") }
        var parts: [DERScan.Element] = []
        var at = tbs.contentStart
        while at < tbs.end, let e = DERScan.element(der, at: at), e.end <= tbs.end {
            parts.append(e)
            at = e.end
        }
        // TBSCertificate ::= SEQUENCE { [0] version, serial, signature, issuer, validity, subject, spki, ... }
        let base = parts.first?.tag == 0xA0 ? 1 : 0
        guard parts.count >= base + 6, parts[base].tag == DER.tagInteger else {
            throw SynthError("the certificate's TBS part is malformed")
        }
        self.der = der
        serial = Array(der[parts[base].contentStart..<parts[base].end])
        issuer = Array(der[parts[base + 2].start..<parts[base + 2].end])
        subject = Array(der[parts[base + 4].start..<parts[base + 4].end])
    }

    /// The certificate as a PEM `CERTIFICATE` block.
    public var pem: String { PEM.encode(der, label: "CERTIFICATE") }
}

/// A minimal definite-length TLV scanner for the program's own certificates.
enum DERScan {
    struct Element {
        var tag: UInt8
        var start: Int
        var contentStart: Int
        var end: Int
    }

    /// The TLV at `at`, or nil when it is not a well-formed definite-length TLV inside `bytes`.
    static func element(_ bytes: [UInt8], at: Int) -> Element? {
        guard at + 2 <= bytes.count else { return nil }
        let tag = bytes[at]
        var i = at + 1
        let first = Int(bytes[i])
        i += 1
        var length = first
        if first & 0x80 != 0 {
            let n = first & 0x7F
            guard n >= 1, n <= 4, i + n <= bytes.count else { return nil }
            length = 0
            for k in 0..<n { length = length << 8 | Int(bytes[i + k]) }
            i += n
        }
        guard i + length <= bytes.count else { return nil }
        return Element(tag: tag, start: at, contentStart: i, end: i + length)
    }
}
