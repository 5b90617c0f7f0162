import ReceiptModel

// MARK: - PKCS #7 SignedData (RFC 2315 / RFC 5652), DER or BER

extension ReceiptParser {
    /// Walks ContentInfo -> SignedData and records where every part is. Accepts indefinite lengths and a
    /// constructed OCTET STRING content (Xcode receipts), which is concatenated into the scratch buffer.
    func parseContainer(_ der: UnsafeRawBufferPointer) throws(ReceiptError) {
        guard der.count <= limits.maxSize else {
            throw ReceiptError(.limitExceeded, "the receipt is larger than the size limit")
        }
        guard der.count > 0 else { throw ReceiptError(.malformedDER, at: 0, "the receipt is empty") }
        var r = BERReader(der, limits: limits)
        if fastPaths {
            indefiniteEnds.removeAll()
            r.indefiniteEnds = indefiniteEnds
        }
        let contentInfo = try r.expect(BERTag.sequence, at: 0, limit: der.count)
        guard contentInfo.end == der.count else {
            throw ReceiptError(.malformedDER, at: contentInfo.end, "there are bytes after the receipt container")
        }
        var ber = contentInfo.indefinite
        let contentType = try r.firstChild(of: contentInfo, depth: 0)
        guard contentType.identifier == BERTag.oid, r.contentEquals(contentType, OID.Words.signedData) else {
            throw ReceiptError(.malformedDER, at: contentType.start, "the container is not PKCS #7 signedData")
        }
        guard let explicit0 = try r.next(after: contentType, in: contentInfo, depth: 0),
            explicit0.identifier == BERTag.context0
        else { throw ReceiptError(.malformedDER, at: contentType.end, "the signedData content is missing") }
        let signedData = try r.firstChild(of: explicit0, depth: 1)
        guard signedData.identifier == BERTag.sequence else {
            throw ReceiptError(.malformedDER, at: signedData.start, "signedData is not a SEQUENCE")
        }
        ber = ber || explicit0.indefinite || signedData.indefinite
        let d = 2  // depth of signedData's children

        // version INTEGER
        let version = try r.firstChild(of: signedData, depth: d)
        guard version.identifier == BERTag.integer else {
            throw ReceiptError(.malformedDER, at: version.start, "signedData has no version")
        }
        // digestAlgorithms SET OF AlgorithmIdentifier
        guard let digestAlgorithms = try r.next(after: version, in: signedData, depth: d),
            digestAlgorithms.identifier == BERTag.set
        else { throw ReceiptError(.malformedDER, at: version.end, "signedData has no digestAlgorithms") }
        var listed: (sha1: Bool, sha256: Bool, other: Bool) = (false, false, false)
        try r.forEachChild(of: digestAlgorithms, depth: d + 1) { (alg) throws(ReceiptError) in
            switch try digestAlgorithm(r, alg, depth: d + 2) {
            case .sha1: listed.sha1 = true
            case .sha256: listed.sha256 = true
            case .unsupported: listed.other = true
            }
        }
        // encapContentInfo SEQUENCE { eContentType, [0] EXPLICIT eContent }
        guard let encap = try r.next(after: digestAlgorithms, in: signedData, depth: d),
            encap.identifier == BERTag.sequence
        else { throw ReceiptError(.malformedDER, at: digestAlgorithms.end, "signedData has no content info") }
        ber = ber || encap.indefinite
        try parseEncapsulatedContent(r, encap, depth: d + 1, ber: &ber)

        // certificates [0] IMPLICIT, crls [1] IMPLICIT (both optional), then signerInfos SET
        guard var e = try r.next(after: encap, in: signedData, depth: d) else {
            throw ReceiptError(.malformedDER, at: encap.end, "signedData has no signerInfos")
        }
        if e.identifier == BERTag.context0 {
            ber = ber || e.indefinite
            try r.forEachChild(of: e, depth: d + 1) { (cert) throws(ReceiptError) in
                guard cert.identifier == BERTag.sequence else { return }  // other CertificateChoices are not used
                guard container.certificates.count < limits.maxCertificates else {
                    throw ReceiptError(.limitExceeded, at: cert.start, "the receipt embeds too many certificates")
                }
                container.certificates.append(cert.tlv)
            }
            guard let n = try r.next(after: e, in: signedData, depth: d) else {
                throw ReceiptError(.malformedDER, at: e.end, "signedData has no signerInfos")
            }
            e = n
        }
        if e.identifier == BERTag.context1 {
            guard let n = try r.next(after: e, in: signedData, depth: d) else {
                throw ReceiptError(.malformedDER, at: e.end, "signedData has no signerInfos")
            }
            e = n
        }
        guard e.identifier == BERTag.set else {
            throw ReceiptError(.malformedDER, at: e.start, "signedData has no signerInfos")
        }
        ber = ber || e.indefinite
        guard e.contentStart < e.contentEnd else {
            throw ReceiptError(.malformedDER, at: e.start, "the receipt has no signer")
        }
        let signerInfo = try r.firstChild(of: e, depth: d + 1)
        try parseSignerInfo(r, signerInfo, depth: d + 2)
        container.encoding = ber ? .ber : .der
        switch container.digestAlgorithm {
        case .sha1: container.digestAlgorithmMismatch = !listed.sha1
        case .sha256: container.digestAlgorithmMismatch = !listed.sha256
        case .unsupported: container.digestAlgorithmMismatch = false
        }
    }

