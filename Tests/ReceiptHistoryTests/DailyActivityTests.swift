import Testing

@testable import ReceiptHistory

/// The `daily` counts gathered as changes (`DailyActivity`).
struct DailyActivityTests {
    private func rows(_ activity: DailyActivity, asOf: Int64) throws -> [(day: Int64, product: String, counts: [Int64])]
    {
        var out: [(Int64, String, [Int64])] = []
        try activity.rows(asOf: asOf) { day, product, counts throws(HistoryError) in
            out.append((day, String(decoding: product.productID, as: UTF8.self), counts))
        }
        return out
    }

    private func product(_ name: String) -> DailyProduct {
        DailyProduct(environment: 0, bundleID: Array("b".utf8), productID: Array(name.utf8))
    }

    @Test func countsAddedToRepeatedAndAlternatingKeysLandOnTheirOwnDayAndProduct() throws {
        var a = DailyActivity()
        a.sawPurchase(day(0))
        let d0 = DayRange.day(day(0))
        let x = a.index(product("x"))
        let y = a.index(product("y"))
        #expect(a.index(product("x")) == x)
        #expect(a.index(product("y")) == y)
        #expect(x != y)
        // The same key twice in a row, then keys that differ in the day or the product only.
        a.add(.starts, day: d0, productIndex: x, 1)
        a.add(.renewals, day: d0, productIndex: x, 2)
        a.add(.starts, day: d0 + 1, productIndex: x, 4)
        a.add(.starts, day: d0, productIndex: y, 8)
        a.add(.starts, day: d0, productIndex: x, 16)
        a.move(day: d0, from: nil, to: DailySnapshot(column: .active, period: 0, trial: true, intro: false)) { _ in y }
        a.move(day: d0 + 1, from: DailySnapshot(column: .active, period: 0, trial: true, intro: false), to: nil) {
            _ in y
        }
        let got = try rows(a, asOf: day(1))
        func counts(_ pairs: [DailyColumn: Int64]) -> [Int64] {
            var c = [Int64](repeating: 0, count: DailyColumn.count)
            for (k, v) in pairs { c[k.rawValue] = v }
            return c
        }
        #expect(got.map(\.day) == [d0, d0, d0 + 1])
        #expect(got.map(\.product) == ["x", "y", "x"])
        #expect(got[0].counts == counts([.starts: 17, .renewals: 2]))
        #expect(got[1].counts == counts([.starts: 8, .active: 1, .activeTrial: 1]))
        #expect(got[2].counts == counts([.starts: 4]))
    }

    @Test func theColumnCountIsTheNumberOfColumns() {
        #expect(DailyColumn.count == DailyColumn.allCases.count)
    }
}
