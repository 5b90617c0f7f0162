import Dispatch
import Foundation
import Testing

@testable import ReceiptVerify

/// The JWS chain cache: bounded, keyed by the whole certificates, and a chain being verified never holds up a
/// worker checking another chain.
struct JWSVerifierTests {
    /// Three certificates that are not DER: the entry is built quickly (an untrusted chain).
    static func chain(_ n: Int) -> JWSCertificateChain {
        let bytes = withUnsafeBytes(of: UInt64(n).littleEndian) { [UInt8]($0) }
        return JWSCertificateChain([bytes + [1], bytes + [2], bytes + [3]])
    }

    static func verify(_ verifier: JWSVerifier, _ chain: JWSCertificateChain) -> JWSCheck {
        let input: [UInt8] = Array("e30.e30".utf8)
        return input.withUnsafeBytes { verifier.verify(signingInput: $0, signature: [], chain: chain, at: 0) }
    }

    @Test func theChainCacheHoldsAtMostItsCapacityAndEvictsTheOldest() throws {
        let verifier = JWSVerifier(anchors: try TrustAnchors.apple(), capacity: 8)
        for i in 0..<100 {
            #expect(Self.verify(verifier, Self.chain(i)).code == .untrustedChain)
        }
        #expect(verifier.capacity == 8)
        #expect(verifier.cachedChains == 8)
    }

    @Test func chainsOfTheSameCertificatesShareOneEntryAndSplitsDiffer() throws {
        let verifier = JWSVerifier(anchors: try TrustAnchors.apple(), capacity: 64)
        _ = Self.verify(verifier, Self.chain(1))
        _ = Self.verify(verifier, Self.chain(1))
        #expect(verifier.cachedChains == 1)
        // The same bytes split differently between the certificates are another chain.
        let a = JWSCertificateChain([[1, 2], [3], [4]])
        let b = JWSCertificateChain([[1], [2, 3], [4]])
        #expect(a.key != b.key)
    }

    @Test func aChainBeingVerifiedDoesNotHoldUpAnotherChain() throws {
        let slow = Self.chain(1)
        let otherDone = DispatchSemaphore(value: 0)
        let slowStarted = DispatchSemaphore(value: 0)
        let otherFinishedDuringSlowMiss = Flag()
        let verifier = JWSVerifier(anchors: try TrustAnchors.apple(), capacity: 1) { der, anchors in
            if der == slow.der {
                slowStarted.signal()
                // Held until the other chain's verification has finished (or 20 s have passed, if it is blocked).
                let finished = otherDone.wait(timeout: .now() + 20) == .success
                otherFinishedDuringSlowMiss.set(finished)
            }
            return JWSChainEntry.build(der, anchors: anchors)
        }
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { _ = Self.verify(verifier, slow) }
        slowStarted.wait()
        #expect(Self.verify(verifier, Self.chain(2)).code == .untrustedChain)
        otherDone.signal()
        group.wait()
        #expect(otherFinishedDuringSlowMiss.value)
    }
}
