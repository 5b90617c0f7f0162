/// Which digest algorithms generated receipts use (`--digest`).
public enum DigestChoice: String, Sendable, CaseIterable {
    case sha1, sha256
    /// SHA-1 for most receipts created before mid-2023, SHA-256 after (and always for Xcode receipts), as Apple
    /// moved.
    case mixed
}

/// One receipt to make: what it says and how it is signed.
struct ReceiptPlan {
    var spec: ReceiptSpec
    var receiptType: String
    /// Attribute 12, epoch ms (as written, before any loss from the date style).
    var creationDate: Int64
    var options: ReceiptSigner.Options
}

/// Draws receipts that look like the real population: several apps, mostly 0-3 in-app purchases, a tail of
/// subscription receipts with dozens to hundreds of renewals, Production / ProductionSandbox (a few VPP and
/// Xcode), SHA-1 / SHA-256, DER / BER, unknown attributes, every date form.
enum Population {
    static let day: Int64 = 86_400_000
    static let minute: Int64 = 60_000
    static let earliest = TimeText.epochMillis(2014, 1, 1)
    static let latest = TimeText.epochMillis(2025, 12, 1)
    static let sandboxOriginalPurchase = TimeText.epochMillis(2013, 8, 1, 7)
    static let sha256Switch = TimeText.epochMillis(2023, 6, 1)

