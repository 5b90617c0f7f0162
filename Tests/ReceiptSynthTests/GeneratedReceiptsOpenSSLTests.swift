import Foundation
import ReceiptSynth
import Testing

/// The `openssl` tool, an independent CMS implementation, judges a few hundred generated records.
@Suite struct GeneratedReceiptsOpenSSLTests {
    static let pki = SharedPKI.pki

    /// What `openssl cms -verify -purpose any` must say. It does not know Apple's marker OIDs, so the policy
    /// kinds pass there (receiptflow's verifier rejects them).
    static func opensslAccepts(_ kind: RecordKind) -> Bool? {
        switch kind {
        case .valid, .developerLeaf, .intermediateWithoutPolicy: return true
        case .tamperedPayload, .flippedSignature, .signerNotFound, .foreignCA, .impostorCA, .intermediateWithoutCA,
            .expiredLeaf, .notYetValidLeaf:
            return false
        default: return nil  // not a receipt
        }
    }

    @Test
    func opensslAcceptsGeneratedValidReceiptsAndRejectsBadOnes() throws {
        let dir = try OpenSSLTool.tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let factory = RecordFactory(pki: Self.pki, seed: 77, badFraction: 0.5)
        var checked: [String: Int] = [:]
        for i in 0..<400 {
            let r = factory.record(i)
            guard let accept = Self.opensslAccepts(r.kind) else { continue }
            let der = try #require(GeneratedLines.receiptBytes(r.line))
            let encoding = try GeneratedLines.truth(r)["encoding"] as! String
            let ok = try OpenSSLTool.cmsVerify(der: der, rootPEM: Self.pki.root.pem, in: dir, name: "r\(i)")
            #expect(ok == accept, "record \(i): \(r.kind.rawValue) (\(encoding))")
            checked["\(accept ? "accepted" : "rejected")-\(encoding)", default: 0] += 1
        }
        // Both verdicts were exercised in both encodings.
        for key in ["accepted-der", "accepted-ber", "rejected-der", "rejected-ber"] {
            #expect(checked[key, default: 0] > 0, "no \(key) records among \(checked)")
        }
    }
}
