import CSIMD
import ReceiptModel

/// The contents of a JSON string (between its quotes) within a scanned line.
public struct JSONStringRef: Sendable, Equatable {
    public var range: Range<Int>
    /// True when the contents hold a backslash escape: resolve with `JSONString.unescape` before use.
    public var escaped: Bool

    public init(range: Range<Int>, escaped: Bool) {
        self.range = range
        self.escaped = escaped
    }
}

/// A top-level value of the scanned object, as far as the pipeline cares.
public enum JSONValue: Sendable, Equatable {
    case absent
    case null
    case string(JSONStringRef)
    /// The number's literal text.
    case number(Range<Int>)
    case bool(Bool)
    /// An object or an array.
    case container
}

/// What the scanner found in one NDJSON line.
public struct NDJSONRecord: Sendable, Equatable {
    /// `invalidJSON`, `missingField` or `emptyReceipt`; nil when `receipt` holds a non-empty string.
    public var error: ErrorCode?
    public var detail: StaticString = ""
    /// Byte offset in the line where the problem was seen (for `invalidJSON`), else -1.
    public var errorOffset: Int = -1
    /// The receipt string's contents; empty unless `error` is nil.
    public var receipt = JSONStringRef(range: 0..<0, escaped: false)
    /// The `--id-field` value; `.absent` when the line is not a valid JSON object.
    public var id: JSONValue = .absent
    /// The `--device-id-field` value; `.absent` without that option or when the line is not a valid JSON object.
    public var deviceID: JSONValue = .absent
    /// The `--user-field` value; `.absent` without that option or when the line is not a valid JSON object.
    public var user: JSONValue = .absent

    public static func == (a: NDJSONRecord, b: NDJSONRecord) -> Bool {
        a.error == b.error && a.errorOffset == b.errorOffset && a.receipt == b.receipt && a.id == b.id
            && a.deviceID == b.deviceID && a.user == b.user
    }
}

/// A hand-written, allocation-free NDJSON line scanner. It validates the whole line as one JSON object
/// (RFC 8259 grammar, nesting up to `maxDepth`) and picks the receipt and id values among the object's
/// *top-level* keys only, in any order; with duplicate keys the last one wins, as in JavaScript and Python.
///
/// One per thread: it keeps per-line state between calls.
public final class NDJSONScanner {
    /// The receipt keys tried when `--field` is not given, in priority order.
    public static let defaultFields = ["receipt-data", "receipt_data", "receipt"]
    public static let maxSupportedDepth = 128

    private let fields: [[UInt8]]
    private let idField: [UInt8]?
    private let deviceIDField: [UInt8]?
    private let userField: [UInt8]?
    /// The `--device-id-field` and `--user-field` values of the line being scanned.
    private var deviceID = JSONValue.absent
    private var user = JSONValue.absent
    private let maxDepth: Int
    /// Value of each candidate field in this line (reused: no allocation per line).
    private var found: [JSONValue]

    /// - Parameters:
    ///   - field: the receipt key; nil for the first of `defaultFields` that is present.
    ///   - idField: the key whose value becomes `record_id`; nil for none.
    ///   - deviceIDField: the key holding the device identifier (`--device-id-field`); nil for none.
    ///   - userField: the key holding the company's user id (`--user-field`); nil for none.
    public init(
        field: String? = nil, idField: String? = "id", deviceIDField: String? = nil, userField: String? = nil,
        maxDepth: Int = 64
    ) {
        fields = (field.map { [$0] } ?? Self.defaultFields).map { Array($0.utf8) }
        self.idField = idField.map { Array($0.utf8) }
        self.deviceIDField = deviceIDField.map { Array($0.utf8) }
        self.userField = userField.map { Array($0.utf8) }
        self.maxDepth = min(max(maxDepth, 1), Self.maxSupportedDepth)
        found = Array(repeating: .absent, count: fields.count)
    }

