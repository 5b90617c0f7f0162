/// How a container is written: definite-length DER, or BER the way Xcode / `openssl cms -sign -stream` writes it.
public enum EncodingForm: Sendable, Equatable, Hashable {
    /// Definite lengths everywhere (Apple-signed receipts).
    case der
    /// Indefinite lengths (`30 80 ... 00 00`) on the nodes marked `indefiniteInBER`, and chunked OCTET STRINGs
    /// written as a constructed OCTET STRING (`24 80 04 len chunk ... 00 00`) of chunks of at most `chunkSize`
    /// bytes.
    case berIndefinite(chunkSize: Int)

    /// BER with 1000-byte chunks, close to what Xcode writes.
    public static let ber = EncodingForm.berIndefinite(chunkSize: 1000)
}

/// A tree of ASN.1 values that can be written either as DER or as BER with indefinite lengths.
///
/// Only the nodes that streaming encoders open before knowing their size (`indefiniteInBER: true`) and the
/// `chunkedOctetString` change between the forms; everything else is written as DER in both.
public indirect enum ASN1Node: Sendable {
    /// An already encoded TLV, copied as is.
    case encoded([UInt8])
    /// A constructed value (`tag` includes the constructed bit, e.g. 0x30, 0xA0).
    case constructed(tag: UInt8, children: [ASN1Node], indefiniteInBER: Bool)
    /// An OCTET STRING that BER splits into a constructed OCTET STRING of chunks (the encapsulated content).
    case chunkedOctetString([UInt8])

    /// The encoding of this node in `form`.
    public func encode(_ form: EncodingForm) -> [UInt8] {
        var out: [UInt8] = []
        write(form, into: &out)
        return out
    }

    /// Appends the encoding of this node in `form` to `out`.
    public func write(_ form: EncodingForm, into out: inout [UInt8]) {
        switch self {
        case .encoded(let bytes):
            out += bytes
        case .chunkedOctetString(let bytes):
            guard case .berIndefinite(let chunkSize) = form else {
                out += DER.octetString(bytes)
                return
            }
            precondition(chunkSize > 0, "chunk size must be positive")
            out += [0x24, 0x80]
            var start = 0
            repeat {
                let end = min(start + chunkSize, bytes.count)
                out += DER.octetString(Array(bytes[start..<end]))
                start = end
            } while start < bytes.count
            out += [0x00, 0x00]
        case .constructed(let tag, let children, let indefinite):
            if indefinite, case .berIndefinite = form {
                out += [tag, 0x80]
                for child in children { child.write(form, into: &out) }
                out += [0x00, 0x00]
            } else {
                var content: [UInt8] = []
                for child in children { child.write(form, into: &content) }
                out += [tag] + DER.length(content.count) + content
            }
        }
    }
}
