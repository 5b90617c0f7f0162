import ReceiptModel

// MARK: - Building a `Receipt` with Swift strings (inspect, NDJSON output, tests); not on the export hot path.

extension ReceiptParser {
    /// The last parsed receipt as a `Receipt`, with every raw attribute. Call after `parse` (even a failed one:
    /// it then holds what was decoded).
    public func materialize(_ der: UnsafeRawBufferPointer) -> Receipt {
        withContent(der) { payload in
            func string(_ r: Range<Int>?) -> String? {
                guard let r else { return nil }
                return String(decoding: UnsafeRawBufferPointer(rebasing: payload[r]), as: UTF8.self)
            }
            var out = Receipt()
            let f = fields
            out.receiptType = string(f.receiptType)
            out.appItemID = f.appItemID
            out.bundleID = string(f.bundleID)
            out.applicationVersion = string(f.applicationVersion)
            out.originalApplicationVersion = string(f.originalApplicationVersion)
            out.downloadID = f.downloadID
            out.versionExternalIdentifier = f.versionExternalIdentifier
            out.receiptCreationDate = f.receiptCreationDate
            out.originalPurchaseDate = f.originalPurchaseDate
            out.expirationDate = f.expirationDate
            for i in 0..<f.inAppCount {
                let a = f.inApp[i]
                var p = InAppPurchase()
                p.quantity = a.quantity
                p.productID = string(a.productID)
                p.transactionID = string(a.transactionID)
                p.purchaseDate = a.purchaseDate
                p.originalTransactionID = string(a.originalTransactionID)
                p.originalPurchaseDate = a.originalPurchaseDate
                p.productType = a.productType
                p.expiresDate = a.expiresDate
                p.webOrderLineItemID = a.webOrderLineItemID
                p.cancellationDate = a.cancellationDate
                p.isTrialPeriod = a.isTrialPeriod
                p.isInIntroOfferPeriod = a.isInIntroOfferPeriod
                p.cancellationReason = a.cancellationReason
                p.promotionalOfferID = string(a.promotionalOfferID)
                out.inApp.append(p)
            }
            // Raw attributes, in payload order. A walk that fails part-way keeps what it read.
            var r = BERReader(payload, limits: limits)
            r.fastPaths = fastPaths
            guard let set = try? r.element(at: 0, limit: payload.count) else { return out }
            var inAppIndex = 0
            _ = try? r.forEachAttribute(in: set, depth: 0) { (a) throws(ReceiptError) in
                let raw = RawAttribute(type: a.type, version: a.version, value: Array(payload[a.value]))
                out.attributes.append(raw)
                switch a.type {
                case AttributeType.opaqueValue: out.opaqueValue = raw.value
                case AttributeType.sha1Hash: out.sha1Hash = raw.value
                case AttributeType.inAppPurchase where inAppIndex < out.inApp.count:
                    let k = inAppIndex
                    inAppIndex += 1
                    let set = try r.inner(a, depth: 2)
                    try r.forEachAttribute(in: set, depth: 3) { (b) throws(ReceiptError) in
                        out.inApp[k].attributes.append(
                            RawAttribute(type: b.type, version: b.version, value: Array(payload[b.value])))
                    }
                default: break
                }
            }
            return out
        }
    }
}
