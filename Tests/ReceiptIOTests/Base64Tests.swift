import Foundation
import ReceiptIO
import ReceiptModel
import ReceiptSynth
import Testing

private func decode(_ s: String) -> Result<[UInt8], ReceiptError> {
    let input = Array(s.utf8)
    let inp = UnsafeMutableRawBufferPointer.allocate(byteCount: max(input.count, 1), alignment: 1)
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: Base64.maxDecodedCount(input.count), alignment: 1)
    defer {
        inp.deallocate()
        out.deallocate()
    }
    inp.copyBytes(from: input)
    do throws(ReceiptError) {
        let n = try Base64.decode(UnsafeRawBufferPointer(rebasing: inp[0..<input.count]), into: out)
        return .success(Array(out[0..<n]))
    } catch {
        return .failure(error)
    }
}

@Suite struct Base64Tests {
    // Long inputs go through the 32-character SIMD blocks (when the CPU has AVX2) and the 8-character path.
    @Test func agreesWithFoundationOnLongRandomDataPlainAndWrapped() throws {
        var rng = SplitMix(seed: 11)
        for length in stride(from: 200, to: 1400, by: 7) {
            let data = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let text = Data(data).base64EncodedString()
            #expect(try decode(text).get() == data, "length \(length)")
            let wrapped = Data(data).base64EncodedString(options: [.lineLength76Characters, .endLineWithCarriageReturn])
            #expect(try decode(wrapped).get() == data, "wrapped, length \(length)")
        }
    }

    @Test func rejectsABadCharacterAtAnyPositionOfALongInputWithItsOffset() throws {
        var rng = SplitMix(seed: 12)
        let data = (0..<300).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        let text = Array(Data(data).base64EncodedString().utf8)
        for position in 0..<text.count {
            var bad = text
            bad.insert(UInt8(ascii: "*"), at: position)
            guard case .failure(let e) = decode(String(decoding: bad, as: UTF8.self)) else {
                Issue.record("accepted a '*' at \(position)")
                continue
            }
            #expect(e.code == .invalidBase64 && e.offset == position, "position \(position)")
        }
    }

    @Test func agreesWithFoundationOnRandomData() throws {
        var rng = SplitMix(seed: 7)
        for length in 0..<200 {
            let data = (0..<length).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let text = Data(data).base64EncodedString()
            #expect(try decode(text).get() == data, "length \(length)")
        }
    }

    @Test func acceptsMissingPadding() throws {
        #expect(try decode("QQ").get() == [0x41])
        #expect(try decode("QUI").get() == [0x41, 0x42])
        #expect(try decode("QUJD").get() == [0x41, 0x42, 0x43])
    }

    @Test func acceptsTheURLSafeAlphabetOnBothPaths() throws {
        // 0xFB 0xFF 0xBF is "+/+/" in the standard alphabet and "-_-_" in the URL-safe one.
        #expect(try decode("-_-_").get() == [0xFB, 0xFF, 0xBF])
        #expect(try decode("-_-_").get() == (try decode("+/+/").get()))
        // Long enough for the AVX2 blocks: a block holding `-` or `_` falls back to the scalar path.
        let data = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 37) }
        let standard = Data(data).base64EncodedString()
        let urlSafe = standard.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        #expect(urlSafe != standard)
        #expect(try decode(urlSafe).get() == data)
        #expect(try decode(String(urlSafe.prefix(while: { $0 != "=" }))).get() == data)
    }

    @Test func ignoresWhitespaceAnywhereIncludingLineWrapping() throws {
        let data = (0..<300).map { UInt8($0 & 0xFF) }
        let wrapped = Data(data).base64EncodedString(options: [
            .lineLength64Characters, .endLineWithCarriageReturn,
            .endLineWithLineFeed,
        ])
        #expect(try decode(wrapped).get() == data)
        #expect(try decode(" Q U\tJ\nD \r").get() == [0x41, 0x42, 0x43])
        #expect(try decode("QQ = =").get() == [0x41])
    }

    @Test(arguments: [
        "Q", "QUJDR", "Q===", "QQ=", "QUI==", "=QQ", "QQ==QQ", "QUJD=", "QU.D", "QU%D", "QUJ\u{e9}",
    ])
    func rejectsMalformedText(text: String) {
        guard case .failure(let e) = decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(e.code == .invalidBase64)
    }

    @Test func decodesToNothingForOnlyWhitespace() throws {
        #expect(try decode(" \n\t ").get() == [])
    }
}
