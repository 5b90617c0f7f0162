/// A JSON value of a JWS payload or header, read by `PayloadJSON.parse`.
public enum PayloadValue: Sendable, Equatable {
    case string(String)
    /// A number written as an integer that fits in 64 bits.
    case integer(Int64)
    /// Any other number (a fraction, an exponent, or an integer beyond 64 bits), as the nearest double.
    case double(Double)
    case bool(Bool)
    case null
    case array([PayloadValue])
    case object([String: PayloadValue])
}

/// Why `PayloadJSON.parse` refused some text: a code and the byte offset where it was seen.
public struct PayloadJSONError: Error, Sendable, Equatable {
    public enum Code: Sendable, Equatable {
        /// The text ended inside a value.
        case truncated
        /// A byte that no JSON value can hold at this place.
        case unexpectedByte
        /// A string holds a control character, a bad escape, a lone surrogate or invalid UTF-8.
        case badString
        /// A number that does not follow the JSON grammar.
        case badNumber
        /// Objects and arrays nested deeper than `PayloadJSON.maxDepth`.
        case tooDeep
        /// Something other than whitespace follows the value.
        case trailingBytes
        /// The text is JSON but not an object.
        case notAnObject
    }

    public var code: Code
    public var offset: Int

    /// One sentence for the row's error detail.
    public var sentence: String {
        let what: String
        switch code {
        case .truncated: what = "ends inside a value"
        case .unexpectedByte: what = "holds a byte no JSON value can have there"
        case .badString: what = "holds a string with a control character, a bad escape or invalid UTF-8"
        case .badNumber: what = "holds a malformed number"
        case .tooDeep: what = "nests objects and arrays deeper than \(PayloadJSON.maxDepth)"
        case .trailingBytes: what = "has text after its value"
        case .notAnObject: what = "is JSON but not an object"
        }
        return "\(what) (byte \(offset))"
    }
}

/// A small JSON reader (RFC 8259) for the decoded parts of a JWS, straight from the bytes into `PayloadValue`s:
/// strings unescaped (surrogate pairs joined; a lone surrogate, a control character or invalid UTF-8 refused),
/// integers exact, other numbers as doubles, and a key given twice in one object counting once, with its last value
/// (as the NDJSON line scanner reads lines). Nesting is limited to `maxDepth`, so no input can exhaust the stack.
public enum PayloadJSON {
    /// The deepest nesting of objects and arrays accepted (Apple's payloads nest three levels at most).
    public static let maxDepth = 64

    /// The object `bytes` holds.
    public static func parseObject(_ bytes: UnsafeRawBufferPointer) throws(PayloadJSONError) -> [String: PayloadValue] {
        var reader = Reader(bytes: bytes)
        reader.skipSpace()
        guard reader.peek() == UInt8(ascii: "{") else {
            if reader.i >= bytes.count { throw PayloadJSONError(code: .truncated, offset: reader.i) }
            let start = reader.i
            _ = try reader.value(depth: 0)
            throw PayloadJSONError(code: .notAnObject, offset: start)
        }
        guard case .object(let object) = try reader.value(depth: 0) else {
            throw PayloadJSONError(code: .notAnObject, offset: 0)
        }
        reader.skipSpace()
        guard reader.i == bytes.count else { throw PayloadJSONError(code: .trailingBytes, offset: reader.i) }
        return object
    }

