import CommandArguments
import Foundation
import ReceiptDER
import ReceiptIO
import ReceiptModel
import ReceiptPipeline
import ReceiptSink
import ReceiptVerify

let inspectUsage = """
    usage: receiptflow inspect [FILE | -] [--trust-anchor PATH ...] [--no-verify] [--json] [--at now|DATE]
                              [--device-id ID] [--quiet]

    Prints one receipt (DER or base64; whitespace is ignored) as verifyReceipt-shaped JSON, with what was found
    about its container (encoding, digest algorithm, certificates) and the verdict with its reason. A JWS (a
    compact JWS, or a notification body {"signedPayload": ...}) is shown decoded and verified at its signedDate
    (Apple Root CA - G3 is AppleRootCA-G3.cer), with the JWS nested in a notification judged on their own.

      --trust-anchor PATH   a root certificate, DER or PEM (repeatable), instead of Apple's roots, which are
                            built in (Apple Inc. Root and Apple Root CA - G3)
      --no-verify           decode only
      --json                one compact line instead of indented JSON
      --at now|DATE         judge certificate validity at another time than the receipt creation date
                            (e.g. `--at now` shows why receipts must be judged at their creation date)
      --device-id ID        the device identifier (a UUID, a MAC address, or 12 or 32 hex digits): shows
                            device_hash_matches, whether the receipt's hash (attribute 5) is that device's
      --quiet               no note about a trust anchor that is not Apple's
    Exit status: 0 valid, 1 rejected or unreadable, 2 usage error.
    """

/// `receiptflow inspect`: decode, verify and show one receipt.
func runInspect(_ argv: [String]) -> Int32 {
    if argv.contains("--help") || argv.contains("-h") {
        print(inspectUsage)
        return 0
    }
    let args: Arguments
    do {
        args = try Arguments(
            argv, flags: ["--no-verify", "--json", "--quiet"], valued: ["--trust-anchor", "--at", "--device-id"],
            repeatable: ["--trust-anchor"])
    } catch {
        return usageError("inspect", error.message)
    }
    guard args.positionals.count <= 1 else {
        return usageError("inspect", "give one FILE (or - for standard input)")
    }
    let verify = !args.has("--no-verify")
    var anchors: TrustAnchors? = nil
    if verify {
        do {
            anchors = try TrustAnchors.load(
                paths: args.values("--trust-anchor").map { pathByDescriptor($0, directory: false) })
        } catch {
            printError("receiptflow inspect: \(error.message)")
            return 1
        }
        if let notice = anchors?.notice, !args.has("--quiet") { printError("receiptflow inspect: \(notice)") }
    }
    var atTime: Int64? = nil
    if let at = args.value("--at") {
        if at == "now" {
            atTime = Int64(Date().timeIntervalSince1970 * 1000)
        } else if case .millis(let ms) = Array(at.utf8).withUnsafeBytes({ DateParser.parse($0) }) {
            atTime = ms
        } else {
            let error = UsageError(
                .invalidValue, option: "--at", value: at, expected: "`now` or a date like 2020-01-31T12:00:00Z")
            return usageError("inspect", error.message)
        }
    }

    var device = RecordDevice.absent
    if let id = args.value("--device-id") {
        guard let parsed = Array(id.utf8).withUnsafeBytes({ DeviceIdentifier(text: $0) }) else {
            printError(
                "receiptflow inspect: --device-id takes a UUID, a MAC address or 12 or 32 hex digits, got '\(id)'")
            return 2
        }
        device = .identifier(parsed)
    }

    let path = args.positionals.first ?? "-"
    let input: [UInt8]
    do throws(InputError) {
        input = try readAll(path)
    } catch {
        printError("receiptflow inspect: \(error.message)")
        return 1
    }
    if let jws = InspectJWS.compact(input) {
        var (out, valid) = InspectJWS.report(jws, anchors: anchors, pretty: !args.has("--json"))
        out.append(0x0A)
        FileHandle.standardOutput.write(Data(out))
        return valid ? 0 : 1
    }
    let report = InspectReport.make(input: input, anchors: anchors, atTime: atTime, device: device)
    var out: [UInt8] = []
    report.render(pretty: !args.has("--json"), into: &out)
    out.append(0x0A)
    FileHandle.standardOutput.write(Data(out))
    return report.status == 0 ? 0 : 1
}

