import Foundation

/// One generated input record: its NDJSON line and its ground truth.
public struct GeneratedRecord: Sendable {
    /// A blank line goes before this record (blank lines count as lines but make no row).
    public var blankLineBefore: Bool
    /// The line, without its newline.
    public var line: [UInt8]
    /// The truth object after `{"line":N,` (the writer knows the line number).
    public var truthTail: String
    public var kind: RecordKind
}

/// Makes record `index` of a run: a pure function of (seed, index), so records can be made in parallel.
public struct RecordFactory: Sendable {
    public let pki: TestPKI
    public let seed: UInt64
    public let digest: DigestChoice
    public let badFraction: Double
    /// Device identifiers in the records (`generate --device-ids`); nil for none.
    public let deviceIDs: DeviceIDPlan?
    /// Lines longer than this are oversized (the export's default maximum record size, 1 MiB).
    public static let maxRecordSize = 1 << 20

    public init(
        pki: TestPKI, seed: UInt64, digest: DigestChoice = .mixed, badFraction: Double = 0.05,
        deviceIDs: DeviceIDPlan? = nil
    ) {
        self.deviceIDs = deviceIDs
        self.pki = pki
        self.seed = seed
        self.digest = digest
        self.badFraction = badFraction
    }

    /// The record at `index` (0-based).
    public func record(_ index: Int) -> GeneratedRecord {
        var rng = SplitMix(seed: seed, index: index)
        let blank = rng.chance(0.003)
        let kind = rng.chance(badFraction) ? RecordKind.bad[rng.weighted(RecordKind.badWeights)] : .valid
        let id = "rcpt-\(String(seed, radix: 16))-\(index)"
        var plan = Population.plan(&rng, digest: digest)
        let shape = kind == .valid || kind.decodes ? LineShape.draw(&rng) : nil

        // The device identifier, for records whose receipt decodes: attribute 5 is made from it before signing.
        var device: DeviceIDPlan.Draw? = nil
        if let devices = deviceIDs, kind.decodes {
            let d = devices.draw(seed: seed, index: index)
            if let i = plan.spec.attributes.firstIndex(where: { $0.type == 5 }) {
                plan.spec.attributes[i].value = .raw(DeviceIDPlan.hash(device: d.hashed, spec: plan.spec))
            }
            device = d
        }
        var truthID: String? = id
        var line: String
        switch kind {
        case .invalidJSON:
            truthID = nil
            let b64 = base64(sign(&plan, kind: .valid))
            switch rng.int(3) {
            case 0: line = "{\"id\":\"\(id)\",\"receipt-data\":\"\(b64.prefix(b64.count / 2))"
            case 1: line = "receipt-data=\(b64.prefix(200))"
            default: line = "[\"\(id)\",\"\(b64.prefix(100))\"]"
            }
        case .missingKey:
            switch rng.int(4) {
            case 0: line = "{\"id\":\"\(id)\",\"data\":\"\(base64(sign(&plan, kind: .valid)).prefix(300))\"}"
            case 1: line = "{\"id\":\"\(id)\",\"receipt-data\":null}"
            case 2: line = "{\"id\":\"\(id)\",\"receipt-data\":\(rng.int(in: 1...999_999))}"
            default:
                line =
                    "{\"id\":\"\(id)\",\"meta\":{\"receipt-data\":\"\(base64(sign(&plan, kind: .valid)).prefix(300))\"}}"
            }
        case .emptyReceipt:
            line = "{\"id\":\"\(id)\",\"receipt-data\":\"\"}"
        case .invalidBase64:
            var b64 = Array(base64(sign(&plan, kind: .valid)))
            let bad: [Character] = ["*", "%", "!", "#", "?", "~"]
            for _ in 0..<(1 + rng.int(3)) { b64.insert(rng.pick(bad), at: rng.int(b64.count)) }
            line = "{\"id\":\"\(id)\",\"receipt-data\":\"\(String(b64))\"}"
        case .oversizedLine:
            // Over the 1 MiB record limit; repetitive so it compresses to almost nothing.
            truthID = nil
            let extra = rng.int(64 << 10)
            line =
                "{\"id\":\"\(id)\",\"receipt-data\":\""
                + String(repeating: "QUFB", count: (Self.maxRecordSize + extra) / 4) + "\"}"
        case .truncatedDER:
            let der = sign(&plan, kind: .valid)
            line = LineShape.plain.render(id: id, base64: base64(Array(der.prefix(10 + rng.int(der.count - 10)))))
        case .garbageDER:
            var junk: [UInt8]
            if rng.chance(0.3) {
                junk = pki.root.der  // well-formed DER, but a certificate, not a receipt
            } else {
                junk = rng.bytes(50 + rng.int(3000))
                if junk[0] == 0x30 { junk[0] = 0x31 }
            }
            line = LineShape.plain.render(id: id, base64: base64(junk))
        default:
            line = shape!.render(id: id, base64: base64(sign(&plan, kind: kind)))
        }
        var deviceTruth: (id: String?, matches: Bool?)? = nil
        if deviceIDs != nil {
            deviceTruth = (nil, nil)
            // Every decodable record's line is a JSON object: the device id goes first.
            if let device, line.first == "{" {
                line = "{\"device_id\":\"\(device.text)\"," + line.dropFirst()
                deviceTruth = (device.text, DeviceIDPlan.matches(written: device.written, spec: plan.spec))
            }
        }
        let tail = Truth.tail(
            id: truthID, kind: kind, shape: shape?.rawValue, spec: plan.spec,
            digest: plan.options.digest, form: plan.options.form, device: deviceTruth)
        return GeneratedRecord(blankLineBefore: blank, line: Array(line.utf8), truthTail: tail, kind: kind)
    }

