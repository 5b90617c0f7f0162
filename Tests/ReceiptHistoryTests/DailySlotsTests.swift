import Testing

@testable import ReceiptHistory

struct DailySlotsTests {
    @Test func eachKeyKeepsTheSlotItWasGivenFirstThroughGrowth() {
        var slots = DailySlots()
        var given: [Int: Int] = [:]
        // Days far apart and negative, products large: 20,000 keys, several growths.
        for i in 0..<20_000 {
            let day = Int64(i % 400) * 1_000_003 - 200_000_000
            let product = (i / 400) * 65_537
            let (slot, isNew) = slots.slot(day: day, product: product)
            #expect(isNew)
            #expect(slot == i)
            given[i] = slot
        }
        for i in stride(from: 0, to: 20_000, by: 7) {
            let (slot, isNew) = slots.slot(day: Int64(i % 400) * 1_000_003 - 200_000_000, product: (i / 400) * 65_537)
            #expect(!isNew)
            #expect(slot == given[i])
        }
        #expect(slots.count == 20_000)
        #expect(slots.keys[123].day == Int64(123 % 400) * 1_000_003 - 200_000_000)
        #expect(slots.keys[123].product == 0)
    }

    @Test func keysDifferingInOneFieldAreDifferentSlots() {
        var slots = DailySlots()
        #expect(slots.slot(day: 5, product: 1).slot == 0)
        #expect(slots.slot(day: 1, product: 5).slot == 1)
        #expect(slots.slot(day: 5, product: 5).slot == 2)
        let again = slots.slot(day: 5, product: 1)
        #expect(again.slot == 0 && !again.isNew)
    }
}
