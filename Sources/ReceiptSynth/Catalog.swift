/// The apps and products synthetic receipts are drawn from.
enum Catalog {
    /// 0 non-consumable, 1 consumable, 2 non-renewing subscription, 3 auto-renewable (attribute 1707).
    struct Product {
        var id: String
        var type: Int64
        /// Renewal period in days, for auto-renewable subscriptions.
        var periodDays: Int64 = 0
    }

    struct App {
        var bundleID: String
        var appItemID: Int64
        var versions: [String]
        var products: [Product]
        /// Relative share of receipts.
        var weight: Double
        var ageRating: String

        var subscriptions: [Product] { products.filter { $0.type == 3 } }
    }

    static let apps: [App] = {
        func p(_ app: String, _ suffix: String, _ type: Int64, _ days: Int64 = 0) -> Product {
            Product(id: "\(app).\(suffix)", type: type, periodDays: days)
        }
        let notes = "com.receiptflow.notes"
        let dragons = "com.receiptflow.game.dragons"
        let fitness = "com.receiptflow.fitness"
        let photo = "com.receiptflow.photo.editor"
        let news = "com.receiptflow.news.daily"
        let lang = "com.receiptflow.language"
        let scanner = "com.receiptflow.utility.scanner"
        let calendar = "de.beispiel.kalender"
        return [
            App(
                bundleID: notes, appItemID: 1_161_457_312, versions: ["1.0", "1.2", "2.0.1", "2.3", "3.0"],
                products: [
                    p(notes, "pro.lifetime", 0), p(notes, "sub.monthly", 3, 30), p(notes, "sub.yearly", 3, 365),
                    p(notes, "tip.small", 1),
                ], weight: 3, ageRating: "4+"),
            App(
                bundleID: dragons, appItemID: 934_215_770, versions: ["4821", "4907", "5102", "5230"],
                products: [
                    p(dragons, "gems.100", 1), p(dragons, "gems.500", 1), p(dragons, "gems.2000", 1),
                    p(dragons, "remove.ads", 0), p(dragons, "season.pass", 2),
                ], weight: 4, ageRating: "12+"),
            App(
                bundleID: fitness, appItemID: 1_480_022_199, versions: ["3.1", "3.2", "3.4.2", "4.0"],
                products: [
                    p(fitness, "premium.weekly", 3, 7), p(fitness, "premium.monthly", 3, 30),
                    p(fitness, "premium.annual", 3, 365), p(fitness, "plan.marathon", 0),
                ], weight: 3, ageRating: "4+"),
            App(
                bundleID: photo, appItemID: 1_023_456_789, versions: ["7.0", "7.1.3", "8.0", "8.2"],
                products: [
                    p(photo, "filters.pack1", 0), p(photo, "filters.pack2", 0), p(photo, "pro.weekly", 3, 7),
                    p(photo, "pro.monthly", 3, 30),
                ], weight: 2, ageRating: "4+"),
            App(
                bundleID: news, appItemID: 577_499_908, versions: ["10.4", "10.5", "11.0"],
                products: [
                    p(news, "sub.monthly", 3, 30), p(news, "sub.annual", 3, 365), p(news, "article.credit", 1),
                ], weight: 1.5, ageRating: "17+"),
            App(
                bundleID: lang, appItemID: 1_298_765_432, versions: ["2.0", "2.5", "2.6.1"],
                products: [p(lang, "course.spanish", 0), p(lang, "course.french", 0), p(lang, "plus.monthly", 3, 30)],
                weight: 1.5, ageRating: "4+"),
            App(
                bundleID: scanner, appItemID: 1_555_000_111, versions: ["1.0", "1.1"], products: [], weight: 1,
                ageRating: "4+"),
            App(
                bundleID: calendar, appItemID: 409_128_765, versions: ["2019.1", "2021.3", "2024.2"],
                products: [p(calendar, "feiertage.paket", 0), p(calendar, "abo.jahr", 3, 365)], weight: 1,
                ageRating: "4+"),
        ]
    }()

    static let weights: [Double] = apps.map(\.weight)
}
