/// `generate --device-ids`: each decodable record carries its device identifier (`device_id`), a UUID for
/// iOS-like receipts and a MAC address for Mac-like ones (a quarter), and its receipt's hash (attribute 5) is
/// computed from a device identifier as Apple does: SHA-1 of the identifier's raw bytes, the opaque value
/// (attribute 4) and the bundle id's DER bytes. A fraction of records carry another device's identifier.
///
/// Drawn from a generator of their own, so that the rest of every record is the same with or without them.
public struct DeviceIDPlan: Sendable {
    /// Share of records whose `device_id` is not the device their receipt was made for.
    public var mismatchFraction: Double

    public init(mismatchFraction: Double = 0.1) { self.mismatchFraction = mismatchFraction }

    /// The identifier the receipt is made for, the one the record carries, and how the record writes it.
    struct Draw {
        var hashed: [UInt8]
        var written: [UInt8]
        var text: String
    }

    func draw(seed: UInt64, index: Int) -> Draw {
        var rng = SplitMix(seed: seed ^ 0xD1CE_1D5E_ED00_0005, index: index)
        let mac = rng.chance(0.25)
        let hashed = rng.bytes(mac ? 6 : 16)
        var written = hashed
        if rng.chance(mismatchFraction) {
            repeat { written = rng.bytes(hashed.count) } while written == hashed
        }
        return Draw(hashed: hashed, written: written, text: mac ? Self.macText(written) : Self.uuidText(written))
    }

    /// `E621E1F8-C36C-495A-93FC-0C247A3E6E5F`.
    static func uuidText(_ b: [UInt8]) -> String {
        let hex = b.map { String($0, radix: 16, uppercase: true).leftPadded() }
        return [0..<4, 4..<6, 6..<8, 8..<10, 10..<16].map { hex[$0].joined() }.joined(separator: "-")
    }

    /// `00:1b:63:84:45:e6`.
    static func macText(_ b: [UInt8]) -> String {
        b.map { String($0, radix: 16).leftPadded() }.joined(separator: ":")
    }

    /// Attribute 5 for a receipt of `spec` made on `device`.
    static func hash(device: [UInt8], spec: ReceiptSpec) -> [UInt8] {
        var opaque: [UInt8] = []
        if case .raw(let o)? = spec.first(4) { opaque = o }
        let bundle = spec.string(2).map { DER.utf8String($0) } ?? []
        return Crypto.sha1(device + opaque + bundle)
    }

    /// Whether the receipt of `spec` (as finally written) matches the identifier the record carries; nil when the
    /// receipt has no hash.
    static func matches(written: [UInt8], spec: ReceiptSpec) -> Bool? {
        guard case .raw(let h)? = spec.first(5) else { return nil }
        return hash(device: written, spec: spec) == h
    }
}

extension String {
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
