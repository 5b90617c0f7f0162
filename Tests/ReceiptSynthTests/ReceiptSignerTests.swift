import Foundation
import ReceiptDER
import ReceiptSynth
import Testing

@Suite struct ReceiptSignerTests {
    static let pki = SharedPKI.pki

    static func payload() -> [UInt8] {
        var b = PayloadBuilder()
        b.utf8(0, "Production")
        b.utf8(2, "com.example.signer")
        b.date(12, 1_600_000_000_000)
        return b.encode()
    }

    static let forms: [EncodingForm] = [.der, .ber, .berIndefinite(chunkSize: 7)]

    @Test(arguments: forms)
    func opensslAcceptsValidReceiptsInEveryShape(form: EncodingForm) throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var n = 0
        for digest in [ReceiptSigner.Digest.sha1, .sha256] {
            for label in ReceiptSigner.SignatureLabel.allCases {
                for time in [nil, Int64(1_600_000_000)] {
                    var o = ReceiptSigner.Options(digest: digest, signatureLabel: label, form: form)
                    o.signingTime = time
                    let der = ReceiptSigner.sign(
                        payload: Self.payload(), identity: Self.pki.identity(.valid), options: o)
                    let out = dir.appendingPathComponent("content\(n)")
                    let ok = try OpenSSLTool.cmsVerify(
                        der: der, rootPEM: Self.pki.root.pem, in: dir, name: "r\(n)", contentOut: out)
                    #expect(ok, "digest \(digest) label \(label) signingTime \(String(describing: time))")
                    #expect(try [UInt8](Data(contentsOf: out)) == Self.payload())
                    n += 1
                }
            }
        }
    }

    @Test(arguments: forms)
    func opensslRejectsBrokenSignaturesAndChains(form: EncodingForm) throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        var tampered = Self.payload()
        tampered[tampered.count - 3] ^= 0x01
        var cases: [(String, TestPKI.Variant, ReceiptSigner.Options)] = []
        var o = ReceiptSigner.Options(form: form)
        o.flipSignatureBit = true
        cases.append(("flipped signature", .valid, o))
        o = ReceiptSigner.Options(form: form)
        o.embeddedContent = tampered
        cases.append(("tampered payload", .valid, o))
        o = ReceiptSigner.Options(form: form)
        o.signerSerialMismatch = true
        cases.append(("unknown signer serial", .valid, o))
        for v in [TestPKI.Variant.foreignCA, .impostor, .intermediateWithoutCA, .expiredLeaf, .notYetValidLeaf] {
            cases.append((v.rawValue, v, ReceiptSigner.Options(form: form)))
        }
        for (i, (name, variant, options)) in cases.enumerated() {
            let der = ReceiptSigner.sign(
                payload: Self.payload(), identity: Self.pki.identity(variant), options: options)
            #expect(
                try !OpenSSLTool.cmsVerify(der: der, rootPEM: Self.pki.root.pem, in: dir, name: "bad\(i)"), "\(name)")
        }
    }

    @Test func berFormUsesIndefiniteLengthsAndChunkedContent() {
        let der = ReceiptSigner.sign(
            payload: Self.payload(), identity: Self.pki.identity(.valid), options: .init(form: .ber))
        // ContentInfo, [0], SignedData all open with indefinite lengths, as `openssl cms -sign -stream` writes.
        #expect(Array(der.prefix(2)) == [0x30, 0x80])
        #expect(Array(der[13..<17]) == [0xA0, 0x80, 0x30, 0x80])
        #expect(der.suffix(4).elementsEqual([0, 0, 0, 0]))
        #expect(der.windowContains([0x24, 0x80, 0x04]))
    }

    /// ReceiptDER's container walk sees each knob as intended.
    @Test func knobsShowUpInTheContainer() throws {
        let id = Self.pki.identity(.valid)
        var o = ReceiptSigner.Options(digest: .sha256)
        o.listedDigest = .sha1
        #expect(
            try decodeReceipt(ReceiptSigner.sign(payload: Self.payload(), identity: id, options: o)).0
                .digestAlgorithmMismatch)

        o = ReceiptSigner.Options(digest: .md5)
        #expect(
            try decodeReceipt(ReceiptSigner.sign(payload: Self.payload(), identity: id, options: o)).0.digestAlgorithm
                == .unsupported)

        o = ReceiptSigner.Options(digest: .sha1, signatureLabel: .sha256WithRSAEncryption, form: .ber)
        o.signingTime = 1_600_000_000
        let der = ReceiptSigner.sign(payload: Self.payload(), identity: id, options: o)
        let (c, _) = try decodeReceipt(der)
        #expect(c.digestAlgorithm == .sha1)
        #expect(c.signatureAlgorithm == .sha256WithRSA)
        #expect(c.encoding == .ber)
        let md = try #require(c.messageDigest)
        #expect(Array(der[md]) == ReceiptSigner.Digest.sha1.hash(Self.payload()))

        o = ReceiptSigner.Options()
        o.signerSerialMismatch = true
        let (c2, _) = try decodeReceipt(ReceiptSigner.sign(payload: Self.payload(), identity: id, options: o))
        #expect(c2.certificates.count == 3)
        #expect(
            Array(ReceiptSigner.sign(payload: Self.payload(), identity: id, options: o)[c2.signerSerial])
                != id.leaf.serial)
    }

    @Test func signingIsDeterministic() {
        let a = ReceiptSigner.sign(payload: Self.payload(), identity: Self.pki.identity(.valid))
        let b = ReceiptSigner.sign(payload: Self.payload(), identity: Self.pki.identity(.valid))
        #expect(a == b)
    }

    @Test func anUnsignedReceiptIsTheSignedOneWithZeroSignatureBytesAndOpenSSLRejectsIt() throws {
        var o = ReceiptSigner.Options(digest: .sha256)
        let signed = ReceiptSigner.sign(payload: Self.payload(), identity: Self.pki.identity(.valid), options: o)
        o.unsigned = true
        let unsigned = ReceiptSigner.sign(payload: Self.payload(), identity: Self.pki.identity(.valid), options: o)
        let size = Self.pki.identity(.valid).key.signatureSize
        #expect(size == 256)
        #expect(unsigned.count == signed.count)
        #expect(Array(unsigned.dropLast(size)) == Array(signed.dropLast(size)))
        #expect(unsigned.suffix(size).allSatisfy { $0 == 0 })
        #expect(!signed.suffix(size).allSatisfy { $0 == 0 })
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("content")
        #expect(
            try !OpenSSLTool.cmsVerify(der: unsigned, rootPEM: Self.pki.root.pem, in: dir, name: "u", contentOut: out))
        #expect(try OpenSSLTool.cmsVerify(der: signed, rootPEM: Self.pki.root.pem, in: dir, name: "s", contentOut: out))
    }
}

extension Array where Element == UInt8 {
    func windowContains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
