// libFuzzer entry for the line-level JWS path (built by scripts/fuzz.sh, not by SwiftPM): an input is one NDJSON
// line, decoded by `LineDecoder` as `export` decodes it (the key scan, the JWS form check, the body detection and
// `JWSLine.extract`), and every JWS the line holds goes through the evaluator with verification, nested ones
// included, as `JWSRowAppender` takes them. Invariants: a line takes the JWS path only when it has a JWS form or
// names a body key; a receipt decodes within its buffer; every verdict is consistent (valid exactly when it has no
// code, verified only when valid, nested JWS only in a notification and never deeper); no crash, no memory error.

import Foundation

/// Verifies against Apple's built-in roots (the real samples) and, when present, the root that signed the
/// committed generated seeds (`Fuzz/jwsline-root.pem`, a test PKI's public certificate).
let evaluators: [JWSEvaluator] = {
    var out: [JWSEvaluator] = [JWSEvaluator(verifier: nil)]
    if let apple = try? TrustAnchors.apple() {
        out.append(JWSEvaluator(verifier: JWSVerifier(anchors: apple, capacity: 64)))
    }
    let testRoot = ProcessInfo.processInfo.environment["FUZZ_JWS_ANCHOR"] ?? "Fuzz/jwsline-root.pem"
    if let test = try? TrustAnchors.load(paths: [testRoot]) {
        out.append(JWSEvaluator(verifier: JWSVerifier(anchors: test, capacity: 64)))
    }
    return out
}()
let maxRecord = 1 << 16
let decoder = LineDecoder(field: nil, idField: "id", deviceIDField: "device_id", maxRecord: maxRecord)
let decoded = UnsafeMutableRawBufferPointer.allocate(byteCount: Base64.maxDecodedCount(maxRecord), alignment: 16)
let idScratch = UnsafeMutableRawBufferPointer.allocate(byteCount: maxRecord, alignment: 16)
let source: [UInt8] = Array("fuzz".utf8)
/// The same line read as a row of a CSV input with this header (`LineDecoder`'s CSV step).
let csvHeader = CSVHeader(columns: ["id", "receipt-data", "device_id"], receiptFields: CSVHeader.defaultReceiptFields)!

func check(_ v: JWSVerdict, nested: Bool, verifying: Bool) {
    precondition((v.code == nil) == (v.status == .valid), "a verdict's status and code disagree")
    precondition(!v.verified || v.code == nil, "a rejected JWS reads as verified")
    precondition(verifying || !v.verified, "decode-only verified something")
    precondition(v.nested.isEmpty || (!nested && v.kind == .notification), "nested JWS outside a notification")
    for (key, inner) in v.nested {
        precondition(JWSEvaluator.nestedKeys.contains(key), "a nested JWS under an unknown key")
        check(inner, nested: true, verifying: verifying)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size <= maxRecord else { return 0 }
    let line = UnsafeRawBufferPointer(start: data, count: size)
    source.withUnsafeBytes { src in
        var ctx = RowContext(source: src, line: 1)
        switch decoder.decode(line, .ndjson, into: decoded, idScratch: idScratch, &ctx) {
        case .receipt(let bytes):
            precondition(bytes.count <= Base64.maxDecodedCount(size), "a receipt longer than its base64")
        case .failed:
            break
        case .jws(let items):
            let compact = items.count == 1 && (items[0]?.hasPrefix("eyJ") ?? false || items[0]?.contains(".") ?? false)
            precondition(JWSLine.looksLikeBody(line) || compact, "a line with no JWS form took the JWS path")
            precondition(items.count <= size, "more JWS than bytes")
            for case let text? in items {
                for e in evaluators {
                    check(e.evaluate(Substring(text)), nested: false, verifying: e.verifier != nil)
                }
            }
        }
        // As a CSV row: the record id lies in the row or its scratch, a receipt fits its buffer, and a JWS path
        // holds no more JWS than the row has bytes.
        var row = RowContext(source: src, line: 2)
        switch decoder.decode(line, .csv(csvHeader), into: decoded, idScratch: idScratch, &row) {
        case .receipt(let bytes):
            precondition(bytes.count <= Base64.maxDecodedCount(size), "a CSV receipt longer than its base64")
        case .failed:
            break
        case .jws(let items):
            precondition(items.count <= size, "more JWS than bytes in a CSV row")
        }
        precondition((row.recordID?.count ?? 0) <= size, "a CSV record id longer than its row")
    }
    return 0
}
