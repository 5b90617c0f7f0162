import ReceiptModel
import ReceiptVerify

/// `--device-id-field` (receipts only: a JWS carries no such hash): compares the receipt's hash (attribute 5) with the SHA-1 of the record's device identifier,
/// the opaque value (attribute 4) and the bundle id's DER bytes (attribute 2), and records the result in
/// `device_hash_matches` (null when the record has no device identifier or the receipt no hash). A device
/// identifier in none of the accepted forms is rejected as `invalid_device_id` (21002); with
/// `--require-device-match` a mismatch is rejected as `device_mismatch` (21003).
public struct DeviceHashPolicy: RecordPolicy {
    public let required: Bool

    public init(required: Bool) { self.required = required }

    public func apply(to record: PolicyInput, _ verdict: inout Verdict) {
        guard let receipt = record.receipt else { return }
        switch record.device {
        case .absent:
            return
        case .malformed:
            verdict.reject(
                .invalidDeviceID, .malformed,
                .text("the device identifier is not a UUID, a MAC address or 12 or 32 hex digits", at: -1))
        case .identifier(let id):
            let f = receipt.fields
            guard let expected = receipt.bytes(f.sha1Hash) else { return }
            let none = UnsafeRawBufferPointer(start: nil, count: 0)
            let matches = id.withBytes { device in
                DeviceHash.matches(
                    device: device, opaque: receipt.bytes(f.opaqueValue) ?? none,
                    bundleDER: receipt.bytes(f.bundleIDDER) ?? none, expected: expected, hasher: record.hasher)
            }
            verdict.deviceHashMatches = matches
            if !matches && required {
                verdict.reject(
                    .deviceMismatch, .notAuthenticated,
                    .text("the receipt's hash (attribute 5) is not that of the record's device identifier", at: -1))
            }
        }
    }
}
