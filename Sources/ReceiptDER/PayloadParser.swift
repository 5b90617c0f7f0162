import ReceiptModel

// MARK: - The receipt payload: SET OF ReceiptAttribute (AttributeReader.swift reads one attribute)

extension ReceiptParser {
    /// Decodes the payload's app-level attributes and every in-app purchase into `fields`.
    ///
    /// Works on a local copy and stores it back once (also when it throws, so partial results stay visible):
    /// mutating the class property inside the loop would cost a dynamic exclusivity check per attribute.
    func parsePayload(_ payload: UnsafeRawBufferPointer) throws(ReceiptError) {
        var f = ReceiptFields()
        swap(&f.inApp, &fields.inApp)  // take the reusable in-app array without copying it
        var count = 0
        defer {
            swap(&fields, &f)  // no copy of the fields (nor retain of the array), unlike `fields = f`
            attributeCount = count
        }
        var r = BERReader(payload, limits: limits)
        r.fastPaths = fastPaths
        let set = try r.element(at: 0, limit: payload.count)
        guard set.end == payload.count else {
            throw ReceiptError(.malformedDER, at: set.end, "there are bytes after the receipt payload")
        }
        let maxAttributes = limits.maxAttributes
        let maxInApp = limits.maxInAppEntries
        try r.forEachAttribute(in: set, depth: 0) { (a) throws(ReceiptError) in
            count &+= 1  // at most maxAttributes + 1
            guard count <= maxAttributes else {
                throw ReceiptError(.limitExceeded, at: a.start, "the receipt has more attributes than the limit")
            }
            switch a.type {
            case AttributeType.receiptType: f.receiptType = try r.stringValue(a, depth: 2)
            case AttributeType.appItemID: f.appItemID = try r.integerValue(a, depth: 2)
            case AttributeType.bundleID: f.bundleID = try r.stringValue(a, depth: 2)
            case AttributeType.applicationVersion: f.applicationVersion = try r.stringValue(a, depth: 2)
            case AttributeType.originalApplicationVersion: f.originalApplicationVersion = try r.stringValue(a, depth: 2)
            case AttributeType.downloadID: f.downloadID = try r.integerValue(a, depth: 2)
            case AttributeType.versionExternalIdentifier: f.versionExternalIdentifier = try r.integerValue(a, depth: 2)
            case AttributeType.receiptCreationDate: f.receiptCreationDate = try r.dateValue(a, depth: 2)
            case AttributeType.originalPurchaseDate: f.originalPurchaseDate = try r.dateValue(a, depth: 2)
            case AttributeType.expirationDate: f.expirationDate = try r.dateValue(a, depth: 2)
            case AttributeType.inAppPurchase:
                guard f.inAppCount < maxInApp else {
                    throw ReceiptError(
                        .limitExceeded, at: a.start, "the receipt has more in-app purchases than the limit")
                }
                // Decoded in place in the reusable array (no copy of the entry), and counted before it is
                // decoded, so that an entry failing part-way still shows what was decoded.
                let k = f.inAppCount
                if k < f.inApp.count { f.inApp[k] = InAppFields() } else { f.inApp.append(InAppFields()) }
                f.inAppCount = k + 1
                try Self.parseInApp(r, a, &f.inApp[k], &count, maxAttributes)
            default: break  // unknown attributes are kept in the payload, never an error
            }
        }
    }

    static func parseInApp(
        _ r: BERReader, _ a: AttributeSlot, _ e: inout InAppFields, _ count: inout Int, _ maxAttributes: Int
    ) throws(ReceiptError) {
        let set = try r.inner(a, depth: 2)
        var n = count  // a local counter the loop can keep in a register
        defer { count = n }
        try r.forEachAttribute(in: set, depth: 3) { (b) throws(ReceiptError) in
            n &+= 1  // at most maxAttributes + 1
            guard n <= maxAttributes else {
                throw ReceiptError(.limitExceeded, at: b.start, "the receipt has more attributes than the limit")
            }
            switch b.type {
            case AttributeType.quantity: e.quantity = try r.integerValue(b, depth: 5)
            case AttributeType.productID: e.productID = try r.stringValue(b, depth: 5)
            case AttributeType.transactionID: e.transactionID = try r.stringValue(b, depth: 5)
            case AttributeType.purchaseDate: e.purchaseDate = try r.dateValue(b, depth: 5)
            case AttributeType.originalTransactionID: e.originalTransactionID = try r.stringValue(b, depth: 5)
            case AttributeType.inAppOriginalPurchaseDate: e.originalPurchaseDate = try r.dateValue(b, depth: 5)
            case AttributeType.productType: e.productType = try r.integerValue(b, depth: 5)
            case AttributeType.expiresDate: e.expiresDate = try r.dateValue(b, depth: 5)
            case AttributeType.webOrderLineItemID: e.webOrderLineItemID = try r.integerValue(b, depth: 5)
            case AttributeType.cancellationDate: e.cancellationDate = try r.dateValue(b, depth: 5)
            case AttributeType.isTrialPeriod: e.isTrialPeriod = try r.integerValue(b, depth: 5)
            case AttributeType.isInIntroOfferPeriod: e.isInIntroOfferPeriod = try r.integerValue(b, depth: 5)
            case AttributeType.cancellationReason: e.cancellationReason = try r.integerValue(b, depth: 5)
            case AttributeType.promotionalOfferID: e.promotionalOfferID = try r.stringValue(b, depth: 5)
            default: break
            }
        }
    }
}
