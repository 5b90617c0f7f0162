import ReceiptModel

/// Parses App Store receipts: the PKCS #7 container and the receipt payload, into ranges and decoded numbers.
///
/// One parser per thread. It owns a scratch buffer (for content split across a constructed OCTET STRING) and the
/// storage of the arrays in `container` and `fields`, reused, so a warm parser allocates nothing per receipt;
/// `container` and `fields` themselves are fresh values for every receipt.
/// After `parse` throws, `container` and `fields` still hold whatever was decoded before the error.
public final class ReceiptParser {
    public let limits: DERLimits
    public internal(set) var container = SignedDataView()
    public internal(set) var fields = ReceiptFields()
    /// True once the last `parse` got past the container to the payload: only then do `fields` describe a
    /// receipt (possibly partially, when the payload itself was malformed).
    public internal(set) var reachedPayload = false

    /// Concatenated chunks of a constructed OCTET STRING content.
    var scratch: UnsafeMutableRawBufferPointer
    var scratchCount = 0
    /// See `IndefiniteEnds`; used only with the fast paths on (the fuzz target compares both).
    let indefiniteEnds = IndefiniteEnds()
    var attributeCount = 0
    /// See `BERReader.fastPaths`.
    var fastPaths = true

    public init(limits: DERLimits = DERLimits()) {
        self.limits = limits
        scratch = .allocate(byteCount: 16 << 10, alignment: 16)
        container.certificates.reserveCapacity(limits.maxCertificates)
        fields.inApp.reserveCapacity(64)
    }

    deinit {
        scratch.deallocate()
        indefiniteEnds.deallocate()
    }

    /// Parses the container and the payload of `der`.
    public func parse(_ der: UnsafeRawBufferPointer) throws(ReceiptError) {
        resetFields()
        reachedPayload = false
        try parseContainer(der)
        reachedPayload = true
        try withContent(der) { (payload) throws(ReceiptError) in try parsePayload(payload) }
    }

    /// Calls `body` with the encapsulated content (the receipt payload) of the last parsed container.
    public func withContent<R, E: Error>(
        _ der: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws(E) -> R
    ) throws(E) -> R {
        let r = container.content
        if container.contentInScratch {
            return try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(scratch)[r]))
        }
        precondition(r.upperBound <= der.count, "withContent called with another buffer than the parsed one")
        return try body(UnsafeRawBufferPointer(rebasing: der[r]))
    }

    /// Starts a record: `fields` and `container` become fresh default values (so that nothing of the previous
    /// receipt can carry over, whatever fields the types gain), keeping only the storage of their arrays, emptied.
    func resetFields() {
        var inApp: [InAppFields] = []
        swap(&inApp, &fields.inApp)
        inApp.removeAll(keepingCapacity: true)
        fields = ReceiptFields()
        fields.inApp = inApp
        var certificates: [Range<Int>] = []
        swap(&certificates, &container.certificates)
        certificates.removeAll(keepingCapacity: true)
        container = SignedDataView()
        container.certificates = certificates
        scratchCount = 0
        attributeCount = 0
    }

    /// Appends bytes to the scratch buffer, growing it (the only allocation, and only past the largest seen).
    func appendScratch(_ src: UnsafeRawBufferPointer) throws(ReceiptError) {
        let need = scratchCount + src.count
        guard need <= limits.maxSize else {
            throw ReceiptError(.limitExceeded, "the receipt content is larger than the limit")
        }
        if need > scratch.count {
            var cap = scratch.count
            while cap < need { cap *= 2 }
            let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: cap, alignment: 16)
            bigger.copyMemory(from: UnsafeRawBufferPointer(rebasing: scratch[0..<scratchCount]))
            scratch.deallocate()
            scratch = bigger
        }
        UnsafeMutableRawBufferPointer(rebasing: scratch[scratchCount..<need]).copyMemory(from: src)
        scratchCount = need
    }
}

/// Convenience: decodes one receipt into a materialized `Receipt` (allocates; for tools and tests).
public func decodeReceipt(_ bytes: [UInt8], limits: DERLimits = DERLimits()) throws(ReceiptError) -> (
    SignedDataView, Receipt
) {
    let parser = ReceiptParser(limits: limits)
    // withUnsafeBytes rethrows untyped errors; carry the typed one out through a Result.
    let result: Result<(SignedDataView, Receipt), ReceiptError> = bytes.withUnsafeBytes { der in
        do throws(ReceiptError) {
            try parser.parse(der)
            return .success((parser.container, parser.materialize(der)))
        } catch {
            return .failure(error)
        }
    }
    return try result.get()
}
