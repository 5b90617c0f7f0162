/// Hard limits that keep work and memory linear in the input, whatever the bytes say.
public struct DERLimits: Sendable, Equatable {
    /// Deepest nesting of constructed elements followed (the receipt format needs about 10).
    public var maxDepth: Int = 32
    /// Largest decoded receipt accepted, in bytes.
    public var maxSize: Int = 16 << 20
    /// Most attributes (app-level plus in-app) in one receipt.
    public var maxAttributes: Int = 200_000
    /// Most in-app purchase entries in one receipt.
    public var maxInAppEntries: Int = 20_000
    /// Most embedded certificates considered.
    public var maxCertificates: Int = 16

    public init() {}
}