/// Reads a whole file, or standard input for `-` (a receipt is small; export streams, inspect need not).
func readAll(_ path: String) throws(InputError) -> [UInt8] {
    let source = try FileByteSource(path: path)
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let read: Result<Int, InputError> = chunk.withUnsafeMutableBytes { p in
            do throws(InputError) { return .success(try source.read(into: p)) } catch { return .failure(error) }
        }
        let n = try read.get()
        if n == 0 { return bytes }
        bytes += chunk[0..<n]
    }
}

/// Everything `inspect` found about one receipt.
struct InspectReport {
    var status: Int32 = 0
    var error: ReceiptError? = nil
    var errorDetail: String? = nil
    var receipt: Receipt? = nil
    var inputEncoding = "der"
    var container: SignedDataView? = nil
    var certificates: [(subject: String, issuer: String, notBefore: Int64, notAfter: Int64, sha256: String)] = []
    /// With `--device-id`: whether the receipt's hash is that device's (nil when the receipt has none).
    var deviceHashMatches: Bool? = nil
    var verification: (checked: Bool, verified: Bool, time: Int64?, signer: String?, anchors: [String]) =
        (false, false, nil, nil, [])

    static func make(
        input: [UInt8], anchors: TrustAnchors?, atTime: Int64?, device: RecordDevice = .absent
    ) -> InspectReport {
        var report = InspectReport()
        report.verification.anchors = anchors?.anchors.map { "\($0.subject) (SHA-256 \($0.sha256))" } ?? []
        // DER starts with a SEQUENCE tag; anything else is read as base64.
        var der = input
        if input.first != BERTag.sequence {
            report.inputEncoding = "base64"
            var decoded = [UInt8](repeating: 0, count: Base64.maxDecodedCount(input.count))
            let result: Result<Int, ReceiptError> = input.withUnsafeBytes { src in
                decoded.withUnsafeMutableBytes { dst in
                    do throws(ReceiptError) { return .success(try Base64.decode(src, into: dst)) } catch {
                        return .failure(error)
                    }
                }
            }
            guard case .success(let n) = result else {
                if case .failure(let e) = result { report.fail(e, nil) }
                return report
            }
            der = Array(decoded[0..<n])
            if der.isEmpty {
                report.fail(ReceiptError(.emptyReceipt, "the receipt is empty"), nil)
                return report
            }
        }
        // The same evaluator as `export`, with the int32 policy (inspect takes no environment or bundle options).
        let verifier = anchors.map { ReceiptVerifier(cache: ChainCache(anchors: $0)) }
        let evaluator = ReceiptEvaluator(
            verifier: verifier,
            policies: PipelineConfig.inspectPolicies + (device == .absent ? [] : [DeviceHashPolicy(required: false)]),
            at: atTime.map { .instant($0) } ?? .receiptCreationDate)
        let parser = ReceiptParser()
        der.withUnsafeBytes { buf in
            let parseError = evaluator.parse(buf, with: parser)
            report.container = parser.container
            report.receipt = parser.materialize(buf)
            for range in parser.container.certificates {
                guard let view = try? CertificateView.parse(buf, range) else { continue }
                let subject = NameText.render(buf, view.subject) ?? "?"
                let issuer = NameText.render(buf, view.issuer) ?? "?"
                let sha = ContentHasher().sha256(UnsafeRawBufferPointer(rebasing: buf[range])).hex
                report.certificates.append((subject, issuer, view.notBefore, view.notAfter, sha))
            }
            let verdict = evaluator.judge(buf, parsedBy: parser, parseError: parseError, device: device)
            report.deviceHashMatches = verdict.deviceHashMatches
            if verifier != nil && parseError == nil {
                report.verification = (
                    true, verdict.verified, verdict.validationTime, verdict.signer, report.verification.anchors
                )
            }
            if let code = verdict.code {
                report.fail(ReceiptError(code), verdict.detail.text(code: code), status: verdict.status)
            }
        }
        return report
    }

