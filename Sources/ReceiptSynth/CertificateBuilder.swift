/// Builds and signs X.509 v3 certificates (SHA-256 with RSA, or ECDSA for the JWS chain) from parts, so every byte is under the program's
/// control and the same inputs give the same certificate.
public enum CertificateBuilder {
    /// Object identifiers used in the test PKI.
    public enum OIDs {
        /// Apple's WWDR intermediate marker, 1.2.840.113635.100.6.2.1.
        public static let wwdrIntermediate = "1.2.840.113635.100.6.2.1"
        /// Apple's receipt-signing leaf marker, 1.2.840.113635.100.6.11.1.
        public static let receiptSigning = "1.2.840.113635.100.6.11.1"
        /// Apple's certificate policy, 1.2.840.113635.100.5.1 (in the leaf's certificatePolicies).
        public static let appleCertificatePolicy = "1.2.840.113635.100.5.1"
        public static let sha256WithRSA = "1.2.840.113549.1.1.11"
        static let basicConstraints = "2.5.29.19"
        static let keyUsage = "2.5.29.15"
        static let certificatePolicies = "2.5.29.32"
        static let subjectKeyIdentifier = "2.5.29.14"
        static let authorityKeyIdentifier = "2.5.29.35"
    }

    /// A distinguished name: `C`, `O`, `OU`, `CN` in that order (the order Apple's names use).
    public struct Name: Sendable, Equatable {
        public var country = "US"
        public var organization: String
        public var organizationalUnit: String?
        public var commonName: String
        public init(organization: String, organizationalUnit: String? = nil, commonName: String) {
            self.organization = organization
            self.organizationalUnit = organizationalUnit
            self.commonName = commonName
        }

        /// The Name DER.
        public var der: [UInt8] {
            func rdn(_ oid: String, _ value: [UInt8]) -> [UInt8] { DER.set([DER.sequence([DER.oid(oid), value])]) }
            var rdns = [rdn("2.5.4.6", DER.printableString(country)), rdn("2.5.4.10", DER.utf8String(organization))]
            if let ou = organizationalUnit { rdns.append(rdn("2.5.4.11", DER.utf8String(ou))) }
            rdns.append(rdn("2.5.4.3", DER.utf8String(commonName)))
            return DER.sequence(rdns)
        }
    }

    /// What a certificate says about itself beyond names and keys.
    public struct Profile: Sendable {
        /// basicConstraints CA flag (critical). `nil` leaves the extension out.
        public var isCA: Bool?
        /// Extension OIDs written as non-critical extensions with a NULL value, the way Apple marks its
        /// intermediate and leaf (also listed in certificatePolicies).
        public var markerOIDs: [String] = []
        public var notBefore: Int64
        public var notAfter: Int64
        public init(isCA: Bool?, markerOIDs: [String] = [], notBefore: Int64, notAfter: Int64) {
            self.isCA = isCA
            self.markerOIDs = markerOIDs
            self.notBefore = notBefore
            self.notAfter = notAfter
        }
    }

    /// Makes a certificate for `subjectKey`, issued (signed) by `issuerKey` under `issuer`'s name.
    /// - Parameters:
    ///   - serial: a positive serial number, unique within the PKI.
    ///   - profile: validity (epoch seconds), CA flag and marker OIDs.
    public static func make(
        subject: Name, subjectKey: some CertificateSigningKey, issuer: Name, issuerKey: some CertificateSigningKey,
        serial: Int64, profile: Profile
    ) throws(SynthError) -> TestCertificate {
        let keyID = Array(Crypto.sha1(subjectKey.publicKeyInfo).prefix(20))
        let issuerKeyID = Array(Crypto.sha1(issuerKey.publicKeyInfo).prefix(20))
        var extensions: [[UInt8]] = []
        func ext(_ oid: String, critical: Bool, _ value: [UInt8]) {
            extensions.append(
                DER.sequence([DER.oid(oid)] + (critical ? [DER.boolean(true)] : []) + [DER.octetString(value)]))
        }
        if let ca = profile.isCA {
            ext(OIDs.basicConstraints, critical: true, DER.sequence(ca ? [DER.boolean(true)] : []))
            // keyCertSign + cRLSign for CAs, digitalSignature for leaves.
            ext(OIDs.keyUsage, critical: true, ca ? [0x03, 0x02, 0x01, 0x06] : [0x03, 0x02, 0x07, 0x80])
        }
        ext(OIDs.subjectKeyIdentifier, critical: false, DER.octetString(keyID))
        ext(OIDs.authorityKeyIdentifier, critical: false, DER.sequence([DER.tlv(0x80, issuerKeyID)]))
        if !profile.markerOIDs.isEmpty {
            let policies = profile.markerOIDs.map { DER.sequence([DER.oid($0)]) }
            ext(OIDs.certificatePolicies, critical: false, DER.sequence(policies))
        }
        for oid in profile.markerOIDs { ext(oid, critical: false, DER.null) }

        let sigAlg = issuerKey.certificateSignatureAlgorithm
        let tbs = DER.sequence([
            DER.context(0, DER.integer(2)),
            DER.integer(serial),
            sigAlg,
            issuer.der,
            DER.sequence([DER.time(epochSeconds: profile.notBefore), DER.time(epochSeconds: profile.notAfter)]),
            subject.der,
            subjectKey.publicKeyInfo,
            DER.context(3, DER.sequence(extensions)),
        ])
        let signature = issuerKey.signCertificate(tbs)
        return try TestCertificate(der: DER.sequence([tbs, sigAlg, DER.bitString(signature)]))
    }
}