    /// Scans one line (terminator excluded).
    public func scan(_ line: UnsafeRawBufferPointer) -> NDJSONRecord {
        for k in found.indices { found[k] = .absent }
        var id = JSONValue.absent
        deviceID = .absent
        user = .absent
        if let err = walk(line, &id) {
            return err
        }
        var result = NDJSONRecord()
        result.id = id
        result.deviceID = deviceID
        result.user = user
        // The first candidate whose key is present decides, even when its value is unusable.
        guard let value = found.first(where: { $0 != .absent }) else {
            result.error = .missingField
            result.detail = "the object has no receipt key at its top level"
            return result
        }
        guard case .string(let ref) = value else {
            result.error = .missingField
            result.detail = "the receipt value is null or not a string"
            return result
        }
        if ref.range.isEmpty {
            result.error = .emptyReceipt
            result.detail = "the receipt string is empty"
            return result
        }
        result.receipt = ref
        return result
    }

    private static func invalid(_ at: Int, _ why: StaticString) -> NDJSONRecord {
        var r = NDJSONRecord()
        r.error = .invalidJSON
        r.detail = why
        r.errorOffset = at
        return r
    }

    // MARK: - The walk

    private enum State {
        /// Just after `{`: a key or `}`.
        case objectStart
        /// Just after `[`: a value or `]`.
        case arrayStart
        /// After `,` in an object.
        case key
        /// After `:` or after `,` in an array.
        case value
        /// After a complete value: `,` or the enclosing container's close.
        case afterValue
    }

