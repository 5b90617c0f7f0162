import Foundation
import Testing

@testable import ReceiptJWS

/// The base64url decoder against Foundation's base64 decoder, on every length and on bytes outside the alphabet.
struct Base64URLTests {
    static func decode(_ text: String) -> [UInt8]? {
        var s = text
        return s.withUTF8 { Base64URL.decode(UnsafeRawBufferPointer($0)) }
    }

    /// Foundation's decoding of `text` read as base64url (alphabet mapped, padding added).
    static func reference(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        s += String(repeating: "=", count: (4 - s.count % 4) % 4)
        return Data(base64Encoded: s).map { [UInt8]($0) }
    }

    @Test func decodesEveryLengthAsFoundationDoes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for length in 0..<200 {
            var bytes: [UInt8] = []
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                bytes.append(UInt8(truncatingIfNeeded: state >> 33))
            }
            let text = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            if length == 0 {
                #expect(Self.decode(text) == nil)
            } else {
                #expect(Self.decode(text) == bytes, "length \(length)")
                #expect(Self.reference(text) == bytes)
            }
        }
    }

    @Test func rejectsBytesOutsideTheAlphabetAnywhere() {
        let text = "eyJhbGciOiJFUzI1NiJ9eyJhbGciOiJFUzI1NiJ9Zm9vYg"
        #expect(Self.decode(text) != nil)
        for position in [0, 1, 2, 3, 17, text.count - 2, text.count - 1] {
            for bad in ["=", "+", "/", "*", ".", " ", "\u{7F}", "é"] {
                var chars = Array(text)
                chars[position] = Character(bad)
                let broken = String(chars)
                #expect(Self.decode(broken) == nil, "\(bad) at \(position)")
            }
        }
    }

    @Test func rejectsLengthsNoEncodingProduces() {
        #expect(Self.decode("A") == nil)
        #expect(Self.decode("AAAAA") == nil)
        #expect(Self.decode("AA") == [0])
        #expect(Self.decode("AAA") == [0, 0])
    }
}
