import Foundation
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import ReceiptTestSupport
import Testing

/// Malformed input must end in a typed error, never a crash or an out-of-bounds read. The buffers handed to the
/// parser are exactly sized heap copies, so a read past the end would hit the allocator's guard in ASan runs.
@Suite
struct MalformedInputTests {
    static let names = Fixtures.realReceiptNames()

    /// Parses `bytes` from an exactly sized buffer; returns the error code, or nil when it parsed.
    static func outcome(_ parser: ReceiptParser, _ bytes: ArraySlice<UInt8>) -> ErrorCode? {
        let buf = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        defer { buf.deallocate() }
        buf.copyBytes(from: bytes)
        do throws(ReceiptError) {
            try parser.parse(UnsafeRawBufferPointer(buf))
            _ = parser.materialize(UnsafeRawBufferPointer(buf))
            return nil
        } catch {
            return error.code
        }
    }

    @Test(arguments: names)
    func everyTruncationIsRejected(_ name: String) throws {
        let bytes = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
        let parser = ReceiptParser()
        #expect(Self.outcome(parser, bytes[...]) == nil)
        for cut in 0..<bytes.count {
            let code = Self.outcome(parser, bytes[0..<cut])
            // A truncated container can never be complete: every prefix must fail as malformed.
            #expect(
                code == .malformedDER || code == .limitExceeded,
                "prefix of \(cut) bytes gave \(String(describing: code))")
        }
    }

    @Test func randomByteFlipsNeverCrash() throws {
        var rng = SplitMix(seed: 0x5EED)
        let parser = ReceiptParser()
        var outcomes: [String: Int] = [:]
        var cases = 0
        for name in Self.names {
            let original = try Fixtures.bytes(Fixtures.realDir.appendingPathComponent(name))
            for _ in 0..<400 {
                var b = original
                for _ in 0..<(1 + Int(rng.next() % 4)) {
                    let i = Int(rng.next() % UInt64(b.count))
                    b[i] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255)
                }
                let code = Self.outcome(parser, b[...])
                outcomes[code?.rawValue ?? "parsed", default: 0] += 1
                cases += 1
            }
        }
        #expect(cases == Self.names.count * 400)
        // Flips in the signature or certificates still parse; flips in the structure must be caught.
        #expect(outcomes["malformed_der", default: 0] > 0)
        #expect(outcomes["parsed", default: 0] > 0)
        let allowed: Set<String> = [
            "parsed", "malformed_der", "malformed_attribute", "limit_exceeded", "signer_not_found",
        ]
        #expect(Set(outcomes.keys).isSubset(of: allowed), "\(outcomes)")
    }

    @Test func lengthClaimingGigabytesIsRejected() {
        // SEQUENCE with a 4-byte length of 0xFFFFFFF0 and almost nothing behind it.
        let bytes: [UInt8] = [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xF0, 0x06, 0x01, 0x00]
        #expect(Self.outcome(ReceiptParser(), bytes[...]) == .malformedDER)
    }

    @Test func deepNestingBombIsRejectedInBoundedDepth() {
        // 10,000 nested indefinite-length SEQUENCEs: the depth limit stops the walk.
        var bytes: [UInt8] = []
        for _ in 0..<10_000 { bytes += [0x30, 0x80] }
        for _ in 0..<10_000 { bytes += [0x00, 0x00] }
        #expect(Self.outcome(ReceiptParser(), bytes[...]) == .limitExceeded)
    }

    @Test func primitiveWithIndefiniteLengthIsRejected() {
        let bytes: [UInt8] = [0x30, 0x80, 0x04, 0x80, 0x00, 0x00, 0x00, 0x00]
        #expect(Self.outcome(ReceiptParser(), bytes[...]) == .malformedDER)
    }

    @Test func emptyAndGarbageInputsAreMalformed() {
        let parser = ReceiptParser()
        #expect(Self.outcome(parser, [][...]) == .malformedDER)
        #expect(Self.outcome(parser, Array("hello world".utf8)[...]) == .malformedDER)
        #expect(Self.outcome(parser, [0x30, 0x00][...]) == .malformedDER)
    }
}