    /// Reads an AlgorithmIdentifier SEQUENCE as a digest algorithm.
    func digestAlgorithm(_ r: BERReader, _ alg: BERElement, depth: Int) throws(ReceiptError) -> DigestAlgorithm {
        guard alg.identifier == BERTag.sequence else {
            throw ReceiptError(.malformedDER, at: alg.start, "an algorithm identifier is not a SEQUENCE")
        }
        let oid = try r.firstChild(of: alg, depth: depth)
        guard oid.identifier == BERTag.oid else {
            throw ReceiptError(.malformedDER, at: oid.start, "an algorithm identifier has no OID")
        }
        if r.contentEquals(oid, OID.Words.sha1) { return .sha1 }
        if r.contentEquals(oid, OID.Words.sha256) { return .sha256 }
        return .unsupported
    }

    func parseEncapsulatedContent(
        _ r: BERReader, _ encap: BERElement, depth: Int, ber: inout Bool
    ) throws(ReceiptError) {
        let type = try r.firstChild(of: encap, depth: depth)
        guard type.identifier == BERTag.oid, r.contentEquals(type, OID.Words.data) else {
            throw ReceiptError(.malformedDER, at: type.start, "the signed content type is not data")
        }
        guard let explicit0 = try r.next(after: type, in: encap, depth: depth),
            explicit0.identifier == BERTag.context0
        else { throw ReceiptError(.malformedDER, at: type.end, "the receipt has no signed content") }
        ber = ber || explicit0.indefinite
        let octets = try r.firstChild(of: explicit0, depth: depth + 1)
        switch octets.identifier {
        case BERTag.octetString:
            container.content = octets.content
            container.contentInScratch = false
        case BERTag.constructedOctetString:
            ber = true
            scratchCount = 0
            try appendChunks(r, octets, depth: depth + 2)
            container.content = 0..<scratchCount
            container.contentInScratch = true
        default:
            throw ReceiptError(.malformedDER, at: octets.start, "the signed content is not an OCTET STRING")
        }
    }

    /// Concatenates the primitive chunks of a constructed OCTET STRING (which may nest) into scratch.
    func appendChunks(_ r: BERReader, _ e: BERElement, depth: Int) throws(ReceiptError) {
        try r.forEachChild(of: e, depth: depth) { (chunk) throws(ReceiptError) in
            switch chunk.identifier {
            case BERTag.octetString:
                try appendScratch(UnsafeRawBufferPointer(rebasing: r.bytes[chunk.content]))
            case BERTag.constructedOctetString:
                try appendChunks(r, chunk, depth: depth + 1)
            default:
                throw ReceiptError(.malformedDER, at: chunk.start, "a content chunk is not an OCTET STRING")
            }
        }
    }

