import ReceiptModel

/// The verdicts on whole receipts already verified in this run, by the SHA-256 of the receipt's bytes (which
/// `receipt_sha256` computes anyway): a receipt seen again reuses the outcome of its signature check instead of
/// computing it again. Only what the bytes alone decide is kept (the signer, the algorithms, the digests, the RSA
/// signature, and the chain it names); the validity of the chain at the record's own date is judged per record.
///
/// Bounded: at most `capacity` verdicts (each a pair of digests and a reason, under 100 bytes with the
/// dictionary's overhead: about 13 MB at the default), the oldest evicted first.
public final class ReceiptVerdicts: @unchecked Sendable {
    /// 131,072 receipts.
    public static let defaultCapacity = 1 << 17

    /// What the signature check concluded for one receipt's bytes.
    struct Verdict {
        /// The chain the receipt names (`ChainKey`), looked up again on reuse.
        let chain: SHA256Digest
        /// What the signature check concluded.
        let signature: SignatureCheck
    }

    private let table: DigestKeyedCache<Verdict>
    /// The most verdicts held.
    public var capacity: Int { table.capacity }

    init(capacity: Int) {
        table = DigestKeyedCache(capacity: capacity, shards: capacity >= 256 ? 16 : 1)
    }

    func verdict(for receipt: SHA256Digest) -> Verdict? { table.value(for: receipt) }

    func store(_ verdict: Verdict, for receipt: SHA256Digest) { table.insert(verdict, for: receipt) }

    /// Verdicts held.
    public var count: Int { table.count }
}

/// What the bytes of one receipt decide about its signature.
enum SignatureCheck: Sendable {
    /// The signature matched the content.
    case verified
    /// Not checked: the chain is known to fail its trust policies, which reject the receipt.
    case unchecked
    /// Rejected, with the code and reason.
    case failed(ErrorCode, VerifyOutcome.Reason)
}
