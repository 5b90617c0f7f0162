import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Testing

@testable import ReceiptDER

/// The container parse remembers the ends of indefinite-length elements (`IndefiniteEnds`, on with the fast
/// paths only). BER receipts, whole, truncated, mutated and under every depth limit, must decode exactly as
/// without that memory: same error (code, offset, reason), same container, same receipt.
@Suite struct IndefiniteEndsTests {
    static let pki = try! TestPKI.load(directory: nil)

    /// BER receipts with indefinite lengths on every level Xcode uses and chunked contents.
    static let receipts: [[UInt8]] = [1000, 64, 7].map { chunk in
        var entry = PayloadBuilder()
        entry.integer(1701, 1)
        entry.utf8(1702, "com.example.product")
        entry.date(1704, 1_601_208_439_000)
        var b = PayloadBuilder()
        b.utf8(0, "Xcode")
        b.utf8(2, "com.example.app")
        b.date(12, 1_601_208_439_000)
        b.inApp(entry)
        b.inApp(entry)
        return ReceiptSigner.sign(
            payload: b.encode(), identity: pki.identity(.valid), options: .init(form: .berIndefinite(chunkSize: chunk)))
    }

    /// Everything a parse yields, as text, from an exactly sized heap copy.
    static func outcome(_ p: ReceiptParser, _ bytes: ArraySlice<UInt8>) -> String {
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: bytes)
        var text = "parsed"
        do throws(ReceiptError) { try p.parse(UnsafeRawBufferPointer(buf)) } catch { text = "\(error.code) \(error)" }
        return text + "\n\(p.container)\n\(p.materialize(UnsafeRawBufferPointer(buf)))"
    }

    static func parsers(_ limits: DERLimits = DERLimits()) -> (ReceiptParser, ReceiptParser) {
        let slow = ReceiptParser(limits: limits)
        slow.fastPaths = false
        return (ReceiptParser(limits: limits), slow)
    }

    @Test func wholeReceiptsParseAlikeAndAreBER() {
        let (fast, slow) = Self.parsers()
        for r in Self.receipts {
            let a = Self.outcome(fast, r[...])
            #expect(a.hasPrefix("parsed\n"))
            #expect(fast.container.encoding == .ber)
            #expect(a == Self.outcome(slow, r[...]))
        }
    }

    @Test func everyDepthLimitDecidesAlike() {
        for depth in 1...16 {
            var limits = DERLimits()
            limits.maxDepth = depth
            let (fast, slow) = Self.parsers(limits)
            for r in Self.receipts {
                #expect(Self.outcome(fast, r[...]) == Self.outcome(slow, r[...]), "maxDepth \(depth)")
            }
        }
    }

    @Test func everyTruncationDecidesAlike() {
        let (fast, slow) = Self.parsers()
        let r = Self.receipts[1]
        for cut in 0..<r.count {
            #expect(Self.outcome(fast, r[0..<cut]) == Self.outcome(slow, r[0..<cut]), "prefix \(cut)")
        }
    }

    /// End-of-contents markers moved or broken, lengths turned indefinite or definite: every octet of the
    /// container part (before the payload's first attribute and after the content) set to values that change
    /// how a TLV is read.
    @Test func mutatedContainersDecideAlike() {
        let (fast, slow) = Self.parsers()
        let r = Self.receipts[1]
        var changed = 0
        for k in 0..<r.count where k < 200 || k >= r.count - 600 {
            for v: UInt8 in [0x00, 0x01, 0x04, 0x24, 0x30, 0x80, 0x81, 0x82, 0xA0] where r[k] != v {
                var m = r
                m[k] = v
                let a = Self.outcome(fast, m[...])
                #expect(a == Self.outcome(slow, m[...]), "octet \(k) = \(v)")
                if !a.hasPrefix("parsed") { changed += 1 }
            }
        }
        #expect(changed > 1000, "\(changed)")
    }

    /// What a reader returns for `element(at:limit:depth:)`, as text.
    static func read(_ r: BERReader, _ at: Int, _ limit: Int, _ depth: Int) -> String {
        do throws(ReceiptError) {
            let e = try r.element(at: at, limit: limit, depth: depth)
            return "\(e.contentStart) \(e.contentEnd) \(e.end)"
        } catch {
            return "\(error.code) \(error)"
        }
    }

    /// Readers of `bytes` with and without the memory, the first one warmed by reading the element at 0.
    static func withReaders(_ bytes: [UInt8], maxDepth: Int, _ body: (BERReader, BERReader) -> Void) {
        let memo = IndefiniteEnds()
        defer { memo.deallocate() }
        bytes.withUnsafeBytes { buf in
            var limits = DERLimits()
            limits.maxDepth = maxDepth
            var remembering = BERReader(buf, limits: limits)
            remembering.indefiniteEnds = memo
            let plain = BERReader(buf, limits: limits)
            #expect(read(remembering, 0, buf.count, 0) == read(plain, 0, buf.count, 0))
            body(remembering, plain)
        }
    }

    /// A remembered end past the limit of a later read is not used: that read fails as without the memory.
    @Test func anEndPastTheLimitIsWalkedAgain() {
        // SEQUENCE (indefinite) { SEQUENCE (indefinite) { OCTET STRING AA } }
        let bytes: [UInt8] = [0x30, 0x80, 0x30, 0x80, 0x04, 0x01, 0xAA, 0x00, 0x00, 0x00, 0x00]
        Self.withReaders(bytes, maxDepth: 32) { remembering, plain in
            #expect(Self.read(remembering, 2, 11, 1) == "4 7 9")
            for limit in 4...11 {
                #expect(Self.read(remembering, 2, limit, 1) == Self.read(plain, 2, limit, 1), "limit \(limit)")
            }
            #expect(Self.read(plain, 2, 8, 1).hasPrefix("malformedDER"))
        }
    }

    /// An end remembered from a walk at a shallower depth is not used deeper, where the walk meets the limit.
    @Test func anEndFromAShallowerWalkIsWalkedAgain() {
        // Three nested indefinite SEQUENCEs: at maxDepth 3 readable from depth 0, not from depth 1 on.
        let bytes: [UInt8] = [0x30, 0x80, 0x30, 0x80, 0x30, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
        Self.withReaders(bytes, maxDepth: 3) { remembering, plain in
            for depth in 0...3 {
                for at in [0, 2, 4] {
                    #expect(
                        Self.read(remembering, at, 12, depth) == Self.read(plain, at, 12, depth),
                        "at \(at) depth \(depth)")
                }
            }
            #expect(Self.read(plain, 2, 12, 2).hasPrefix("limitExceeded"))
        }
    }
}