    mutating func fail(_ e: ReceiptError, _ detail: String?, status s: ReceiptStatus? = nil) {
        guard error == nil else { return }
        error = e
        errorDetail = detail ?? e.description
        status = (s ?? e.code.status).rawValue
    }

    func render(pretty: Bool, into out: inout [UInt8]) {
        let err = error
        VerifyReceiptJSON.render(
            receipt: receipt, status: status, error: nil, record: nil, pretty: pretty, into: &out
        ) { w, out in
            if let err {
                w.key("error_code", into: &out)
                JSONText.appendString(err.code.rawValue, into: &out)
                w.key("error_detail", into: &out)
                JSONText.appendString(errorDetail ?? err.description, into: &out)
            }
            if let m = deviceHashMatches {
                w.key("device_hash_matches", into: &out)
                JSONText.appendBool(m, into: &out)
            }
            w.key("verification", into: &out)
            w.beginObject(into: &out)
            w.key("checked", into: &out)
            JSONText.appendBool(verification.checked, into: &out)
            w.key("verified", into: &out)
            JSONText.appendBool(verification.verified, into: &out)
            if let t = verification.time {
                w.key("validation_time", into: &out)
                appendQuotedTime(t, into: &out)
            }
            if let s = verification.signer {
                w.key("signer_sha256", into: &out)
                JSONText.appendString(s, into: &out)
            }
            w.key("trust_anchors", into: &out)
            JSONText.appendStringArray(verification.anchors, into: &out)
            w.endObject(into: &out)

            w.key("container", into: &out)
            w.beginObject(into: &out)
            w.key("input", into: &out)
            JSONText.appendString(inputEncoding, into: &out)
            if let c = container {
                w.key("encoding", into: &out)
                JSONText.appendString(c.encoding == .ber ? "BER (indefinite lengths)" : "DER", into: &out)
                w.key("digest_algorithm", into: &out)
                JSONText.appendString("\(c.digestAlgorithm.name)", into: &out)
                w.key("signature_algorithm", into: &out)
                let sig: String
                switch c.signatureAlgorithm {
                case .rsaEncryption: sig = "rsaEncryption"
                case .sha1WithRSA: sig = "sha1WithRSAEncryption"
                case .sha256WithRSA: sig = "sha256WithRSAEncryption"
                case .unsupported: sig = "unsupported"
                }
                JSONText.appendString(sig, into: &out)
                w.key("signed_attributes", into: &out)
                JSONText.appendBool(c.signedAttributes != nil, into: &out)
                w.key("content_bytes", into: &out)
                JSONText.appendInteger(Int64(c.content.count), into: &out)
            }
            w.key("certificates", into: &out)
            w.beginArray(into: &out)
            for cert in certificates {
                w.element(into: &out)
                w.beginObject(into: &out)
                w.key("subject", into: &out)
                JSONText.appendString(cert.subject, into: &out)
                w.key("issuer", into: &out)
                JSONText.appendString(cert.issuer, into: &out)
                w.key("not_before", into: &out)
                appendQuotedTime(cert.notBefore, into: &out)
                w.key("not_after", into: &out)
                appendQuotedTime(cert.notAfter, into: &out)
                w.key("sha256", into: &out)
                JSONText.appendString(cert.sha256, into: &out)
                w.endObject(into: &out)
            }
            w.endArray(into: &out)
            w.endObject(into: &out)
        }
    }
}

/// Appends `"2019-08-08T05:43:20.000Z"` (a JSON string).
func appendQuotedTime(_ ms: Int64, into out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    CivilTime.appendISO8601(epochMillis: ms, into: &out)
    out.append(UInt8(ascii: "\""))
}
