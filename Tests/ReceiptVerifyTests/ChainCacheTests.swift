import Dispatch
import ReceiptDER
import ReceiptModel
import ReceiptSynth
import Synchronization
import Testing

@testable import ReceiptVerify

/// The shared chain cache: one chain verification per distinct chain, validity still judged per receipt, a
/// bounded table, and the same outcomes from many threads.
struct ChainCacheTests {
    static let day: Int64 = 86_400_000

    @Test func manyReceiptsFromOneChainCostOneMiss() throws {
        let verifier = try TestCA.verifier()
        let n = 25
        for i in 0..<n {
            let receipt = try TestCA.receipt(created: TestCA.created2020 + Int64(i) * Self.day, marker: "r\(i)")
            #expect(receipt.verify(with: verifier).verified)
        }
        #expect(verifier.cache.misses == 1)
        #expect(verifier.cache.hits == n - 1)
        #expect(verifier.cache.count == 1)
    }

    @Test func validityIsCheckedPerReceiptEvenOnACacheHit() throws {
        let verifier = try TestCA.verifier()
        #expect(try TestCA.receipt().verify(with: verifier).verified)
        #expect(verifier.cache.misses == 1)
        // The genuine leaf expires on 2038-01-01; a receipt dated after that is rejected although the chain
        // verdict comes from the cache.
        let late = TestPKI.leafNotAfter * 1000 + Self.day
        let outcome = try TestCA.receipt(created: late, marker: "late").verify(with: verifier)
        #expect(outcome.error == .certificateExpired)
        let early = TestPKI.leafNotBefore * 1000 - Self.day
        #expect(
            try TestCA.receipt(created: early, marker: "early").verify(with: verifier).error == .certificateNotYetValid)
        #expect(verifier.cache.misses == 1)
        #expect(verifier.cache.hits == 2)
    }

    @Test func distinctChainsAreDistinctEntries() throws {
        let verifier = try TestCA.verifier()
        let variants: [TestPKI.Variant] = [.valid, .foreignCA, .impostor, .developerLeaf, .valid, .impostor]
        let codes = try variants.map { try TestCA.receipt($0).verify(with: verifier).error }
        #expect(codes == [nil, .untrustedChain, .untrustedChain, .certificatePolicy, nil, .untrustedChain])
        #expect(verifier.cache.misses == 4)
        #expect(verifier.cache.hits == 2)
    }

    @Test func sameCertificatesWithAnotherSignerIdentifierAreAnotherEntry() throws {
        let verifier = try TestCA.verifier()
        #expect(try TestCA.receipt().verify(with: verifier).verified)
        let missing = try TestCA.receipt { $0.signerSerialMismatch = true }
        #expect(missing.verify(with: verifier).error == .signerNotFound)
        #expect(verifier.cache.misses == 2)
    }

    /// A stream of distinct keys larger than the table: every verdict is still right, and the table stops
    /// growing at its capacity (no unbounded memory).
    @Test func tableIsBoundedAndOverflowStillVerifies() throws {
        let verifier = try TestCA.verifier(capacity: 16)
        let receipt = try TestCA.receipt()
        // Point the signer's serial at 40 different 3-byte windows of the leaf's signature (random bytes): 40
        // distinct keys, none naming an embedded certificate.
        let start = receipt.container.certificates[0].upperBound - 100
        let windows = Set((0..<40).map { i in Array(receipt.der[(start + i)..<(start + i + 3)]) })
        #expect(windows.count == 40)
        func pass() {
            for i in 0..<40 {
                var r = receipt
                r.container.signerSerial = (start + i)..<(start + i + 3)
                #expect(r.verify(with: verifier).error == .signerNotFound)
            }
        }
        pass()
        let firstPassMisses = verifier.cache.misses
        #expect(firstPassMisses == windows.count)
        #expect(verifier.cache.count <= 16)
        // Keys that did not fit miss again on a second pass; the table does not grow past its capacity.
        pass()
        #expect(verifier.cache.misses - firstPassMisses >= windows.count - 16)
        #expect(verifier.cache.count <= 16)
        #expect(verifier.cache.capacity == 16)
        // The genuine key still verifies (cached or not).
        #expect(receipt.verify(with: verifier).verified)
    }

    @Test func concurrentVerificationGivesTheSameOutcomes() throws {
        let receipts: [ParsedReceipt] = try [
            TestCA.receipt(),
            TestCA.receipt(created: TestCA.created2020 + Self.day, marker: "b") { $0.digest = .sha1 },
            TestCA.receipt(.foreignCA),
            TestCA.receipt(.impostor),
            TestCA.receipt(.developerLeaf),
            TestCA.receipt(.intermediateWithoutCA),
            TestCA.receipt(.expiredLeaf),
            TestCA.receipt { $0.flipSignatureBit = true },
            TestCA.receipt { $0.signerSerialMismatch = true },
            TestCA.receipt(created: TestPKI.leafNotAfter * 1000 + Self.day, marker: "late"),
        ]
        let expected = try receipts.map { $0.verify(with: try TestCA.verifier()).error }
        let cache = ChainCache(anchors: try TestCA.anchors())
        let threads = 4
        let rounds = 25
        let mismatches = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            let verifier = ReceiptVerifier(cache: cache)
            for round in 0..<rounds {
                for k in receipts.indices {
                    // Each thread walks the receipts in a different order to mix misses and hits.
                    let i = (k + t * 3 + round) % receipts.count
                    if receipts[i].verify(with: verifier).error != expected[i] {
                        mismatches.wrappingAdd(1, ordering: .relaxed)
                    }
                }
            }
        }
        #expect(mismatches.load(ordering: .relaxed) == 0)
        #expect(cache.hits + cache.misses == threads * rounds * receipts.count)
        // Chains are verified with no lock held: two threads missing one chain at the same time both verify it
        // (the first stored wins), so each distinct key costs at least one miss and at most one per thread.
        #expect(cache.misses >= cache.count && cache.misses <= cache.count * threads)
        // Distinct keys: the genuine chain (shared by the sha1, flipped-bit and late receipts), foreign, impostor,
        // developer leaf, non-CA intermediate, expired leaf, and the genuine chain with a missing signer.
        #expect(cache.count == 7)
    }

    @Test func aChainBeingVerifiedDoesNotHoldUpAnotherChain() throws {
        let slow = try TestCA.receipt()
        let other = try TestCA.receipt(.foreignCA)
        let expected = other.verify(with: try TestCA.verifier()).error
        #expect(expected != nil)
        let slowCertificate = Array(slow.der[slow.container.certificates[0]])
        let otherDone = DispatchSemaphore(value: 0)
        let slowStarted = DispatchSemaphore(value: 0)
        let otherFinishedDuringSlowMiss = Flag()
        let cache = ChainCache(anchors: try TestCA.anchors(), capacity: 16, receiptVerdicts: 16) { request in
            let first = request.certificates.first.map { Array(request.der[$0]) }
            if first == slowCertificate {
                slowStarted.signal()
                // Held until the other chain's verification has finished (or 20 s have passed, if it is blocked).
                otherFinishedDuringSlowMiss.set(otherDone.wait(timeout: .now() + 20) == .success)
            }
            return ChainBuilder.build(request)
        }
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            #expect(slow.verify(with: ReceiptVerifier(cache: cache)).verified)
        }
        slowStarted.wait()
        #expect(other.verify(with: ReceiptVerifier(cache: cache)).error == expected)
        otherDone.signal()
        group.wait()
        #expect(otherFinishedDuringSlowMiss.value)
        #expect(cache.misses == 2)
    }

    @Test func aChainKnownToFailIsRejectedBeforeItsSignatureIsChecked() throws {
        let verifier = try TestCA.verifier()
        // Both the chain and the signature are wrong: the chain's cached failure is what the receipt gets.
        #expect(try TestCA.receipt(.foreignCA).verify(with: verifier).error == .untrustedChain)
        let flipped = try TestCA.receipt(.foreignCA, marker: "b") { $0.flipSignatureBit = true }
        #expect(flipped.verify(with: verifier).error == .untrustedChain)
        #expect(
            try TestCA.receipt(.developerLeaf) { $0.flipSignatureBit = true }.verify(with: verifier).error
                == .certificatePolicy)
        // Under a trusted chain the same flipped bit is a bad signature.
        #expect(try TestCA.receipt { $0.flipSignatureBit = true }.verify(with: verifier).error == .badSignature)
    }

    @Test func chainsDifferingOnlyBeforeTheirLastBytesAreDistinctEntries() throws {
        let verifier = try TestCA.verifier()
        let genuine = try TestCA.receipt()
        #expect(genuine.verify(with: verifier).verified)
        // One byte changed in the middle of the leaf certificate: same length, same trailing bytes.
        var altered = genuine
        let leaf = altered.container.certificates[0]
        let middle = leaf.lowerBound + leaf.count / 2
        altered.der[middle] ^= 0x01
        #expect(altered.verify(with: verifier).verified == false)
        #expect(verifier.cache.misses == 2)
        #expect(verifier.cache.count == 2)
    }

    @Test func theCacheEvictsItsOldestChainsWhenFull() throws {
        let verifier = try TestCA.verifier(capacity: 2)
        let variants: [TestPKI.Variant] = [.valid, .foreignCA, .impostor, .developerLeaf]
        for v in variants { _ = try TestCA.receipt(v).verify(with: verifier) }
        #expect(verifier.cache.count == 2)
        // Every verdict is still right after eviction (the evicted chain is verified again).
        for v in variants.reversed() { _ = try TestCA.receipt(v).verify(with: verifier) }
        #expect(try TestCA.receipt(.valid).verify(with: verifier).verified)
        #expect(verifier.cache.count == 2)
    }

    @Test func aReceiptSeenBeforeReusesItsSignatureVerdictButIsJudgedAtItsOwnTime() throws {
        let verifier = try TestCA.verifier()
        let receipt = try TestCA.receipt()
        #expect(receipt.verify(with: verifier, remembered: true).verified)
        #expect(verifier.cache.signatures.count == 1)
        // The same bytes again: the stored verdict, and the validity still judged at the time asked for.
        #expect(receipt.verify(with: verifier, remembered: true).verified)
        let late = TestPKI.leafNotAfter * 1000 + Self.day
        #expect(receipt.verify(with: verifier, at: late, remembered: true).error == .certificateExpired)
        #expect(verifier.cache.signatures.count == 1)
        #expect(verifier.cache.misses == 1)
        // A tampered copy of the same length has other bytes, so another digest: it is checked, and fails.
        var tampered = receipt
        let at = tampered.container.signature.lowerBound + 10
        tampered.der[at] ^= 0x01
        #expect(tampered.verify(with: verifier, remembered: true).error == .badSignature)
        #expect(verifier.cache.signatures.count == 2)
        // A rejection is remembered too, and given again.
        #expect(tampered.verify(with: verifier, remembered: true).error == .badSignature)
        #expect(verifier.cache.signatures.count == 2)
    }

    @Test func theReceiptVerdictsAreBounded() throws {
        let cache = ChainCache(anchors: try TestCA.anchors(), receiptVerdicts: 4)
        let verifier = ReceiptVerifier(cache: cache)
        for i in 0..<10 {
            let receipt = try TestCA.receipt(created: TestCA.created2020 + Int64(i) * Self.day, marker: "v\(i)")
            #expect(receipt.verify(with: verifier, remembered: true).verified)
        }
        #expect(cache.signatures.count == 4)
        #expect(cache.signatures.capacity == 4)
    }
}
