import ReceiptDER
import ReceiptModel
import ReceiptVerify

extension StagePass {
    /// The signed-digest floor over the batch's copied contents: every two of one algorithm together, as fast as
    /// this machine hashes (`Floors.signedDigestPair`), a last one of each algorithm alone. Returns (items, bytes).
    func signedDigests() -> (Int, Int) {
        var bytes = 0
        var k = 0
        // In range: every range was cut from the arena by copyContents.
        let arena = UnsafeRawBufferPointer(contentArena)
        while k < contents.count {
            let (r, sha256) = contents[k]
            if k + 1 < contents.count && contents[k + 1].sha256 == sha256 {
                let r2 = contents[k + 1].range
                Floors.signedDigestPair(
                    hasher, UnsafeRawBufferPointer(rebasing: arena[r]), UnsafeRawBufferPointer(rebasing: arena[r2]),
                    sha256: sha256, into: digestOut)
                bytes += r.count + r2.count
                k += 2
            } else {
                Floors.signedDigest(UnsafeRawBufferPointer(rebasing: arena[r]), sha256: sha256, into: digestOut)
                bytes += r.count
                k += 1
            }
        }
        return (contents.count, bytes)
    }

    /// Parses and verifies the batch's receipts one at a time, as `RecordProcessor` does. Returns (items, bytes).
    func parseAndVerify(_ t: inout Totals) -> (Int, Int) {
        var bytes = 0
        for d in ders {
            bytes += d.count
            if parse(parser, d) { verify(parser, d, &t) }
        }
        return (ders.count, bytes)
    }

    private func parse(_ p: ReceiptParser, _ d: UnsafeRawBufferPointer) -> Bool {
        do throws(ReceiptError) { try p.parse(d) } catch { return false }
        return true
    }

    private func verify(_ p: ReceiptParser, _ d: UnsafeRawBufferPointer, _ t: inout Totals) {
        let created = p.fields.receiptCreationDate ?? 0
        let m = Measure.mallocs()
        let o = p.withContent(d) { content in
            verifier.verify(
                der: d, container: p.container, content: content, validationTime: created)
        }
        if o.error == nil {
            t.valid += 1
            t.validAllocations += Int(Measure.mallocs() &- m)
        }
        t.verifyCalls += 1
        switch o.error {
        case nil, .badSignature?, .certificatePolicy?, .certificateExpired?, .certificateNotYetValid?:
            t.rsa += 1
        default: break
        }
    }
}
