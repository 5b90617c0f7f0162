import Foundation
import ReceiptDER
import ReceiptIO
import ReceiptModel
import ReceiptTestSupport
import Testing

/// Replays the committed fuzz corpora and every crash regression input (Fuzz/corpus/<target>/,
/// Fuzz/regressions/<target>/) through the same entry points and invariants as the libFuzzer targets in Fuzz/.
/// Under `scripts/sanitizers.sh` this runs with AddressSanitizer, so an out-of-bounds read on any of them fails.
struct FuzzCorpusReplayTests {
    static func inputs(_ target: String) -> [URL] {
        var urls: [URL] = []
        for kind in ["corpus", "regressions"] {
            let dir = Fixtures.packageRoot.appendingPathComponent("Fuzz/\(kind)/\(target)")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            urls += names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.sorted().map {
                dir.appendingPathComponent($0)
            }
        }
        return urls
    }

    /// True when the string `ref` of `line` unescapes to valid UTF-8.
    static func isUTF8(_ line: UnsafeRawBufferPointer, _ ref: JSONStringRef) -> Bool {
        let raw = UnsafeRawBufferPointer(rebasing: line[ref.range])
        var out = [UInt8](repeating: 0, count: raw.count)
        let n = ref.escaped ? out.withUnsafeMutableBytes { JSONString.unescape(raw, into: $0) } : raw.count
        if !ref.escaped { out = Array(raw) }
        return String(validating: out[0..<n], as: UTF8.self) != nil
    }

    @Test func derCorpusAndRegressionsEndInAResultOrATypedError() throws {
        let files = Self.inputs("der")
        #expect(files.count >= 50, "the committed DER corpus is missing")
        let parser = ReceiptParser()
        var outcomes: [ErrorCode?: Int] = [:]
        for url in files {
            let bytes = try Data(contentsOf: url)
            bytes.withUnsafeBytes { buf in
                var code: ErrorCode? = nil
                do throws(ReceiptError) {
                    try parser.parse(buf)
                } catch {
                    code = error.code
                }
                outcomes[code, default: 0] += 1
                let receipt = parser.materialize(buf)
                #expect(receipt.inApp.count <= parser.limits.maxInAppEntries, "\(url.lastPathComponent)")
                for range in parser.container.certificates {
                    #expect(range.upperBound <= buf.count, "\(url.lastPathComponent)")
                    _ = try? CertificateView.parse(buf, range)
                    _ = NameText.render(buf, range)
                }
            }
        }
        // The corpus holds whole receipts too, not only rejects: the replay reaches the payload decoder.
        #expect(outcomes[nil, default: 0] > 0)
        #expect(outcomes.count >= 2, "some inputs are rejects: \(outcomes)")
    }

    @Test func ndjsonCorpusAndRegressionsAreClassifiedWithinTheirBuffers() throws {
        let files = Self.inputs("ndjson")
        #expect(files.count >= 50, "the committed NDJSON corpus is missing")
        let scanner = NDJSONScanner()
        var accepted = 0
        for url in files {
            let bytes = [UInt8](try Data(contentsOf: url))
            bytes.withUnsafeBytes { line in
                let record = scanner.scan(line)
                // Strings the scanner accepts reach output columns (record_id): they must be UTF-8.
                if case .string(let ref) = record.id {
                    #expect(Self.isUTF8(line, ref), "\(url.lastPathComponent): the id is not UTF-8")
                }
                guard record.error == nil else { return }
                #expect(Self.isUTF8(line, record.receipt), "\(url.lastPathComponent): the receipt is not UTF-8")
                accepted += 1
                #expect(record.receipt.range.upperBound <= line.count, "\(url.lastPathComponent)")
                let raw = UnsafeRawBufferPointer(rebasing: line[record.receipt.range])
                let unescaped = UnsafeMutableRawBufferPointer.allocate(byteCount: max(raw.count, 1), alignment: 1)
                defer { unescaped.deallocate() }
                var text = raw
                if record.receipt.escaped {
                    let n = JSONString.unescape(raw, into: unescaped)
                    #expect(n <= raw.count, "\(url.lastPathComponent)")
                    text = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(unescaped)[0..<n])
                }
                let out = UnsafeMutableRawBufferPointer.allocate(
                    byteCount: Base64.maxDecodedCount(text.count), alignment: 1)
                defer { out.deallocate() }
                if let n = try? Base64.decode(text, into: out) { #expect(n <= out.count) }
            }
        }
        #expect(accepted > 0)
    }
}
