import ReceiptSynth

/// Calls `body` for every first length 0...300 paired with partners around the SHA block and padding boundaries
/// (55/56: the length still fits the last block or spills into another; 64: a whole block; 119/120, 183/184 the
/// same one and two blocks later), an equal, a one-block-longer and a random partner. Fresh random bytes each time,
/// at random offsets so that no lane reads from an aligned start. The two-lane kernels' tests compare them with
/// OpenSSL over these pairs.
func forEveryLanePair(
    seed: UInt64, _ body: (_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer, _ na: Int, _ nb: Int) -> Void
) {
    var rng = SplitMix(seed: seed)
    for na in 0...300 {
        for nb in [0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 183, 184, 192, 300, na, na + 64, rng.int(301)] {
            let oa = rng.int(64)
            let ob = rng.int(64)
            let bytesA = rng.bytes(oa + na)
            let bytesB = rng.bytes(ob + nb)
            bytesA.withUnsafeBytes { pa in
                bytesB.withUnsafeBytes { pb in
                    body(
                        UnsafeRawBufferPointer(rebasing: pa[oa...]), UnsafeRawBufferPointer(rebasing: pb[ob...]), na, nb
                    )
                }
            }
        }
    }
}
