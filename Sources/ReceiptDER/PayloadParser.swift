import ReceiptModel

// MARK: - The receipt payload: SET OF ReceiptAttribute (AttributeReader.swift reads one attribute)

extension ReceiptParser {
    /// Decodes the payload's app-level attributes and every in-app purchase into `fields`.
    ///
    /// Writes through a pointer to `fields`, which `parse` made a fresh value (`resetFields`): partial results stay
    /// visible when it throws, and no swap of a local copy in and out (27 words each) is paid per receipt.
    func parsePayload(_ payload: UnsafeRawBufferPointer) throws(ReceiptError) {
        var count = 0
        defer { attributeCount = count }
        try withUnsafeMutablePointer(to: &fields) { (fp) throws(ReceiptError) in
            try parsePayload(payload, into: fp, count: &count)
        }
    }

    func parsePayload(
        _ payload: UnsafeRawBufferPointer, into fp: UnsafeMutablePointer<ReceiptFields>, count: inout Int
    ) throws(ReceiptError) {
        var r = BERReader(payload, limits: limits)
        r.fastPaths = fastPaths
        let set = try r.element(at: 0, limit: payload.count)
        guard set.end == payload.count else {
            throw ReceiptError(.malformedDER, at: set.end, "there are bytes after the receipt payload")
        }
        let maxAttributes = limits.maxAttributes
        let maxInApp = limits.maxInAppEntries
        // The cursor form of `forEachAttribute`: this loop's body stays in place (as a closure it was called).
        // The common short attribute is read here; `nextAttribute` (left out of line by the compiler) reads the
        // others, trying the short shape again first, so the order of attempts is the same.
        var attributes = try r.attributes(in: set, depth: 0)
        while attributes.p < attributes.end {
            let a: AttributeSlot
            if attributes.p <= attributes.wordsEnd, let f = r.attributeShort(at: attributes.p, limit: attributes.end) {
                a = f.slot
                attributes.p = f.end
            } else if let next = try r.nextAttribute(&attributes) {
                a = next
            } else {
                break  // not reached: p < end
            }
            count &+= 1  // at most maxAttributes + 1
            guard count <= maxAttributes else {
                throw ReceiptError(.limitExceeded, at: a.start, "the receipt has more attributes than the limit")
            }
            switch a.type {
            case AttributeType.receiptType: fp.pointee.receiptType = try r.stringValue(a, depth: 2)
            case AttributeType.appItemID: fp.pointee.appItemID = try r.integerValue(a, depth: 2)
            case AttributeType.bundleID:
                fp.pointee.bundleID = try r.stringValue(a, depth: 2)
                fp.pointee.bundleIDDER = a.value
            case AttributeType.opaqueValue: fp.pointee.opaqueValue = a.value
            case AttributeType.sha1Hash: fp.pointee.sha1Hash = a.value
            case AttributeType.applicationVersion: fp.pointee.applicationVersion = try r.stringValue(a, depth: 2)
            case AttributeType.originalApplicationVersion:
                fp.pointee.originalApplicationVersion = try r.stringValue(a, depth: 2)
            case AttributeType.downloadID: fp.pointee.downloadID = try r.integerValue(a, depth: 2)
            case AttributeType.versionExternalIdentifier:
                fp.pointee.versionExternalIdentifier = try r.integerValue(a, depth: 2)
            case AttributeType.receiptCreationDate: fp.pointee.receiptCreationDate = try r.dateValue(a, depth: 2)
            case AttributeType.originalPurchaseDate: fp.pointee.originalPurchaseDate = try r.dateValue(a, depth: 2)
            case AttributeType.expirationDate: fp.pointee.expirationDate = try r.dateValue(a, depth: 2)
            case AttributeType.inAppPurchase:
                guard fp.pointee.inAppCount < maxInApp else {
                    throw ReceiptError(
                        .limitExceeded, at: a.start, "the receipt has more in-app purchases than the limit")
                }
                // A fresh entry decoded in place in the array (whose storage is reused; no copy of the entry),
                // and counted before it is decoded, so that an entry failing part-way still shows what was decoded.
                let k = fp.pointee.inAppCount
                fp.pointee.inApp.append(InAppFields())
                fp.pointee.inAppCount = k + 1
                try Self.parseInApp(r, a, &fp.pointee.inApp[k], &count, maxAttributes)
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
