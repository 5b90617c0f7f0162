import Foundation
import ReceiptSynth
import ReceiptTestSupport
import Testing

@testable import ReceiptVerify

/// Loading `--trust-anchor` files: DER and PEM, fingerprints, Apple recognition, and errors that say what to do.
struct TrustAnchorsTests {
    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        // A folder per file: tests run in parallel, and two of them may write a file of the same name.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "receiptflow-anchors-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    @Test
    func recognisesApplesRootByFingerprint() throws {
        let anchors = try TrustAnchors(paths: [TestAnchors.applePath])
        #expect(anchors.anchors.count == 1)
        // The fingerprint published in contract.md, upper case there.
        #expect(
            anchors.anchors[0].sha256.uppercased() == "B0B1730ECBC7FF4505142C49F1295E6EDA6BCAED7E2C68C5BE91B5A11001F024"
        )
        #expect(anchors.anchors[0].isApple)
        #expect(anchors.includesApple)
        #expect(TrustAnchors.notice(for: anchors.anchors[0]) == nil)
        #expect(anchors.notices.isEmpty)
    }

    @Test
    func storeKitCertificateGetsANotice() throws {
        let anchors = try TrustAnchors(paths: [TestAnchors.applePath, TestAnchors.storeKitPath])
        #expect(anchors.anchors.map(\.isApple) == [true, false])
        #expect(anchors.notices.count == 1)
        let notice = try #require(anchors.notices.first)
        #expect(notice.contains(TestAnchors.storeKitPath))
        #expect(notice.contains("not Apple Inc. Root"))
        #expect(!notice.contains("\n"))
    }

    @Test func loadsDERAndPEMFilesIncludingSeveralCertificatesInOnePEM() throws {
        let root = TestCA.pki.root
        let foreign = try #require(TestCA.pki.certificate("foreign-root"))
        let derPath = try Self.temporaryFile("root.der", root.der)
        let pemPath = try Self.temporaryFile("two.pem", Array((root.pem + "\n" + foreign.pem).utf8))
        let fromDER = try TrustAnchors(paths: [derPath])
        let fromPEM = try TrustAnchors(paths: [pemPath])
        #expect(fromDER.anchors.count == 1)
        #expect(fromPEM.anchors.count == 2)
        #expect(fromPEM.anchors[0].sha256 == fromDER.anchors[0].sha256)
        #expect(fromPEM.anchors.allSatisfy { $0.source == pemPath })
        #expect(!fromDER.includesApple)
        // A receipt under either root in the PEM verifies.
        let verifier = ReceiptVerifier(cache: ChainCache(anchors: fromPEM))
        #expect(try TestCA.receipt(.valid).verify(with: verifier).verified)
        #expect(try TestCA.receipt(.foreignCA).verify(with: verifier).verified)
    }

    @Test func fingerprintIsTheSHA256OfTheCertificateDER() throws {
        let anchors = try TestCA.anchors()
        let hasher = ContentHasher()
        let expected = TestCA.pki.root.der.withUnsafeBytes { hasher.sha256($0).hex }
        #expect(anchors.anchors[0].sha256 == expected)
    }

    @Test func unreadableFileIsAnErrorNamingThePath() {
        let path = "/nonexistent/receiptflow/AppleIncRootCertificate.cer"
        #expect {
            try TrustAnchors(paths: [path])
        } throws: { error in
            guard let e = error as? TrustAnchorError, case .unreadable(let p, _) = e else { return false }
            return p == path && e.message.contains(path) && e.message.contains("Check the path")
        }
    }

    @Test func fileWithoutCertificateIsAnError() throws {
        let path = try Self.temporaryFile("junk.cer", Array("this is not a certificate".utf8))
        #expect(throws: TrustAnchorError.notACertificate(path: path)) { try TrustAnchors(paths: [path]) }
        // An empty block is a damaged one: refused naming it.
        let pem = try Self.temporaryFile(
            "empty.pem", Array("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n".utf8))
        #expect {
            try TrustAnchors(paths: [pem])
        } throws: { error in
            guard case .badPEMBlock(pem, 1, 1, _)? = error as? TrustAnchorError else { return false }
            return true
        }
        #expect(TrustAnchorError.notACertificate(path: path).message.contains("AppleIncRootCertificate.cer"))
    }

    /// The block number and line of the refusal of `text`, with its message; nil when it loads.
    static func refusal(_ name: String, _ text: String) throws -> (block: Int, line: Int, message: String)? {
        let path = try Self.temporaryFile(name, Array(text.utf8))
        do {
            _ = try TrustAnchors(paths: [path])
            return nil
        } catch {
            guard case .badPEMBlock(let p, let block, let line, _) = error, p == path else {
                Issue.record("\(name): \(error)")
                return nil
            }
            return (block, line, error.message)
        }
    }

    @Test func aBundleWithADamagedOrForeignBlockIsRefusedNamingTheBlock() throws {
        let root = TestCA.pki.root.pem
        let foreign = try #require(TestCA.pki.certificate("foreign-root")).pem
        let rootLines = root.split(separator: "\n").count
        // The second certificate's base64 damaged in the middle of the block.
        var damaged = Array(foreign.split(separator: "\n", omittingEmptySubsequences: false).map(String.init))
        damaged[3] = String(damaged[3].prefix(20)) + "!!!!" + String(damaged[3].dropFirst(24))
        let cases: [(String, String, Int, Int, String)] = [
            ("damaged.pem", root + damaged.joined(separator: "\n"), 2, rootLines + 1, "not a readable certificate"),
            // Cut short: the DER inside is not a whole certificate.
            (
                "short.pem", root + "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n", 2,
                rootLines + 1, "not a readable certificate"
            ),
            (
                "key.pem", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n" + root,
                1, 1, "PRIVATE KEY"
            ),
            (
                "unended.pem", root + "-----BEGIN CERTIFICATE-----\nMIIB\n", 2, rootLines + 1,
                "no -----END CERTIFICATE-----"
            ),
            (
                "nested.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n" + root, 1, 1, "no -----END CERTIFICATE-----"
            ),
        ]
        for (name, text, block, line, reason) in cases {
            let r = try #require(try Self.refusal(name, text), "\(name) was accepted")
            #expect(r.block == block && r.line == line, "\(name): block \(r.block) line \(r.line)")
            #expect(r.message.contains("PEM block \(block) (line \(line))"), "\(r.message)")
            #expect(r.message.contains(reason), "\(r.message)")
        }
    }

    @Test func textBetweenBlocksAndCRLFLineEndsAreFine() throws {
        let root = TestCA.pki.root.pem
        let foreign = try #require(TestCA.pki.certificate("foreign-root")).pem
        let text =
            "subject=CN = Test Root\n" + root + "\n# a comment\n" + foreign.replacingOccurrences(of: "\n", with: "\r\n")
        #expect(try Self.refusal("comments.pem", text) == nil)
        let path = try Self.temporaryFile("comments.pem", Array(text.utf8))
        #expect(try TrustAnchors(paths: [path]).anchors.count == 2)
    }

    @Test func derWithTrailingBytesIsNotACertificate() throws {
        let path = try Self.temporaryFile("trailing.der", TestCA.pki.root.der + [0, 0])
        #expect(throws: TrustAnchorError.notACertificate(path: path)) { try TrustAnchors(paths: [path]) }
    }

    @Test func noAnchorIsAUsageErrorSayingWhereApplesRootIsPublished() {
        #expect(throws: TrustAnchorError.noAnchor) { try TrustAnchors(paths: []) }
        let message = TrustAnchorError.noAnchor.message
        #expect(message == TrustAnchors.missingAnchorUsage)
        #expect(message.contains("https://www.apple.com/certificateauthority/"))
        #expect(message.contains("AppleIncRootCertificate.cer"))
        #expect(message.contains("--trust-anchor"))
    }

    @Test func applesBuiltInRootsAreTheCommittedCertificatesPinnedByFingerprint() throws {
        let anchors = try TrustAnchors.apple()
        #expect(
            anchors.anchors.map(\.sha256) == [
                "b0b1730ecbc7ff4505142c49f1295e6eda6bcaed7e2c68c5be91b5a11001f024",
                "63343abfb89a6a03ebb57e9b3f5fa7be7c4f5c756f3017b3a8c488c3653e9179",
            ])
        #expect(anchors.anchors.allSatisfy { $0.isApple })
        #expect(anchors.notice == nil)
        let files = ["AppleIncRootCertificate.cer", "AppleRootCA-G3.cer"].map {
            Fixtures.certsDir.appendingPathComponent($0)
        }
        #expect(try anchors.anchorDER == files.map { try Fixtures.bytes($0) })
        #expect(anchors.anchors[1].subject.contains("Apple Root CA - G3"))
    }

    @Test func noPathsMeanTheBuiltInRootsAndPathsReplaceThem() throws {
        let builtIn = try TrustAnchors.apple().anchors.map { $0.sha256 }
        #expect(try TrustAnchors.load(paths: []).anchors.map { $0.sha256 } == builtIn)
        let given = try TrustAnchors.load(paths: [TestAnchors.storeKitPath])
        #expect(given.anchors.count == 1)
        #expect(!given.includesApple)
    }

    @Test func oneNoticeNamesEveryNonAppleAnchor() throws {
        let root = try Self.temporaryFile("root.der", TestCA.pki.root.der)
        let anchors = try TrustAnchors(paths: [TestAnchors.applePath, TestAnchors.storeKitPath, root])
        let notice = try #require(anchors.notice)
        #expect(notice.contains(TestAnchors.storeKitPath) && notice.contains(root))
        #expect(!notice.contains(TestAnchors.applePath))
        #expect(notice.contains("they are not Apple roots"))
        #expect(!notice.contains("\n"))
    }
}
