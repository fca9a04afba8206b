// Timestamp: the stored form of a date, seconds and nanoseconds since 1970-01-01 00:00:00 UTC
// (as the C API's cove_timestamp_t). Both parts carry the same sign, so (seconds, nanoseconds)
// compared in order is time order, and the index encoding can write them one after the other.
import FoundationEssentials

/// A point in time: whole seconds and nanoseconds since 1970-01-01 00:00:00 UTC, both with the
/// same sign (-1.5 s is seconds -1, nanoseconds -500_000_000) and |nanoseconds| < 1_000_000_000.
public struct Timestamp: Hashable, Comparable, Sendable {
    /// Whole seconds since 1970 UTC.
    public let seconds: Int64
    /// Nanoseconds beyond `seconds`, with the same sign as `seconds` (or zero).
    public let nanoseconds: Int32

    /// A timestamp of `seconds` and `nanoseconds`, normalized: nanoseconds beyond a second carry
    /// into the seconds and the two parts are given the same sign. Seconds saturate at the
    /// bounds of `Int64`.
    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        var s = seconds
        var ns = Int64(nanoseconds)
        let carry = ns / 1_000_000_000
        ns -= carry * 1_000_000_000
        s = Timestamp.saturatingAdd(s, carry)
        if s > 0 && ns < 0 {
            s -= 1
            ns += 1_000_000_000
        } else if s < 0 && ns > 0 {
            s += 1
            ns -= 1_000_000_000
        }
        self.seconds = s
        self.nanoseconds = Int32(ns)
    }

    private static func saturatingAdd(_ a: Int64, _ b: Int64) -> Int64 {
        let (r, overflow) = a.addingReportingOverflow(b)
        if overflow { return b > 0 ? .max : .min }
        return r
    }

    /// The timestamp of `date`, to the nearest nanosecond that a `Double` holds.
    public init(_ date: Date) {
        let t = date.timeIntervalSince1970
        guard t.isFinite else {
            self.init(seconds: t > 0 ? .max : .min)
            return
        }
        let whole = t.rounded(.towardZero)
        if whole >= 9.2e18 || whole <= -9.2e18 {
            self.init(seconds: whole > 0 ? .max : .min)
            return
        }
        let ns = ((t - whole) * 1e9).rounded()
        self.init(seconds: Int64(whole), nanoseconds: Int32(ns))
    }

    /// The `Date` of this timestamp (a `Double` of seconds: about microsecond precision today).
    public var date: Date {
        Date(timeIntervalSince1970: Double(seconds) + Double(nanoseconds) / 1e9)
    }

    /// Time order.
    public static func < (a: Timestamp, b: Timestamp) -> Bool {
        (a.seconds, a.nanoseconds) < (b.seconds, b.nanoseconds)
    }
}

extension Date {
    /// The date of a stored timestamp.
    public init(_ timestamp: Timestamp) {
        self = timestamp.date
    }
}

extension Timestamp: CustomStringConvertible {
    /// ISO 8601 in UTC with the nanoseconds that are not zero, e.g. `2024-03-01T12:00:00Z` or
    /// `1969-12-31T23:59:59.5Z`; years outside 0...9999 are written with their sign.
    public var description: String {
        // Floor division to a day and a second of that day, then the civil date of the day
        // (the days-from-civil algorithm in reverse, on 400-year eras).
        var secs = seconds
        var ns = Int64(nanoseconds)
        if ns < 0 {
            ns += 1_000_000_000
            secs -= 1
        }
        var days = secs / 86_400
        var secOfDay = secs % 86_400
        if secOfDay < 0 {
            secOfDay += 86_400
            days -= 1
        }
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)

        func pad(_ v: Int64, _ width: Int) -> String {
            let s = String(v)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        var out = (0...9999).contains(year) ? pad(year, 4) : (year < 0 ? "-" + pad(-year, 4) : "+" + pad(year, 4))
        out += "-" + pad(month, 2) + "-" + pad(day, 2)
        out += "T" + pad(secOfDay / 3600, 2) + ":" + pad(secOfDay / 60 % 60, 2) + ":" + pad(secOfDay % 60, 2)
        if ns != 0 {
            var frac = pad(ns, 9)
            while frac.hasSuffix("0") { frac.removeLast() }
            out += "." + frac
        }
        return out + "Z"
    }
}
