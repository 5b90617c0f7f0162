import Dispatch
import Foundation
import ReceiptSynth
import ReceiptVerify
import Testing

@testable import ReceiptJWS

/// One evaluator over a stream that switches between headers and chains: the header and chain it saw last are
/// reused only for the same header text and the same chain, so every JWS still gets its own verdict.
struct JWSCacheReuseTests {
    /// Every kind, each twice in a row and the whole sequence twice, so that each follows both itself and others.
    static var stream: [JWSFactory.Kind] {
        let once = JWSFactory.Kind.allCases.flatMap { [$0, $0, .good] }
        return once + once.reversed()
    }

    static func sign(_ kind: JWSFactory.Kind, _ i: Int) -> String {
        var payload = GeneratedJWSTests.transaction
        payload["transactionId"] = String(2_000_000_123_000_000 + i)
        return GeneratedJWSTests.factory.sign(payload, kind: kind)
    }

    @Test func eachJWSOfAMixedStreamGetsItsOwnCode() throws {
        let evaluator = try GeneratedJWSTests.evaluator()
        for (i, kind) in Self.stream.enumerated() {
            let verdict = evaluator.evaluate(Self.sign(kind, i))
            #expect(verdict.code?.rawValue == kind.expectedCode, "#\(i) \(kind): \(verdict.detail ?? "")")
            #expect(verdict.verified == (kind == .good))
        }
    }

    @Test func threadsSharingOneEvaluatorGetTheSameVerdicts() throws {
        let evaluator = try GeneratedJWSTests.evaluator()
        let items = Self.stream.enumerated().map { (kind: $0.element, text: Self.sign($0.element, $0.offset)) }
        let wrong = NSLock()
        nonisolated(unsafe) var mismatches: [String] = []
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            for k in 0..<(items.count * 3) {
                let item = items[(k * (t + 1)) % items.count]
                let verdict = evaluator.evaluate(item.text)
                if verdict.code?.rawValue != item.kind.expectedCode {
                    wrong.lock()
                    mismatches.append("\(item.kind) on thread \(t): \(verdict.code?.rawValue ?? "valid")")
                    wrong.unlock()
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
