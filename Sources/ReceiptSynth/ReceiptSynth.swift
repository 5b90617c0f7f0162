// ReceiptSynth: synthetic App Store receipts, signed by a test CA that the project controls.
//
// The pieces, from the bottom up:
// - `DER` (TLV encoders) and `ASN1Node` (a tree written as DER or as BER with indefinite lengths and a chunked
//   content OCTET STRING, the way Xcode and `openssl cms -sign -stream` write receipts).
// - `TestPKI`: an Apple-shaped RSA-2048 chain (root -> WWDR-like intermediate -> receipt-signing leaf) plus the
//   variants negative tests need (`TestPKI.Variant`, `customLeaf(notBefore:notAfter:)`). Keys derive from a seed,
//   so `TestPKI.load(directory: nil)` in a test gives the same root as `data/test-root.pem`.
// - `ReceiptSigner.sign(payload:identity:options:)`: PKCS #7 SignedData around a payload; SHA-1 / SHA-256 / MD5,
//   `rsaEncryption` or `sha256WithRSAEncryption` labels, optional signed attributes, DER or BER, and knobs that
//   break one thing each (unknown signer serial, disagreeing digestAlgorithms, tampered content, flipped bit).
// - `PayloadBuilder` / `ReceiptSpec`: receipt attribute SETs in Apple's unsorted order, every date form.
// - `RecordFactory` / `Generator`: the population of NDJSON records, bad kinds (`RecordKind`) and truth lines
//   behind `receiptflow generate`; data/README.md documents the files.
// - `CustomerSimulation` / `CustomerGenerator`: customers over years and the receipts they sent, behind
//   `receiptflow generate --customers`, with the `purchases` and `subscriptions` tables an export must write
//   (`HistoryExpectation`, `HistoryCSV`).
//
// Typical test use:
//
//     let pki = try TestPKI.load(directory: nil)
//     var b = PayloadBuilder()
//     b.utf8(0, "Production"); b.utf8(2, "com.example.app"); b.date(12, 1_600_000_000_000)
//     var o = ReceiptSigner.Options(digest: .sha1, form: .ber)
//     o.signingTime = 1_600_000_000
//     let der = ReceiptSigner.sign(payload: b.encode(), identity: pki.identity(.impostor), options: o)
