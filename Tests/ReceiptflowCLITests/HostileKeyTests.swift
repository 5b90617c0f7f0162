import Foundation
import ReceiptSynth
import Testing

/// Receipts signed under self-made certificates whose keys no Apple certificate has (a huge RSA public exponent, a
/// modulus over 4096 bits), issued by the trusted test intermediate: every one is `unsupported_algorithm`, the
/// valid receipt after them still verifies.
@Suite(.serialized)
struct HostileKeyTests {
    static func receipt(_ key: PrivateKey, serial: Int64, marker: String) throws -> [UInt8] {
        let identity = try Hostile.pki.customLeaf(
            notBefore: TestPKI.leafNotBefore, notAfter: TestPKI.leafNotAfter, serial: serial, key: key)
        var payload = Hostile.basePayload()
        payload.utf8(1234, marker)
        return ReceiptSigner.sign(payload: payload.encode(), identity: identity)
    }

    @Test func keysNoAppleCertificateHasAreUnsupportedAlgorithmForEveryRecord() throws {
        // e = 2^1024 + 1, and a 4160-bit modulus with e = 65537.
        let hugeExponent = try PrivateKey.generated(
            bits: 2048, exponent: [0x01] + [UInt8](repeating: 0, count: 127) + [0x01])
        let bigModulus = try PrivateKey.generated(bits: 4160, exponent: [0x01, 0x00, 0x01])
        var lines: [[UInt8]] = []
        for i in 0..<6 {
            let r = try Self.receipt(hugeExponent, serial: 8001, marker: "1.\(i)")
            lines.append(HostileInputTests.bytes(Hostile.line(r, id: "exponent-\(i)")))
        }
        for i in 0..<2 {
            let r = try Self.receipt(bigModulus, serial: 8002, marker: "2.\(i)")
            lines.append(HostileInputTests.bytes(Hostile.line(r, id: "modulus-\(i)")))
        }
        let e = try HostileInputTests.export(lines + [HostileInputTests.validLine])
        #expect(e.run.status == 0, "export exited \(e.run.status): \(e.run.stderr)")
        #expect(e.rows.count == lines.count + 1)
        guard e.rows.count == lines.count + 1 else { return }
        for i in 0..<lines.count {
            #expect(e.code(i) == "unsupported_algorithm", "line \(i + 1)")
            #expect(e.status(i) == 21003, "line \(i + 1)")
            let detail = e.rows[i]["error_detail"] as? String ?? ""
            #expect(detail.contains(i < 6 ? "public exponent" : "4160-bit RSA key"), "line \(i + 1): \(detail)")
        }
        #expect(e.status(lines.count) == 0, "the valid receipt after the hostile ones")
        print(
            "hostile: keys no Apple certificate has: \(lines.count) records, cpu "
                + String(format: "%.2f", e.run.cpuSeconds) + " s")
    }
}