    /// `parseObject` over an array of bytes.
    public static func parseObject(_ bytes: [UInt8]) throws(PayloadJSONError) -> [String: PayloadValue] {
        let result = bytes.withUnsafeBytes { b -> Result<[String: PayloadValue], PayloadJSONError> in
            do throws(PayloadJSONError) {
                return .success(try parseObject(b))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var i = 0

        init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

        func peek() -> UInt8? { i < bytes.count ? bytes[i] : nil }

        mutating func skipSpace() {
            while i < bytes.count {
                switch bytes[i] {
                case 0x20, 0x09, 0x0A, 0x0D: i += 1
                default: return
                }
            }
        }

        func fail(_ code: PayloadJSONError.Code) -> PayloadJSONError {
            PayloadJSONError(code: i >= bytes.count ? .truncated : code, offset: i)
        }

        mutating func expect(_ byte: UInt8) throws(PayloadJSONError) {
            guard peek() == byte else { throw fail(.unexpectedByte) }
            i += 1
        }

        mutating func value(depth: Int) throws(PayloadJSONError) -> PayloadValue {
            skipSpace()
            guard let b = peek() else { throw fail(.truncated) }
            switch b {
            case UInt8(ascii: "{"):
                guard depth < PayloadJSON.maxDepth else { throw fail(.tooDeep) }
                return .object(try object(depth: depth + 1))
            case UInt8(ascii: "["):
                guard depth < PayloadJSON.maxDepth else { throw fail(.tooDeep) }
                return .array(try array(depth: depth + 1))
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
            default: throw fail(.unexpectedByte)
            }
        }

        mutating func literal(_ word: StaticString) throws(PayloadJSONError) {
            let n = word.utf8CodeUnitCount
            guard i + n <= bytes.count else {
                i = bytes.count
                throw fail(.truncated)
            }
            for k in 0..<n where bytes[i + k] != word.utf8Start[k] {
                i += k
                throw fail(.unexpectedByte)
            }
            i += n
        }

        mutating func object(depth: Int) throws(PayloadJSONError) -> [String: PayloadValue] {
            i += 1  // {
            var members: [String: PayloadValue] = [:]
            skipSpace()
            if peek() == UInt8(ascii: "}") {
                i += 1
                return members
            }
            while true {
                skipSpace()
                guard peek() == UInt8(ascii: "\"") else { throw fail(.unexpectedByte) }
                let key = try string()
                skipSpace()
                try expect(UInt8(ascii: ":"))
                members[key] = try value(depth: depth)
                skipSpace()
                guard let b = peek() else { throw fail(.truncated) }
                i += 1
                if b == UInt8(ascii: "}") { return members }
                guard b == UInt8(ascii: ",") else {
                    i -= 1
                    throw fail(.unexpectedByte)
                }
            }
        }

        mutating func array(depth: Int) throws(PayloadJSONError) -> [PayloadValue] {
            i += 1  // [
            var elements: [PayloadValue] = []
            skipSpace()
            if peek() == UInt8(ascii: "]") {
                i += 1
                return elements
            }
            while true {
                elements.append(try value(depth: depth))
                skipSpace()
                guard let b = peek() else { throw fail(.truncated) }
                i += 1
                if b == UInt8(ascii: "]") { return elements }
                guard b == UInt8(ascii: ",") else {
                    i -= 1
                    throw fail(.unexpectedByte)
                }
            }
        }

        /// The string whose opening quote is at `i`; `i` ends after its closing quote.
        mutating func string() throws(PayloadJSONError) -> String {
            i += 1
            let start = i
            // The common case: no escape, ASCII or valid UTF-8, read in one pass and copied once.
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    let run = UnsafeRawBufferPointer(rebasing: bytes[start..<i])
                    i += 1
                    guard let s = String(validating: run, as: UTF8.self) else {
                        throw PayloadJSONError(code: .badString, offset: start)
                    }
                    return s
                }
                if b == UInt8(ascii: "\\") { break }
                guard b >= 0x20 else { throw fail(.badString) }
                i += 1
            }
            guard i < bytes.count else { throw fail(.truncated) }
            var out = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[start..<i]))
            while i < bytes.count {
                let b = bytes[i]
                if b == UInt8(ascii: "\"") {
                    i += 1
                    guard let s = String(validating: out, as: UTF8.self) else {
                        throw PayloadJSONError(code: .badString, offset: start)
                    }
                    return s
                }
                guard b >= 0x20 else { throw fail(.badString) }
                if b != UInt8(ascii: "\\") {
                    out.append(b)
                    i += 1
                    continue
                }
                i += 1
                guard let e = peek() else { throw fail(.truncated) }
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        // A high surrogate must be followed by an escaped low one.
                        guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u")
                        else { throw fail(.badString) }
                        i += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail(.badString) }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw fail(.badString)
                    }
                    // Not a surrogate, or a joined pair: always a valid scalar.
                    out.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default:
                    i -= 1
                    throw fail(.badString)
                }
            }
            throw fail(.truncated)
        }

        mutating func hex4() throws(PayloadJSONError) -> UInt32 {
            guard i + 4 <= bytes.count else {
                i = bytes.count
                throw fail(.truncated)
            }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let b = bytes[i]
                let d: UInt8
                switch b {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
                default: throw fail(.badString)
                }
                v = v << 4 | UInt32(d)
                i += 1
            }
            return v
        }

        /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
        mutating func number() throws(PayloadJSONError) -> PayloadValue {
            let start = i
            if peek() == UInt8(ascii: "-") { i += 1 }
            func digits(_ r: inout Reader) -> Int {
                let s = r.i
                while let b = r.peek(), b >= UInt8(ascii: "0"), b <= UInt8(ascii: "9") { r.i += 1 }
                return r.i - s
            }
            let intStart = i
            let intDigits = digits(&self)
            guard intDigits > 0 else { throw fail(.badNumber) }
            guard intDigits == 1 || bytes[intStart] != UInt8(ascii: "0") else {
                i = intStart + 1
                throw fail(.badNumber)
            }
            var integral = true
            if peek() == UInt8(ascii: ".") {
                i += 1
                integral = false
                guard digits(&self) > 0 else { throw fail(.badNumber) }
            }
            if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
                i += 1
                integral = false
                if let s = peek(), s == UInt8(ascii: "+") || s == UInt8(ascii: "-") { i += 1 }
                guard digits(&self) > 0 else { throw fail(.badNumber) }
            }
            let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
            if integral, let v = Int64(text) { return .integer(v) }
            // The grammar was checked above, so Double always reads it (an overflow reads as infinity).
            return .double(Double(text) ?? .nan)
        }
    }
}
