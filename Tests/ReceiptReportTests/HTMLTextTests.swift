import Testing

@testable import ReceiptReport

/// Values from the data are shown as text, and numbers are formatted for people.
@Suite struct HTMLTextTests {
    @Test func markupCharactersAreEscaped() {
        #expect(HTMLText.escape("<script>alert('x')</script>") == "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;")
        #expect(HTMLText.escape("a&b \"q\"") == "a&amp;b &quot;q&quot;")
        #expect(HTMLText.escape("nul\u{0}bell\u{7}") == "nul\u{FFFD}bell\u{FFFD}")
    }

    @Test func numbersHaveThousandsSeparatorsAndSharesOneDecimal() {
        #expect(HTMLText.number(0) == "0")
        #expect(HTMLText.number(999) == "999")
        #expect(HTMLText.number(1000) == "1,000")
        #expect(HTMLText.number(10_000_000) == "10,000,000")
        #expect(HTMLText.number(-1234) == "-1,234")
        #expect(HTMLText.percent(2375, of: 2900) == "81.9%")
        #expect(HTMLText.percent(1, of: 3) == "33.3%")
        #expect(HTMLText.percent(0, of: 0) == "–")
        #expect(HTMLText.decimal(1234.56) == "1,234.6")
        #expect(HTMLText.decimal(2) == "2")
    }
}
