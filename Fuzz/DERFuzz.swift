// libFuzzer entry for the BER/DER reader and receipt decoding (built by scripts/fuzz.sh, not by SwiftPM).
// Every input must end in success or a typed ReceiptError; ASan reports any out-of-bounds read. The payload's
// fast paths must decide every input exactly as the element-by-element walk does (same error, same receipt).

nonisolated(unsafe) let parser = ReceiptParser()
nonisolated(unsafe) let reference: ReceiptParser = {
    let p = ReceiptParser()
    p.fastPaths = false
    return p
}()

/// The error `p` ends in (as text, with its reason and offset) and what it decoded.
func decode(_ p: ReceiptParser, _ buf: UnsafeRawBufferPointer) -> (String?, Receipt) {
    var failure: String? = nil
    do throws(ReceiptError) {
        try p.parse(buf)
    } catch {
        precondition(ErrorCode.allCases.contains(error.code))
        failure = "\(error.code) \(error)"
    }
    // Materializing also walks every raw attribute; it must hold for partial results too.
    return (failure, p.materialize(buf))
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buf = UnsafeRawBufferPointer(start: data, count: size)
    let (error, receipt) = decode(parser, buf)
    precondition(receipt.inApp.count <= parser.limits.maxInAppEntries)
    let (referenceError, referenceReceipt) = decode(reference, buf)
    precondition(error == referenceError, "fast: \(error ?? "parsed"), slow: \(referenceError ?? "parsed")")
    precondition(receipt == referenceReceipt, "the fast and the element-by-element walk decoded different receipts")
    for range in parser.container.certificates {
        _ = try? CertificateView.parse(buf, range)
        _ = NameText.render(buf, range)
    }
    return 0
}
