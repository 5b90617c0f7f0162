import ReceiptModel

/// Renders an X.500 Name (RDNSequence) as one line, `CN=..., OU=..., O=..., C=...`, for people (inspect, messages).
public enum NameText {
    /// 2.5.4.x attribute types by their last arc, and emailAddress.
    static let shortNames: [UInt8: String] = [3: "CN", 6: "C", 7: "L", 8: "ST", 10: "O", 11: "OU", 5: "serialNumber"]
    static let emailAddress: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x01]

    /// The Name whose TLV is `range` within `buf`; nil when it is not a well-formed Name.
    public static func render(_ buf: UnsafeRawBufferPointer, _ range: Range<Int>) -> String? {
        let r = BERReader(buf)
        var parts: [String] = []
        do throws(ReceiptError) {
            let name = try r.expect(BERTag.sequence, at: range.lowerBound, limit: range.upperBound)
            try r.forEachChild(of: name, depth: 0) { (rdn) throws(ReceiptError) in
                try r.forEachChild(of: rdn, depth: 1) { (atv) throws(ReceiptError) in
                    let oid = try r.firstChild(of: atv, depth: 2)
                    guard let value = try r.next(after: oid, in: atv, depth: 2) else { return }
                    let text = String(decoding: UnsafeRawBufferPointer(rebasing: buf[value.content]), as: UTF8.self)
                    let c = oid.content
                    var key = "OID"
                    if c.count == 3, buf[c.lowerBound] == 0x55, buf[c.lowerBound + 1] == 0x04 {
                        key = shortNames[buf[c.lowerBound + 2]] ?? "2.5.4.\(buf[c.lowerBound + 2])"
                    } else if r.contentEquals(oid, emailAddress) {
                        key = "emailAddress"
                    }
                    parts.append("\(key)=\(text)")
                }
            }
        } catch {
            return nil
        }
        return parts.reversed().joined(separator: ", ")
    }
}