    static func plan(_ rng: inout SplitMix, digest: DigestChoice) -> ReceiptPlan {
        let app = Catalog.apps[rng.weighted(Catalog.weights)]
        let receiptType = ["Production", "ProductionSandbox", "ProductionVPP", "Xcode"][rng.weighted([74, 21, 3, 2])]
        let xcode = receiptType == "Xcode"
        let sandbox = receiptType.hasSuffix("Sandbox") || xcode
        let created = rng.int(in: earliest...latest)

        // Date forms: Xcode receipts of 2020-21 wrote numeric offsets; a few others carry fractional seconds.
        let offsets = [180, -420, -480, 330, 60, 0, 540]
        let receiptOffset = offsets[rng.int(offsets.count)]
        func style(_ rng: inout SplitMix) -> ReceiptDateStyle {
            if xcode { return rng.chance(0.7) ? .offset(minutes: receiptOffset) : .zulu }
            switch rng.weighted([88, 8, 4]) {
            case 0: return .zulu
            case 1: return .fractional
            default: return .offset(minutes: receiptOffset)
            }
        }

        var top: [ReceiptSpec.Attribute] = []
        func add(_ t: Int, _ v: ReceiptSpec.Value, version: Int = 1) { top.append(.init(t, v, version: version)) }
        add(0, .utf8(receiptType))
        add(1, .integer(sandbox ? 0 : app.appItemID))
        add(2, .utf8(app.bundleID))
        add(3, .utf8(rng.pick(app.versions)))
        add(4, .raw(rng.bytes(rng.chance(0.5) ? 16 : 8)), version: 2)
        add(5, .raw(rng.bytes(20)))
        add(8, .date(rng.chance(0.6) ? nil : created, style(&rng)))
        add(10, .ia5(app.ageRating))
        add(12, .date(created, style(&rng)))
        if !xcode {
            let largeID = rng.chance(0.3)
            let download: Int64 =
                sandbox
                ? 0
                : (largeID
                    ? rng.int(in: (1 << 53)...((1 << 62) - 1)) : rng.int(in: 10_000_000_000...90_000_000_000_000))
            add(15, .integer(download))
            add(16, .integer(sandbox ? 0 : rng.int(in: 800_000_000...870_000_000)))
        }
        let originalPurchase = sandbox ? sandboxOriginalPurchase : rng.int(in: (created - 6 * 365 * day)...created)
        add(18, .date(originalPurchase, sandbox ? .zulu : style(&rng)))
        add(19, .utf8(sandbox ? "1.0" : app.versions[rng.int(app.versions.count)]))
        if xcode {
            add(21, .date(PayloadBuilder.xcodeExpirationSentinel, .zulu))
        } else if receiptType == "ProductionVPP" {
            add(21, .date(created + rng.int(in: (30 * day)...(400 * day)), style(&rng)))
        }
        // Attributes no document names, present in real receipts.
        for t in [6, 7, 9, 11, 13, 14, 20, 25] where rng.chance(0.45) {
            switch rng.int(3) {
            case 0: add(t, .integer(rng.int(in: 0...100_000)))
            case 1: add(t, .raw(rng.bytes(rng.int(24) + 1)))
            default: add(t, .utf8("x\(rng.int(1000))"), version: 2)
            }
        }

        // In-app purchases: most receipts have 0-3; a tail of subscribers has dozens to hundreds of renewals.
        var entries: [ReceiptSpec] = []
        let subs = app.subscriptions
        if !app.products.isEmpty {
            let tail = !subs.isEmpty && rng.chance(0.045)
            let count = tail ? 0 : [0, 1, 2, 3][rng.weighted([35, 33, 20, 12])]
            for _ in 0..<count {
                entries.append(
                    purchase(
                        &rng, app.products[rng.int(app.products.count)], created: created,
                        sandbox: sandbox, xcode: xcode, style: style))
            }
            if tail {
                entries += renewals(
                    &rng, subs[rng.int(subs.count)], created: created, sandbox: sandbox,
                    xcode: xcode, style: style)
                for _ in 0..<rng.int(3) {
                    entries.append(
                        purchase(
                            &rng, app.products[rng.int(app.products.count)], created: created,
                            sandbox: sandbox, xcode: xcode, style: style))
                }
            }
        }
        // Apple's in_app order is not chronological: swap a few neighbours.
        if entries.count > 1 {
            for _ in 0..<(entries.count / 4 + 1) {
                let i = rng.int(entries.count - 1)
                entries.swapAt(i, i + 1)
            }
        }
        // Apple writes the attribute SET unsorted: shuffle the app-level attributes, then spread the in-app
        // entries through them (keeping the entries' own order).
        rng.shuffle(&top)
        var attributes: [ReceiptSpec.Attribute] = []
        var e = 0
        for (i, a) in top.enumerated() {
            attributes.append(a)
            let remaining = top.count - i - 1
            let take =
                remaining == 0
                ? entries.count - e : min(entries.count - e, rng.int(3) == 0 ? rng.int(entries.count - e + 1) : 0)
            for _ in 0..<take {
                attributes.append(.init(17, .inApp(entries[e])))
                e += 1
            }
        }

        var options = ReceiptSigner.Options()
        switch digest {
        case .sha1: options.digest = .sha1
        case .sha256: options.digest = .sha256
        case .mixed:
            options.digest = xcode || (created >= sha256Switch ? rng.chance(0.9) : rng.chance(0.1)) ? .sha256 : .sha1
        }
        options.form = xcode || rng.chance(0.15) ? .berIndefinite(chunkSize: [1000, 4096, 512][rng.int(3)]) : .der
        if options.digest == .sha256 && (xcode || rng.chance(0.1)) { options.signatureLabel = .sha256WithRSAEncryption }
        if rng.chance(0.05) { options.signingTime = created / 1000 }
        return ReceiptPlan(
            spec: ReceiptSpec(attributes: attributes), receiptType: receiptType, creationDate: created,
            options: options)
    }

    static func transactionID(_ rng: inout SplitMix, sandbox: Bool) -> String {
        String(
            sandbox
                ? rng.int(in: 1_000_000_000_000_00...1_000_000_999_999_999)
                : rng.int(in: 100_000_000_000_000...700_000_999_999_999))
    }

    /// One purchase of `product` before `created`.
    static func purchase(
        _ rng: inout SplitMix, _ product: Catalog.Product, created: Int64, sandbox: Bool, xcode: Bool,
        style: (inout SplitMix) -> ReceiptDateStyle
    ) -> ReceiptSpec {
        let purchased = rng.int(in: (created - 3 * 365 * day)...created)
        let id = xcode ? "0" : transactionID(&rng, sandbox: sandbox)
        let period = max(product.periodDays, 1) * (sandbox ? 5 * minute / max(product.periodDays, 1) : day)
        let expires: Int64? = product.type == 3 ? purchased + period : nil
        return entry(
            &rng, product, quantity: product.type == 1 ? [1, 1, 1, 2, 5][rng.int(5)] : 1,
            transactionID: id, originalTransactionID: xcode ? nil : id, purchased: purchased,
            originalPurchased: purchased, expires: expires,
            webOrder: product.type == 3 ? rng.int(in: 1_000_000_000...9_999_999_999) : 0,
            trial: false, intro: false, style: style)
    }

