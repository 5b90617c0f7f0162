import Dispatch
import Foundation
import Testing

@testable import ReceiptJWS

/// The decoded-header cache: each header is judged by its own text, the cache stays within its capacity, and
/// threads sharing it get the header their text decodes to.
@Suite struct JWSHeaderCacheTests {
    /// The base64url text of a header naming `alg` and carrying `kid` (an extra member that makes texts differ).
    static func headerText(alg: String, kid: Int) -> [UInt8] {
        let json = #"{"alg":"\#(alg)","kid":"\#(kid)","x5c":[]}"#
        let b64 = Data(json.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
        return Array(b64.utf8)
    }

    static func alg(_ cache: JWSHeaderCache, _ text: [UInt8]) throws -> String {
        try text.withUnsafeBytes { buffer throws(JWSError) in try cache.header(buffer).alg }
    }

    @Test func eachHeaderTextDecodesToItsOwnHeaderAfterOthers() throws {
        let cache = JWSHeaderCache(capacity: 64)
        for round in 0..<3 {
            for i in 0..<10 {
                let alg = i % 2 == 0 ? "ES256" : "RS\(i)"
                #expect(try Self.alg(cache, Self.headerText(alg: alg, kid: i)) == alg, "round \(round), header \(i)")
            }
        }
        #expect(cache.count == 10)
    }

    @Test func aHeaderThatFailsToDecodeFailsEveryTimeWithoutHidingOthers() throws {
        let cache = JWSHeaderCache(capacity: 64)
        let bad = Array("not-a-json-header".utf8)
        for _ in 0..<3 {
            #expect(throws: JWSError.self) { try Self.alg(cache, bad) }
            #expect(try Self.alg(cache, Self.headerText(alg: "ES256", kid: 1)) == "ES256")
        }
    }

    @Test func manyDistinctHeadersNeverHoldMoreThanTheCapacity() throws {
        let cache = JWSHeaderCache(capacity: 32)
        for i in 0..<500 {
            #expect(try Self.alg(cache, Self.headerText(alg: "ES256", kid: i)) == "ES256")
        }
        #expect(cache.count <= 32)
        #expect(try Self.alg(cache, Self.headerText(alg: "ES384", kid: 0)) == "ES384")
    }

    @Test func threadsSharingTheCacheGetTheHeaderOfTheirOwnText() {
        let cache = JWSHeaderCache(capacity: 256)
        let texts = (0..<40).map { Self.headerText(alg: "A\($0)", kid: $0) }
        let wrong = NSLock()
        nonisolated(unsafe) var mismatches = 0
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for k in 0..<400 {
                let i = (k * (t + 3)) % texts.count
                if (try? Self.alg(cache, texts[i])) != "A\(i)" {
                    wrong.withLock { mismatches += 1 }
                }
            }
        }
        #expect(mismatches == 0)
    }
}
