// libFuzzer entry for the BER/DER reader and receipt decoding (built by scripts/fuzz.sh, not by SwiftPM).
// Every input must end in success or a typed ReceiptError; ASan reports any out-of-bounds read.

nonisolated(unsafe) let parser = ReceiptParser()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let buf = UnsafeRawBufferPointer(start: data, count: size)
    do throws(ReceiptError) {
        try parser.parse(buf)
    } catch {
        precondition(ErrorCode.allCases.contains(error.code))
    }
    // Materializing also walks every raw attribute; it must hold for partial results too.
    let receipt = parser.materialize(buf)
    precondition(receipt.inApp.count <= parser.limits.maxInAppEntries)
    for range in parser.container.certificates {
        _ = try? CertificateView.parse(buf, range)
        _ = NameText.render(buf, range)
    }
    return 0
}