    /// A chain of renewals of one auto-renewable subscription, ending before `created`. Sandbox subscriptions
    /// renew every few minutes, which is how real sandbox receipts reach hundreds of entries.
    static func renewals(
        _ rng: inout SplitMix, _ product: Catalog.Product, created: Int64, sandbox: Bool, xcode: Bool,
        style: (inout SplitMix) -> ReceiptDateStyle
    ) -> [ReceiptSpec] {
        let u = rng.unit()
        var count = 24 + Int(376 * u * u * u)
        var period = (sandbox ? 5 * minute : product.periodDays * day)
        if !sandbox {
            // Production renewals cannot start before 2009: fall back to the app's weekly product rhythm.
            let maxCount = Int((created - TimeText.epochMillis(2009, 7, 1)) / period)
            if count > maxCount {
                period = 7 * day
                count = min(count, Int((created - TimeText.epochMillis(2009, 7, 1)) / period))
            }
        }
        let start = created - Int64(count) * period - rng.int(in: 0...(period / 2))
        let original = xcode ? "0" : transactionID(&rng, sandbox: sandbox)
        let webBase = rng.int(in: 1_000_000_000...9_000_000_000)
        let trialFirst = rng.chance(0.4)
        let introCount = trialFirst ? 0 : (rng.chance(0.3) ? 3 : 0)
        var out: [ReceiptSpec] = []
        var nextID = Int64(original) ?? 0
        for i in 0..<count {
            let purchased = start + Int64(i) * period + rng.int(in: 0...(2 * minute))
            let id = i == 0 || xcode ? original : String(nextID)
            nextID += rng.int(in: 1...40_000)
            out.append(
                entry(
                    &rng, product, quantity: 1, transactionID: id, originalTransactionID: xcode ? nil : original,
                    purchased: purchased, originalPurchased: start, expires: purchased + period,
                    webOrder: webBase + Int64(i), trial: trialFirst && i == 0, intro: i < introCount, style: style))
        }
        return out
    }

    /// The attributes of one in-app entry, shuffled as Apple writes them.
    static func entry(
        _ rng: inout SplitMix, _ product: Catalog.Product, quantity: Int64, transactionID: String,
        originalTransactionID: String?, purchased: Int64, originalPurchased: Int64, expires: Int64?, webOrder: Int64,
        trial: Bool, intro: Bool, style: (inout SplitMix) -> ReceiptDateStyle
    ) -> ReceiptSpec {
        var s = ReceiptSpec()
        s.add(1701, .integer(quantity))
        s.add(1702, .utf8(product.id))
        s.add(1703, .utf8(transactionID))
        s.add(1704, .date(purchased, style(&rng)))
        if let o = originalTransactionID { s.add(1705, .utf8(o)) }
        s.add(1706, .date(originalPurchased, style(&rng)))
        if rng.chance(0.7) { s.add(1707, .integer(product.type)) }
        s.add(1708, .date(expires, style(&rng)))
        s.add(1711, .integer(webOrder))
        let cancelled = rng.chance(0.02)
        s.add(1712, .date(cancelled ? purchased + rng.int(in: minute...(20 * day)) : nil, style(&rng)))
        s.add(1713, .integer(trial ? 1 : 0))
        if product.type == 3 || rng.chance(0.5) { s.add(1719, .integer(intro ? 1 : 0)) }
        if cancelled { s.add(1720, .integer(rng.int(in: 0...1))) }
        if product.type == 3 && rng.chance(0.05) { s.add(1721, .utf8("promo.winback.\(rng.int(10))")) }
        for t in [1709, 1710, 1714, 1715, 1716, 1717, 1718, 1722] where rng.chance(0.25) {
            s.add(t, rng.chance(0.5) ? .integer(rng.int(in: 0...5)) : .utf8(""))
        }
        rng.shuffle(&s.attributes)
        return s
    }
}
