import Foundation
import ReceiptModel
import ReceiptSynth
import ReceiptTestSupport
import Testing

@testable import ReceiptDER

/// The payload walk's fast paths (AttributeReader.swift) must decide exactly as the element-by-element walk does:
/// the same fields, the same raw attributes, and the same error (code, offset and reason) for any bytes, under
/// any limits. Each case decodes the same bytes twice, with `fastPaths` on and off, and compares everything.
@Suite struct PayloadFastPathTests {
    /// Everything one decoding of `payload` yields, as text: the error or "ok", the fields (in-app entries up to
    /// `inAppCount`), the attribute count, and the raw attribute walk that `materialize` makes.
    static func outcome(_ payload: ArraySlice<UInt8>, fast: Bool, limits: DERLimits = DERLimits()) -> String {
        // An exactly sized heap copy: a read past the end would hit the allocator's guard in ASan runs.
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: payload.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: payload)
        let bytes = UnsafeRawBufferPointer(buf)
        let parser = ReceiptParser(limits: limits)
        parser.fastPaths = fast
        var text = ""
        do throws(ReceiptError) {
            try parser.parsePayload(bytes)
            text += "ok\n"
        } catch {
            text += "\(error.code) \(error.offset) \(error)\n"
        }
        var fields = parser.fields
        fields.inApp.removeSubrange(fields.inAppCount...)
        text += "\(fields)\nattributes: \(parser.attributeCount)\n"
        var r = BERReader(bytes, limits: limits)
        r.fastPaths = fast
        do throws(ReceiptError) {
            let set = try r.element(at: 0, limit: bytes.count)
            try r.forEachAttribute(in: set, depth: 0) { (a) throws(ReceiptError) in
                text += "\(a.type) \(a.version) \(a.value) \(a.start)\n"
                guard a.type == AttributeType.inAppPurchase else { return }
                let inner = try r.inner(a, depth: 2)
                try r.forEachAttribute(in: inner, depth: 3) { (b) throws(ReceiptError) in
                    text += "  \(b.type) \(b.version) \(b.value) \(b.start)\n"
                }
            }
            text += "walk ok"
        } catch {
            text += "walk: \(error.code) \(error.offset) \(error)"
        }
        return text
    }

    /// Payloads with every shape the fast paths distinguish: short, 0x81 and 0x82 lengths, one- and two-octet
    /// types and versions, wider versions and types (slow path), non-ASCII text, every date style, empty values.
    static func builtPayloads() -> [[UInt8]] {
        var payloads: [[UInt8]] = []
        for n in [0, 1, 3, 12] {
            var b = PayloadBuilder()
            b.utf8(0, "ProductionSandbox")
            b.integer(1, 0)
            b.utf8(2, "com.example.caf\u{E9}.\u{1F600}.\u{4E2D}\u{6587}")
            b.utf8(3, String(repeating: "1.0.", count: 40))  // 160 octets: 0x81 lengths
            b.raw(4, (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) })  // 0x82 length
            b.integer(15, Int64.max)
            b.integer(16, -1)
            b.date(12, 1_600_000_000_000)
            b.date(18, 1_375_340_400_000, style: .fractional)
            b.date(21, PayloadBuilder.xcodeExpirationSentinel)
            b.ia5(19, "", version: 300)
            b.integer(100_000, 7, version: 70_000)  // three-octet type and version
            b.raw(25, [])
            for k in 0..<n {
                var p = PayloadBuilder()
                p.integer(1701, Int64(k + 1))
                p.utf8(1702, "com.example.product.\(k)")
                p.utf8(1703, "\(1_000_000_000_000 + k)")
                p.date(1704, 1_600_000_000_000 + Int64(k) * 86_400_123, style: k % 2 == 0 ? .zulu : .fractional)
                p.utf8(1705, "1000000000000")
                p.date(1706, 1_500_000_000_000, style: .offset(minutes: k % 3 == 0 ? 180 : -480))
                p.integer(1707, Int64(k % 4))
                p.date(1708, k % 2 == 0 ? nil : 1_700_000_000_000)
                p.integer(1711, 1_000_000_000_000_000 + Int64(k))
                p.date(1712, nil)
                p.integer(1713, Int64(k % 2))
                p.integer(1719, 0)
                p.integer(1720, 1)
                p.utf8(1721, k % 2 == 0 ? "" : "offer\u{E9}")
                b.inApp(p, version: k)
            }
            payloads.append(b.encode())
        }
        return payloads
    }

    /// The payloads of the real receipt fixtures (Tests/Fixtures/real).
    static func realPayloads() throws -> [[UInt8]] {
        return try Fixtures.realReceiptNames().map { name in
            let der = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
            let parser = ReceiptParser()
            return try der.withUnsafeBytes { (b) throws -> [UInt8] in
                try parser.parse(b)
                return parser.withContent(b) { [UInt8]($0) }
            }
        }
    }

    @Test func unchangedPayloadsDecodeAlikeAndSucceed() throws {
        for payload in try Self.builtPayloads() + Self.realPayloads() {
            let fast = Self.outcome(payload[...], fast: true)
            #expect(fast == Self.outcome(payload[...], fast: false))
            #expect(fast.hasPrefix("ok\n") && fast.hasSuffix("walk ok"), "\(fast)")
        }
    }

    /// Whole receipts (container and payload) from the committed DER fuzz corpus and its regressions: the same
    /// error (code, offset, reason) and the same materialized receipt either way, as the fuzz target checks.
    @Test func fuzzCorpusDecodesAlike() throws {
        var files: [URL] = []
        for kind in ["corpus", "regressions"] {
            let dir = Fixtures.packageRoot.appendingPathComponent("Fuzz/\(kind)/der")
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            files += names.filter { !$0.hasPrefix(".") && $0 != "README.md" }.map { dir.appendingPathComponent($0) }
        }
        #expect(files.count >= 50, "the committed DER corpus is missing")
        let fast = ReceiptParser()
        let slow = ReceiptParser()
        slow.fastPaths = false
        func decode(_ p: ReceiptParser, _ buf: UnsafeRawBufferPointer) -> String {
            var text = "parsed"
            do throws(ReceiptError) { try p.parse(buf) } catch { text = "\(error.code) \(error)" }
            return text + "\n\(p.materialize(buf))"
        }
        var parsed = 0
        for url in files {
            let bytes = try Fixtures.bytes(url)
            let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
            defer { buf.deallocate() }
            buf.copyBytes(from: bytes)
            let a = decode(fast, UnsafeRawBufferPointer(buf))
            #expect(a == decode(slow, UnsafeRawBufferPointer(buf)), "\(url.lastPathComponent)")
            if a.hasPrefix("parsed") { parsed += 1 }
        }
        #expect(parsed > 0)
    }

    /// Octets that change how a TLV is read: tags, length forms, sign bits, NUL, non-ASCII, digits, separators.
    static let interesting: [UInt8] = [
        0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x0C, 0x13, 0x16, 0x1F, 0x24, 0x2C, 0x30, 0x31, 0x3A, 0x2D, 0x5A, 0x7F,
        0x80, 0x81, 0x82, 0x83, 0x84, 0xA0, 0xC3, 0xE0, 0xED, 0xF4, 0xFF,
    ]

    @Test func mutatedPayloadsDecodeAlike() throws {
        var rng = SplitMix(seed: 0xFA57)
        var outcomes: [String: Int] = [:]
        for payload in try Self.builtPayloads() + Self.realPayloads() {
            for _ in 0..<600 {
                var b = payload
                switch rng.next() % 8 {
                case 0:
                    b.removeSubrange(Int(rng.next() % UInt64(b.count))...)
                case 1:
                    b.remove(at: Int(rng.next() % UInt64(b.count)))
                case 2:
                    b.insert(
                        Self.interesting[Int(rng.next() % UInt64(Self.interesting.count))],
                        at: Int(rng.next() % UInt64(b.count)))
                default:
                    for _ in 0..<(1 + Int(rng.next() % 3)) {
                        let i = Int(rng.next() % UInt64(b.count))
                        b[i] =
                            rng.next() % 2 == 0
                            ? Self.interesting[Int(rng.next() % UInt64(Self.interesting.count))]
                            : UInt8(truncatingIfNeeded: rng.next())
                    }
                }
                let fast = Self.outcome(b[...], fast: true)
                #expect(fast == Self.outcome(b[...], fast: false))
                outcomes[String(fast.prefix { $0 != " " && $0 != "\n" }), default: 0] += 1
            }
        }
        // The mutations must reach both outcomes and more than one kind of error, or the comparison proves little.
        #expect(outcomes["ok", default: 0] > 100, "\(outcomes)")
        #expect(outcomes["malformedDER", default: 0] > 100, "\(outcomes)")
        #expect(outcomes["malformedAttribute", default: 0] > 100, "\(outcomes)")
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6])
    func depthLimitsDecideAlike(_ maxDepth: Int) {
        var limits = DERLimits()
        limits.maxDepth = maxDepth
        for payload in Self.builtPayloads() {
            #expect(
                Self.outcome(payload[...], fast: true, limits: limits)
                    == Self.outcome(payload[...], fast: false, limits: limits))
        }
    }

    @Test func countLimitsDecideAlike() {
        var limits = DERLimits()
        limits.maxAttributes = 20
        limits.maxInAppEntries = 2
        for payload in Self.builtPayloads() {
            let fast = Self.outcome(payload[...], fast: true, limits: limits)
            #expect(fast == Self.outcome(payload[...], fast: false, limits: limits))
        }
    }

    /// Every string length the inline word check distinguishes (0...8, 9...16, longer), with a NUL, a lone
    /// continuation octet or a valid two-octet character at every position: decided alike, and as UTF-8 says.
    @Test func stringsOfEveryLengthAndOddOctetDecideAlike() {
        for n in 0...20 {
            for position in -1..<n {
                for odd: [UInt8] in [[0x00], [0x80], [0xC3, 0xA9]] {
                    var text = Array(repeating: UInt8(0x61), count: n)
                    if position >= 0 { text.replaceSubrange(position...position, with: odd) }
                    var b = PayloadBuilder()
                    b.raw(2, [0x0C, UInt8(text.count)] + text)
                    let payload = b.encode()
                    let fast = Self.outcome(payload[...], fast: true)
                    #expect(fast == Self.outcome(payload[...], fast: false))
                    let valid = position < 0 || odd == [0xC3, 0xA9]
                    #expect(fast.hasPrefix(valid ? "ok\n" : "malformedAttribute "), "\(text)")
                }
            }
        }
    }

    /// Shapes the fast path hands to the slow one, decoded by hand: the slow path's answers are the contract.
    @Test func irregularAttributesKeepTheirMeaning() {
        // Bytes after the value inside the attribute SEQUENCE are not read (as before the fast path).
        let trailing: [UInt8] = [
            0x31, 0x0D, 0x30, 0x0B, 0x02, 0x01, 0x02, 0x02, 0x01, 0x01, 0x04, 0x00, 0x05, 0x01, 0x00,
        ]
        #expect(Self.outcome(trailing[...], fast: true).hasPrefix("ok\n"))
        // A negative type is malformed.
        let negative: [UInt8] = [0x31, 0x0A, 0x30, 0x08, 0x02, 0x01, 0xFE, 0x02, 0x01, 0x01, 0x04, 0x00]
        #expect(Self.outcome(negative[...], fast: true).hasPrefix("malformedDER 2 "))
        // A value element longer than its OCTET STRING.
        let long: [UInt8] = [0x31, 0x0C, 0x30, 0x0A, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x04, 0x02, 0x02, 0x05]
        #expect(Self.outcome(long[...], fast: true).hasPrefix("malformedDER 12 "))
        // An integer value with trailing bytes in its OCTET STRING.
        let extra: [UInt8] = [
            0x31, 0x0E, 0x30, 0x0C, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x04, 0x04, 0x02, 0x01, 0x05, 0x00,
        ]
        #expect(Self.outcome(extra[...], fast: true).hasPrefix("malformedAttribute 2 "))
        for bytes in [trailing, negative, long, extra] {
            #expect(Self.outcome(bytes[...], fast: true) == Self.outcome(bytes[...], fast: false))
        }
    }
}