    func parseSignerInfo(_ r: BERReader, _ si: BERElement, depth: Int) throws(ReceiptError) {
        guard si.identifier == BERTag.sequence else {
            throw ReceiptError(.malformedDER, at: si.start, "a signerInfo is not a SEQUENCE")
        }
        let version = try r.firstChild(of: si, depth: depth)
        guard version.identifier == BERTag.integer else {
            throw ReceiptError(.malformedDER, at: version.start, "the signerInfo has no version")
        }
        guard let sid = try r.next(after: version, in: si, depth: depth) else {
            throw ReceiptError(.malformedDER, at: version.end, "the signerInfo names no signer")
        }
        guard sid.identifier == BERTag.sequence else {
            // [0] subjectKeyIdentifier: receipts never use it, and matching it would need every certificate decoded.
            throw ReceiptError(
                .signerNotFound, at: sid.start, "the signer is named by key identifier, not issuer and serial")
        }
        let issuer = try r.firstChild(of: sid, depth: depth + 1)
        guard issuer.identifier == BERTag.sequence,
            let serial = try r.next(after: issuer, in: sid, depth: depth + 1), serial.identifier == BERTag.integer
        else { throw ReceiptError(.malformedDER, at: sid.start, "the signer's issuer and serial are malformed") }
        container.signerIssuer = issuer.tlv
        container.signerSerial = serial.content
        guard let digestAlg = try r.next(after: sid, in: si, depth: depth) else {
            throw ReceiptError(.malformedDER, at: sid.end, "the signerInfo has no digest algorithm")
        }
        container.digestAlgorithm = try digestAlgorithm(r, digestAlg, depth: depth + 1)
        guard var e = try r.next(after: digestAlg, in: si, depth: depth) else {
            throw ReceiptError(.malformedDER, at: digestAlg.end, "the signerInfo has no signature algorithm")
        }
        if e.identifier == BERTag.context0 {
            container.signedAttributes = e.tlv
            try findMessageDigest(r, e, depth: depth + 1)
            guard let n = try r.next(after: e, in: si, depth: depth) else {
                throw ReceiptError(.malformedDER, at: e.end, "the signerInfo has no signature algorithm")
            }
            e = n
        }
        guard e.identifier == BERTag.sequence else {
            throw ReceiptError(.malformedDER, at: e.start, "the signature algorithm is malformed")
        }
        let sigOID = try r.firstChild(of: e, depth: depth + 1)
        guard sigOID.identifier == BERTag.oid else {
            throw ReceiptError(.malformedDER, at: sigOID.start, "the signature algorithm has no OID")
        }
        if r.contentEquals(sigOID, OID.Words.rsaEncryption) {
            container.signatureAlgorithm = .rsaEncryption
        } else if r.contentEquals(sigOID, OID.Words.sha256WithRSA) {
            container.signatureAlgorithm = .sha256WithRSA
        } else if r.contentEquals(sigOID, OID.Words.sha1WithRSA) {
            container.signatureAlgorithm = .sha1WithRSA
        } else {
            container.signatureAlgorithm = .unsupported
        }
        guard let sig = try r.next(after: e, in: si, depth: depth), sig.identifier == BERTag.octetString else {
            throw ReceiptError(.malformedDER, at: e.end, "the signerInfo has no signature")
        }
        container.signature = sig.content
    }

    /// Finds the messageDigest attribute among the signed attributes.
    func findMessageDigest(_ r: BERReader, _ attrs: BERElement, depth: Int) throws(ReceiptError) {
        try r.forEachChild(of: attrs, depth: depth) { (attr) throws(ReceiptError) in
            guard attr.identifier == BERTag.sequence else {
                throw ReceiptError(.malformedDER, at: attr.start, "a signed attribute is not a SEQUENCE")
            }
            let type = try r.firstChild(of: attr, depth: depth + 1)
            guard type.identifier == BERTag.oid, r.contentEquals(type, OID.Words.messageDigest) else { return }
            guard let values = try r.next(after: type, in: attr, depth: depth + 1), values.identifier == BERTag.set
            else { throw ReceiptError(.malformedDER, at: type.end, "the messageDigest attribute has no value") }
            let value = try r.firstChild(of: values, depth: depth + 2)
            guard value.identifier == BERTag.octetString else {
                throw ReceiptError(.malformedDER, at: value.start, "the messageDigest is not an OCTET STRING")
            }
            container.messageDigest = value.content
        }
    }
}
