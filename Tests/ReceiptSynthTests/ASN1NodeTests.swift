import ReceiptSynth
import Testing

@Suite struct ASN1NodeTests {
    static let tree = ASN1Node.constructed(
        tag: 0x30,
        children: [
            .encoded(DER.integer(1)),
            .constructed(tag: 0xA0, children: [.chunkedOctetString([1, 2, 3, 4, 5])], indefiniteInBER: true),
            .constructed(tag: 0x31, children: [.encoded(DER.null)], indefiniteInBER: false),
        ], indefiniteInBER: true)

    @Test func derFormUsesDefiniteLengthsAndAPrimitiveOctetString() {
        #expect(
            Self.tree.encode(.der) == [
                0x30, 0x10, 0x02, 0x01, 0x01, 0xA0, 0x07, 0x04, 0x05, 1, 2, 3, 4, 5, 0x31, 0x02, 0x05, 0x00,
            ])
    }

    @Test func berFormOpensMarkedNodesIndefinitelyAndChunksTheContent() {
        #expect(
            Self.tree.encode(.berIndefinite(chunkSize: 2)) == [
                0x30, 0x80, 0x02, 0x01, 0x01,
                0xA0, 0x80, 0x24, 0x80, 0x04, 0x02, 1, 2, 0x04, 0x02, 3, 4, 0x04, 0x01, 5, 0x00, 0x00, 0x00, 0x00,
                0x31, 0x02, 0x05, 0x00,
                0x00, 0x00,
            ])
    }

    @Test func emptyContentStillGetsOneChunk() {
        #expect(ASN1Node.chunkedOctetString([]).encode(.ber) == [0x24, 0x80, 0x04, 0x00, 0x00, 0x00])
    }
}
