import Foundation
import ReceiptModel
import ReceiptPipeline
import ReceiptSynth
import ReceiptVerify
import Testing

/// One record's facts, written both as a receipt (signed by the receipt test PKI) and as an app transaction in the
/// shape Apple signs it (no `signedDate`, a `receiptCreationDate`; signed by the JWS test PKI).
struct RecordFacts: Sendable, CustomStringConvertible {
    /// The receipt's `receipt_type` (attribute 0) and the app transaction's `receiptType`; nil leaves it out.
    var receiptType: String? = "Production"
    var appTransactionType: String? = "Production"
    var bundleID: String? = "com.example.policies"
    var applicationVersion: String? = "1.2"
    /// When the record was signed: the receipt's creation date (attribute 12) and the app transaction's
    /// `receiptCreationDate`.
    var signedAt: Int64 = RecordFacts.created
    /// The chain each generation is signed with (the same fault in each test PKI).
    var receiptChain: TestPKI.Variant = .valid
    var jwsChain: JWSFactory.Kind = .good

    var description: String {
        "type \(receiptType ?? "-")/\(appTransactionType ?? "-"), bundle \(bundleID ?? "-"), version "
            + "\(applicationVersion ?? "-"), signed at \(signedAt), chains \(receiptChain)/\(jwsChain)"
    }

    /// 2024-03-01T00:00:00Z: inside both test PKIs' leaf validity.
    static let created: Int64 = 1_709_251_200_000

    /// Epoch milliseconds of an ISO 8601 UTC time.
    static func ms(_ iso: String) -> Int64 {
        Int64(ISO8601DateFormatter().date(from: iso)!.timeIntervalSince1970 * 1000)
    }

    func receipt(_ pki: TestPKI) -> [UInt8] {
        var b = PayloadBuilder()
        if let receiptType { b.utf8(0, receiptType) }
        b.integer(1, 0)
        if let bundleID { b.utf8(2, bundleID) }
        if let applicationVersion { b.utf8(3, applicationVersion) }
        b.date(12, signedAt)
        b.utf8(19, "1.0")
        return ReceiptSigner.sign(payload: b.encode(), identity: pki.identity(receiptChain))
    }

    /// The fields of Apple's AppTransaction payload (`JWSAppTransactionDecodedPayload`).
    var appTransaction: [String: Any] {
        var p: [String: Any] = [
            "appAppleId": 0, "versionExternalIdentifier": 0, "receiptCreationDate": signedAt,
            "originalPurchaseDate": Self.created - 86_400_000, "originalApplicationVersion": "1.0",
            "deviceVerification": "AAAA", "deviceVerificationNonce": "5a1e1c9e-3f5b-4c5e-9f5c-3a2d1b0c9e8f",
            "appTransactionId": "704512345678901234", "originalPlatform": "iOS",
        ]
        if let appTransactionType { p["receiptType"] = appTransactionType }
        if let bundleID { p["bundleId"] = bundleID }
        if let applicationVersion { p["applicationVersion"] = applicationVersion }
        return p
    }
}

/// The run's policies judge receipts and JWS alike: a receipt and an app transaction with the same facts get the
/// same status and error code, which is the one the documented rule gives.
@Suite(.serialized) struct RecordPolicyTests {
    static let receiptPKI = try! TestPKI.load(
        directory: FileManager.default.temporaryDirectory.appendingPathComponent("rf-pipeline-tests-ca"))
    static let jwsPKI = try! JWSTestPKI.load(directory: nil)

    /// Both test roots, as a run given both with `--trust-anchor` trusts them.
    static func cache() throws -> ChainCache {
        ChainCache(
            anchors: try TrustAnchors(certificates: [
                (source: "receipt-root.pem", bytes: receiptPKI.root.der),
                (source: "jws-root.pem", bytes: jwsPKI.root.der),
            ]))
    }

