import Foundation
import ReceiptModel
import ReceiptSynth
import ReceiptVerify
import Testing

@testable import ReceiptJWS

/// JWS signed by the test PKI shaped like Apple's: the good kind verifies against the test root, and each bad
/// kind gets the code ``JWSFactory/Kind/expectedCode`` names.
struct GeneratedJWSTests {
    static let pki = try! JWSTestPKI.load(directory: nil)
    static let factory = JWSFactory(pki: pki)

    static func evaluator() throws -> JWSEvaluator {
        let anchors = try TrustAnchors(certificates: [(source: "jws-root.pem", bytes: pki.root.der)])
        return JWSEvaluator(verifier: JWSVerifier(anchors: anchors))
    }

    /// A signed transaction dated 2024-03-01.
    static var transaction: [String: Any] {
        [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789",
            "bundleId": "com.example.app", "productId": "com.example.app.monthly", "purchaseDate": 1_709_251_200_000,
            "expiresDate": 1_711_929_600_000, "quantity": 1, "type": "Auto-Renewable Subscription",
            "signedDate": 1_709_251_260_000, "environment": "Production", "price": 9990, "currency": "USD",
        ]
    }

    @Test(arguments: JWSFactory.Kind.allCases)
    func eachKindGetsItsCode(kind: JWSFactory.Kind) throws {
        let jws = Self.factory.sign(Self.transaction, kind: kind)
        let verdict = try Self.evaluator().evaluate(Substring(jws))
        #expect(verdict.code?.rawValue == kind.expectedCode, "\(kind): \(verdict.detail ?? "")")
        #expect(verdict.verified == (kind == .good))
        if kind != .malformedBase64URL {
            #expect(verdict.fields?.string("transactionId") == "2000000123456789")
            #expect(verdict.kind == .transaction)
        }
    }

    /// An AppTransaction as Apple signs it: `receiptCreationDate` (when it was signed) and no `signedDate`.
    static var appTransaction: [String: Any] {
        [
            "receiptType": "Production", "appAppleId": 1_234_567_890, "bundleId": "com.example.app",
            "applicationVersion": "3.1", "versionExternalIdentifier": 860_000_000,
            "receiptCreationDate": 1_709_251_260_000, "originalPurchaseDate": 1_600_000_000_000,
            "originalApplicationVersion": "1.0", "deviceVerification": "c2lnbmVkIGRldmljZSBoYXNo",
            "deviceVerificationNonce": "9f1d3b0c-6f1e-4f55-9a43-0c2b7a3e1d11", "appTransactionId": "704512345678901234",
            "originalPlatform": "iOS",
        ]
    }

    @Test func anAppTransactionWithoutSignedDateVerifiesAtItsReceiptCreationDate() throws {
        let verdict = try Self.evaluator().evaluate(Substring(Self.factory.sign(Self.appTransaction)))
        #expect(verdict.code == nil, "\(verdict.detail ?? "")")
        #expect(verdict.verified)
        #expect(verdict.kind == .appTransaction)
        #expect(verdict.fields?.signingDate(.appTransaction) == 1_709_251_260_000)
    }

    /// The date is really the one judged: a leaf that expired before it makes the app transaction expired.
    @Test func anAppTransactionIsJudgedAtItsReceiptCreationDate() throws {
        let expired = Self.factory.sign(Self.appTransaction, kind: .expiredAtSignedDate)
        #expect(try Self.evaluator().evaluate(Substring(expired)).code == .certificateExpired)
        var early = Self.appTransaction
        early["receiptCreationDate"] = JWSTestPKI.expiredLeafNotAfter * 1000 - 86_400_000
        let valid = Self.factory.sign(early, kind: .expiredAtSignedDate)
        #expect(try Self.evaluator().evaluate(Substring(valid)).code == nil)
        // signedDate, when present, comes first.
        early["signedDate"] = 1_709_251_260_000
        let signedLater = Self.factory.sign(early, kind: .expiredAtSignedDate)
        #expect(try Self.evaluator().evaluate(Substring(signedLater)).code == .certificateExpired)
    }

    @Test func aJWSWithoutAnyDateToJudgeItAtIsMalformed() throws {
        var app = Self.appTransaction
        app["receiptCreationDate"] = nil
        let verdict = try Self.evaluator().evaluate(Substring(Self.factory.sign(app)))
        #expect(verdict.code == .jwsMalformed)
        // Only an app transaction is judged at receiptCreationDate.
        var transaction = Self.transaction
        transaction["signedDate"] = nil
        transaction["receiptCreationDate"] = 1_709_251_260_000
        #expect(try Self.evaluator().evaluate(Substring(Self.factory.sign(transaction))).code == .jwsMalformed)
    }

    @Test func theTestRootIsP384AndTheLeafP256() {
        let chain = Self.pki.chain(leaf: "leaf")
        #expect(chain.x5c.count == 3)
        #expect(chain.key.curve == .p256)
        #expect(chain.x5c[2] == Self.pki.root)
    }

    @Test func aJWSOfTheTestPKIDoesNotVerifyAgainstAnotherAnchor() throws {
        let other = try JWSTestPKI.load(directory: nil)
        let anchors = try TrustAnchors(certificates: [(source: "other", bytes: other.root.der)])
        let verdict = JWSEvaluator(verifier: JWSVerifier(anchors: anchors)).evaluate(
            Substring(Self.factory.sign(Self.transaction)))
        #expect(verdict.code == .untrustedChain)
    }

    @Test func keysKeptInADirectoryGiveTheSameRoot() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("jws-pki-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let first = try JWSTestPKI.load(directory: dir)
        let second = try JWSTestPKI.load(directory: dir)
        #expect(first.root.der == second.root.der)
        let pem = try String(contentsOf: dir.appendingPathComponent("jws-root.pem"), encoding: .utf8)
        #expect(pem == first.root.pem)
    }
}