    /// Signs the plan's payload with the chain and knobs of `kind`. For a tampered payload the plan's spec is
    /// changed to what the receipt then holds (the truth shows the tampered fields).
    private func sign(_ plan: inout ReceiptPlan, kind: RecordKind) -> [UInt8] {
        var options = plan.options
        let payload = plan.spec.payload()
        switch kind {
        case .tamperedPayload:
            // Change the bundle id after signing, keeping its length (a forged receipt for another app).
            if let i = plan.spec.attributes.firstIndex(where: { $0.type == 2 }),
                case .utf8(let b) = plan.spec.attributes[i].value
            {
                plan.spec.attributes[i].value = .utf8(String(b.dropLast()) + (b.last == "x" ? "y" : "x"))
            }
            options.embeddedContent = plan.spec.payload()
        case .flippedSignature: options.flipSignatureBit = true
        case .signerNotFound: options.signerSerialMismatch = true
        default: break
        }
        return ReceiptSigner.sign(payload: payload, identity: pki.identity(kind.variant), options: options)
    }

    private func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}

/// How a valid line's JSON is written: real exports vary.
enum LineShape: String, CaseIterable {
    case plain
    /// PHP's `json_encode` writes `/` as `\/`.
    case escapedSlashes = "escaped-slashes"
    /// The receipt key before the id.
    case reordered
    /// A nested object holding a `receipt-data` key of its own, before the real one.
    case nestedDecoy = "nested-decoy"
    /// Whitespace after colons and commas.
    case spaced
    /// Other fields around the receipt.
    case extraFields = "extra-fields"
    /// Base64 wrapped every 76 characters with `\r\n` escapes (whitespace in the string is ignored).
    case wrapped

    static let weights: [Double] = [70, 8, 6, 5, 5, 4, 2]

    static func draw(_ rng: inout SplitMix) -> LineShape { allCases[rng.weighted(weights)] }

    func render(id: String, base64 b64: String) -> String {
        switch self {
        case .plain: return "{\"id\":\"\(id)\",\"receipt-data\":\"\(b64)\"}"
        case .escapedSlashes:
            return "{\"id\":\"\(id)\",\"receipt-data\":\"\(b64.replacingOccurrences(of: "/", with: "\\/"))\"}"
        case .reordered: return "{\"receipt-data\":\"\(b64)\",\"id\":\"\(id)\"}"
        case .nestedDecoy:
            return "{\"id\":\"\(id)\",\"meta\":{\"receipt-data\":\"bm90IGEgcmVjZWlwdA==\",\"source\":\"import\"},"
                + "\"receipt-data\":\"\(b64)\"}"
        case .spaced: return "{\"id\": \"\(id)\", \"receipt-data\": \"\(b64)\", \"user_id\": 48213}"
        case .extraFields:
            return "{\"id\":\"\(id)\",\"user_id\":48213,\"platform\":\"ios\",\"receipt-data\":\"\(b64)\","
                + "\"created_at\":\"2020-01-01 10:00:00\",\"tags\":[\"migrated\",null,1.5]}"
        case .wrapped:
            var wrapped = ""
            var i = b64.startIndex
            while i < b64.endIndex {
                let j = b64.index(i, offsetBy: 76, limitedBy: b64.endIndex) ?? b64.endIndex
                if i != b64.startIndex { wrapped += "\\r\\n" }
                wrapped += b64[i..<j]
                i = j
            }
            return "{\"id\":\"\(id)\",\"receipt-data\":\"\(wrapped)\"}"
        }
    }
}