    /// The receipts rows of `lines` (receipt-data values) exported under `configure`.
    static func export(_ values: [String], verify: Bool = true, _ configure: (inout PipelineConfig) -> Void)
        throws -> [Row]
    {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("rf-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("input.ndjson")
        let text = values.map { "{\"receipt-data\":\"\($0)\"}\n" }.joined()
        try Data(text.utf8).write(to: input)
        var config = PipelineConfig()
        config.inputs = [input.path]
        config.verify = verify
        configure(&config)
        let sink = MemorySink()
        _ = ExportPipeline(config: config, sink: sink, cache: verify ? try cache() : nil).run()
        return sink.receipts
    }

    /// The receipt's and the app transaction's (status, error_code) under `configure`, verified and not.
    static func verdicts(_ facts: RecordFacts, _ configure: (inout PipelineConfig) -> Void) throws
        -> [(receipt: [Cell], jws: [Cell])]
    {
        let receipt = Data(facts.receipt(receiptPKI)).base64EncodedString()
        let jws = JWSFactory(pki: jwsPKI).sign(facts.appTransaction, kind: facts.jwsChain)
        return try [true, false].map { verify in
            let rows = try export([receipt, jws], verify: verify, configure)
            #expect(rows.count == 2)
            #expect(rows.last?["record_kind"] == .s("jws_app_transaction"))
            let pick = { (r: Row?) in [r?["status"] ?? .null, r?["error_code"] ?? .null] }
            return (pick(rows.first), pick(rows.last))
        }
    }

    static func expect(_ facts: RecordFacts, _ want: (Int64, String?), _ configure: (inout PipelineConfig) -> Void)
        throws
    {
        let expected: [Cell] = [.i(want.0), want.1.map(Cell.s) ?? .null]
        for (i, v) in try verdicts(facts, configure).enumerated() {
            let mode = i == 0 ? "verified" : "--no-verify"
            #expect(v.receipt == expected, "receipt, \(mode), \(facts)")
            #expect(v.jws == expected, "app transaction, \(mode), \(facts)")
        }
    }

    @Test func withNoOptionsBothGenerationsAreValid() throws {
        try Self.expect(RecordFacts(), (0, nil)) { _ in }
    }

    /// (receipt_type, app transaction receiptType, --environment, status, error_code).
    static let environmentCases: [(String?, String?, EnvironmentRequirement, Int64, String?)] = [
        ("Production", "Production", .production, 0, nil),
        ("Production", "Production", .sandbox, 21008, "wrong_environment"),
        ("ProductionSandbox", "Sandbox", .production, 21007, "wrong_environment"),
        ("ProductionSandbox", "Sandbox", .sandbox, 0, nil),
        ("Xcode", "Xcode", .production, 21007, "wrong_environment"),
        ("Xcode", "Xcode", .sandbox, 21008, "wrong_environment"),
        ("Xcode", "Xcode", .any, 0, nil),
        ("LocalTesting", "LocalTesting", .production, 21007, "wrong_environment"),
        ("LocalTesting", "LocalTesting", .sandbox, 21008, "wrong_environment"),
        ("LocalTesting", "LocalTesting", .any, 0, nil),
        (nil, nil, .production, 21007, "wrong_environment"),
        (nil, nil, .sandbox, 21008, "wrong_environment"),
        (nil, nil, .any, 0, nil),
    ]

    @Test(arguments: 0..<environmentCases.count)
    func theEnvironmentPolicyGivesBothGenerationsTheSameVerdict(_ k: Int) throws {
        let (receiptType, jwsType, requirement, status, code) = Self.environmentCases[k]
        let facts = RecordFacts(receiptType: receiptType, appTransactionType: jwsType)
        try Self.expect(facts, (status, code)) { $0.environment = requirement }
    }

    @Test(arguments: [("com.example.policies", true), ("com.example.other", false), (nil, false)] as [(String?, Bool)])
    func theBundleIDPolicyGivesBothGenerationsTheSameVerdict(bundle: String?, allowed: Bool) throws {
        try Self.expect(RecordFacts(bundleID: bundle), allowed ? (0, nil) : (21003, "wrong_bundle_id")) {
            $0.bundleIDs = ["com.example.policies", "com.example.second"]
        }
    }

    @Test(arguments: [("1.2", true), ("1.3", false), (nil, false)] as [(String?, Bool)])
    func theAppVersionPolicyGivesBothGenerationsTheSameVerdict(version: String?, allowed: Bool) throws {
        try Self.expect(RecordFacts(applicationVersion: version), allowed ? (0, nil) : (21003, "wrong_app_version")) {
            $0.appVersions = ["1.2", "2.0"]
        }
    }

    /// (facts, error_code): the same fault of trust in each generation. 2039-06-01 is after both test PKIs'
    /// leaves end (2038 and 2035), 2009-06-01 before both begin (2010 and 2015); the foreign chains end at roots
    /// the run does not trust; the intermediates without Apple's WWDR OID are issued by the trusted roots.
    static let trustCases: [(RecordFacts, String)] = [
        (RecordFacts(signedAt: RecordFacts.ms("2039-06-01T00:00:00Z")), "certificate_expired"),
        (RecordFacts(receiptChain: .expiredLeaf, jwsChain: .expiredAtSignedDate), "certificate_expired"),
        (RecordFacts(signedAt: RecordFacts.ms("2009-06-01T00:00:00Z")), "certificate_not_yet_valid"),
        (RecordFacts(receiptChain: .foreignCA, jwsChain: .otherRoot), "untrusted_chain"),
        (
            RecordFacts(receiptChain: .intermediateWithoutPolicy, jwsChain: .missingIntermediateOID),
            "certificate_policy"
        ),
        (RecordFacts(receiptChain: .developerLeaf, jwsChain: .missingLeafOID), "certificate_policy"),
    ]

    /// The trust policies at the head of the list give a receipt and an app transaction with the same fault the
    /// same verdict; with `--no-verify` nothing is established, so neither is judged.
    @Test(arguments: 0..<trustCases.count)
    func eachTrustPolicyGivesBothGenerationsTheSameVerdict(_ k: Int) throws {
        let (facts, code) = Self.trustCases[k]
        let both = try Self.verdicts(facts) { _ in }
        let expected: [Cell] = [.i(21003), .s(code)]
        #expect(both[0].receipt == expected, "receipt, verified, \(facts)")
        #expect(both[0].jws == expected, "app transaction, verified, \(facts)")
        #expect(both[1].receipt == [.i(0), .null], "receipt, --no-verify, \(facts)")
        #expect(both[1].jws == [.i(0), .null], "app transaction, --no-verify, \(facts)")
    }

    /// A trust failure comes before the other policies: a record both signed outside its chain's validity and of
    /// the wrong environment is rejected for its certificates.
    @Test func theTrustPoliciesComeFirstInTheList() throws {
        let facts = RecordFacts(signedAt: RecordFacts.ms("2039-06-01T00:00:00Z"))
        let both = try Self.verdicts(facts) { $0.environment = .sandbox }
        #expect(both[0].receipt == [.i(21003), .s("certificate_expired")])
        #expect(both[0].jws == [.i(21003), .s("certificate_expired")])
        #expect(both[1].receipt == [.i(21008), .s("wrong_environment")])
        #expect(both[1].jws == [.i(21008), .s("wrong_environment")])
    }

    /// A JWS transaction describes a purchase, not an installed app: `--app-version` does not judge it, while the
    /// environment and bundle policies do.
    @Test func aJWSTransactionIsNotJudgedByAppVersion() throws {
        let transaction: [String: Any] = [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789",
            "bundleId": "com.example.policies", "productId": "com.example.policies.pro", "quantity": 1,
            "purchaseDate": RecordFacts.created, "signedDate": RecordFacts.created, "environment": "Production",
            "type": "Non-Consumable",
        ]
        let jws = JWSFactory(pki: Self.jwsPKI).sign(transaction)
        let accepted = try Self.export([jws]) { $0.appVersions = ["9.9"] }
        #expect(accepted.map { $0["error_code"] } == [.null])
        let rejected = try Self.export([jws]) {
            $0.appVersions = ["9.9"]
            $0.bundleIDs = ["com.example.other"]
        }
        #expect(rejected.map { $0["error_code"] } == [.s("wrong_bundle_id")])
    }

    /// Apple's app transactions carry `receiptCreationDate` and no `signedDate`: the receipts row's
    /// receipt_creation_date is that date, as for the receipt with the same facts.
    @Test func anAppTransactionsCreationDateIsItsReceiptCreationDate() throws {
        let facts = RecordFacts()
        let rows = try Self.export(
            [
                Data(facts.receipt(Self.receiptPKI)).base64EncodedString(),
                JWSFactory(pki: Self.jwsPKI).sign(facts.appTransaction),
            ]
        ) { _ in }
        #expect(rows.map { $0["receipt_creation_date"] } == [.i(RecordFacts.created), .i(RecordFacts.created)])
        #expect(rows.map { $0["verified"] } == [.b(true), .b(true)])
    }
}