    /// Validates the line and records top-level values; returns an `invalidJSON` record on failure.
    private func walk(_ p: UnsafeRawBufferPointer, _ id: inout JSONValue) -> NDJSONRecord? {
        let n = p.count
        var i = Self.skipSpace(p, 0)
        guard i < n, p[i] == UInt8(ascii: "{") else { return Self.invalid(i, "the line is not a JSON object") }
        i += 1
        // Bit d of `kinds` is 1 when the container at depth d+1 is an object (2 words: up to 128 levels).
        var kinds: (UInt64, UInt64) = (1, 0)
        var depth = 1
        // What the most recent key of the top-level object names: a candidate receipt field (or -1), the id.
        var keyField = -1
        var keyIsID = false
        var keyIsDevice = false
        var keyIsUser = false
        var state = State.objectStart

        while true {
            i = Self.skipSpace(p, i)
            guard i < n else { return Self.invalid(i, "the line ends inside the JSON object") }
            let c = p[i]
            switch state {
            case .objectStart, .key:
                if state == .objectStart && c == UInt8(ascii: "}") {
                    i += 1
                    depth -= 1
                    if depth == 0 { return Self.end(p, i) }
                    state = .afterValue
                    continue
                }
                guard c == UInt8(ascii: "\"") else { return Self.invalid(i, "expected a quoted key") }
                guard let (end, escaped) = Self.string(p, i) else {
                    return Self.invalid(i, "an unterminated or invalid string")
                }
                if depth == 1 {
                    let key = UnsafeRawBufferPointer(rebasing: p[(i + 1)..<(end - 1)])
                    keyField = -1
                    for k in fields.indices where JSONString.equals(key, escaped: escaped, fields[k]) {
                        keyField = k
                        break
                    }
                    keyIsID = idField.map { JSONString.equals(key, escaped: escaped, $0) } ?? false
                    keyIsDevice = deviceIDField.map { JSONString.equals(key, escaped: escaped, $0) } ?? false
                    keyIsUser = userField.map { JSONString.equals(key, escaped: escaped, $0) } ?? false
                }
                i = Self.skipSpace(p, end)
                guard i < n, p[i] == UInt8(ascii: ":") else { return Self.invalid(i, "expected ':' after a key") }
                i += 1
                state = .value
            case .arrayStart, .value:
                if state == .arrayStart && c == UInt8(ascii: "]") {
                    i += 1
                    depth -= 1
                    state = .afterValue
                    continue
                }
                var v = JSONValue.container
                switch c {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let object = c == UInt8(ascii: "{")
                    guard depth < maxDepth else { return Self.invalid(i, "the JSON nests too deeply") }
                    Self.push(&kinds, depth, object)
                    depth += 1
                    i += 1
                    state = object ? .objectStart : .arrayStart
                case UInt8(ascii: "\""):
                    guard let (end, escaped) = Self.string(p, i) else {
                        return Self.invalid(i, "an unterminated or invalid string")
                    }
                    v = .string(JSONStringRef(range: (i + 1)..<(end - 1), escaped: escaped))
                    i = end
                    state = .afterValue
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    let word: StaticString = c == UInt8(ascii: "t") ? "true" : c == UInt8(ascii: "f") ? "false" : "null"
                    guard Self.literal(p, i, word) else { return Self.invalid(i, "an invalid literal") }
                    v = c == UInt8(ascii: "n") ? .null : .bool(c == UInt8(ascii: "t"))
                    i += word.utf8CodeUnitCount
                    state = .afterValue
                default:
                    guard let end = Self.number(p, i) else { return Self.invalid(i, "an invalid value") }
                    v = .number(i..<end)
                    i = end
                    state = .afterValue
                }
                // Depth 1 here means the value belongs to a key of the top-level object (a nested container
                // has already raised `depth` and records as `.container`).
                if depth == 1 || (depth == 2 && state != .afterValue) {
                    if keyField >= 0 { found[keyField] = v }
                    if keyIsID { id = v }
                    if keyIsDevice { deviceID = v }
                    if keyIsUser { user = v }
                }
            case .afterValue:
                let inObject = Self.isObject(kinds, depth)
                i += 1
                if c == UInt8(ascii: ",") {
                    state = inObject ? .key : .value
                } else if c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    depth -= 1
                    if depth == 0 { return Self.end(p, i) }
                } else {
                    return Self.invalid(i - 1, inObject ? "expected ',' or '}'" : "expected ',' or ']'")
                }
            }
        }
    }

    /// After the top-level object closes at `i`: only whitespace may follow.
    private static func end(_ p: UnsafeRawBufferPointer, _ i: Int) -> NDJSONRecord? {
        let j = skipSpace(p, i)
        return j == p.count ? nil : invalid(j, "text after the JSON object")
    }

    // MARK: - Lexical pieces

    @inline(__always) static func skipSpace(_ p: UnsafeRawBufferPointer, _ from: Int) -> Int {
        var i = from
        while i < p.count {
            let b = p[i]
            guard b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D else { break }
            i += 1
        }
        return i
    }

    /// Validates the string starting with the quote at `q`; returns the index after its closing quote and
    /// whether it holds escapes.
    static func string(_ p: UnsafeRawBufferPointer, _ q: Int) -> (Int, Bool)? {
        let n = p.count
        var i = q + 1
        var escaped = false
        guard let base = p.baseAddress else { return nil }
        while i < n {
            // Whole 32-byte blocks with AVX2 when the CPU has it (C shim; it reads only p[i..<n] and returns how
            // many bytes are plain, stopping at the first special one), then the SWAR loop for the rest.
            i += rf_json_plain_run(base.assumingMemoryBound(to: UInt8.self) + i, n - i)
            // Eight bytes at a time over the plain run (a base64 receipt is thousands of bytes with no special
            // byte), then byte by byte from the first special one. In range: i + 8 <= n.
            while i + 8 <= n {
                let special = Self.specialBytes(base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                if special != 0 {
                    // The lowest flagged byte is a real one (false flags only sit above a real one).
                    i += special.trailingZeroBitCount >> 3
                    break
                }
                i += 8
            }
            guard i < n else { break }
            let b = p[i]
            if b == 0x22 { return (i + 1, escaped) }
            if b < 0x20 { return nil }  // raw control characters are not allowed in JSON strings
            if b >= 0x80 {
                // JSON text is UTF-8 (RFC 8259 section 8.1): a line that is not is invalid JSON, and its bytes never
                // reach a string column (record_id) that readers require to be UTF-8.
                guard let len = Self.utf8Sequence(p, i) else { return nil }
                i += len
                continue
            }
            if b == 0x5C {
                escaped = true
                guard i + 1 < n else { return nil }
                switch p[i + 1] {
                case 0x22, 0x5C, 0x2F, UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"),
                    UInt8(ascii: "t"):
                    i += 2
                case UInt8(ascii: "u"):
                    guard i + 6 <= n else { return nil }
                    for k in 2..<6 where JSONString.hexValue(p[i + k]) == 0xFF { return nil }
                    i += 6
                default:
                    return nil
                }
                continue
            }
            i += 1
        }
        return nil
    }

    /// A mask with the high bit set in every byte of `w` (little-endian) that ends a plain string run: `"`,
    /// `\\`, a control character below 0x20, or a non-ASCII byte; zero when there is none. SWAR: a byte equal to c gives zero
    /// after `^ c`, and `(x - 0x01..) & ~x & 0x80..` flags bytes below 1 (or below 0x20 with 0x20..).
    @inline(__always) static func specialBytes(_ w: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = w ^ (ones &* 0x22)
        let backslash = w ^ (ones &* 0x5C)
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        let control = (w &- ones &* 0x20) & ~w
        // `w` itself flags every byte at or above 0x80 (UTF-8 to validate), exactly.
        return (zeroQuote | zeroBackslash | control | w) & high
    }

    /// The length of the well-formed UTF-8 sequence starting at `i` (Unicode table 3-7: no overlong forms, no
    /// surrogates, nothing past U+10FFFF), or nil.
    static func utf8Sequence(_ p: UnsafeRawBufferPointer, _ i: Int) -> Int? {
        let len: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch p[i] {
        case 0xC2...0xDF: len = 2
        case 0xE0: (len, lo) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: len = 3
        case 0xED: (len, hi) = (3, 0x9F)
        case 0xF0: (len, lo) = (4, 0x90)
        case 0xF1...0xF3: len = 4
        case 0xF4: (len, hi) = (4, 0x8F)
        default: return nil
        }
        guard i + len <= p.count, p[i + 1] >= lo, p[i + 1] <= hi else { return nil }
        for k in 2..<len where p[i + k] & 0xC0 != 0x80 { return nil }
        return len
    }

    static func literal(_ p: UnsafeRawBufferPointer, _ i: Int, _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard i + count <= p.count else { return false }
        let w = UnsafeRawBufferPointer(start: word.utf8Start, count: count)
        for k in 0..<count where p[i + k] != w[k] { return false }
        return true
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; returns the index after it.
    static func number(_ p: UnsafeRawBufferPointer, _ start: Int) -> Int? {
        let n = p.count
        var i = start
        func digit(_ k: Int) -> Bool { k < n && p[k] >= 0x30 && p[k] <= 0x39 }
        if i < n && p[i] == UInt8(ascii: "-") { i += 1 }
        guard digit(i) else { return nil }
        if p[i] == 0x30 {
            i += 1
        } else {
            while digit(i) { i += 1 }
        }
        if i < n && p[i] == UInt8(ascii: ".") {
            i += 1
            guard digit(i) else { return nil }
            while digit(i) { i += 1 }
        }
        if i < n && (p[i] == UInt8(ascii: "e") || p[i] == UInt8(ascii: "E")) {
            i += 1
            if i < n && (p[i] == UInt8(ascii: "+") || p[i] == UInt8(ascii: "-")) { i += 1 }
            guard digit(i) else { return nil }
            while digit(i) { i += 1 }
        }
        return i
    }

    // MARK: - Container kinds

    /// Records whether the container opened at `depth + 1` is an object.
    static func push(_ kinds: inout (UInt64, UInt64), _ depth: Int, _ object: Bool) {
        guard depth < maxSupportedDepth else { return }  // the caller rejects the depth right after
        let bit: UInt64 = 1 << UInt64(depth & 63)
        if depth < 64 {
            kinds.0 = object ? kinds.0 | bit : kinds.0 & ~bit
        } else {
            kinds.1 = object ? kinds.1 | bit : kinds.1 & ~bit
        }
    }

    static func isObject(_ kinds: (UInt64, UInt64), _ depth: Int) -> Bool {
        let d = depth - 1
        let bit: UInt64 = 1 << UInt64(d & 63)
        return (d < 64 ? kinds.0 : kinds.1) & bit != 0
    }
}
