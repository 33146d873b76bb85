//! Times in cells: RFC 3339 timestamps read from objects, and the short ages
//! (`45s`, `3h4m`, `2y10d`) the API server writes for them.
//!
//! Instants are nanoseconds since the Unix epoch in an `i128`, so that any
//! timestamp an object can carry (years 0 to 9999) and any difference of two
//! of them fit without overflow.

use std::time::SystemTime;

const NANOS_PER_SEC: i128 = 1_000_000_000;

/// An instant, in nanoseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Instant(i128);

impl Instant {
    /// The instant of a system time, before or after the epoch.
    pub(crate) fn from_system(time: SystemTime) -> Instant {
        match time.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(after) => Instant(after.as_nanos() as i128),
            Err(before) => Instant(-(before.duration().as_nanos() as i128)),
        }
    }

    /// Whole seconds since the epoch, for tests that build times by hand.
    #[cfg(test)]
    pub(crate) fn from_secs(secs: i64) -> Instant {
        Instant(i128::from(secs) * NANOS_PER_SEC)
    }

    /// The system time of this instant.
    #[cfg(test)]
    pub(crate) fn to_system(self) -> SystemTime {
        let since = std::time::Duration::from_nanos(self.0.unsigned_abs() as u64);
        if self.0 >= 0 {
            SystemTime::UNIX_EPOCH + since
        } else {
            SystemTime::UNIX_EPOCH - since
        }
    }

    /// The same instant moved by `nanos`.
    #[cfg(test)]
    pub(crate) fn plus_nanos(self, nanos: i128) -> Instant {
        Instant(self.0 + nanos)
    }
}

/// The zero time of Go's `time.Time` (0001-01-01T00:00:00Z): an object whose
/// timestamp is unset, or `null`, prints `<unknown>` rather than an age.
const GO_ZERO: Instant = Instant(-62_135_596_800 * NANOS_PER_SEC);

/// Reads an RFC 3339 timestamp as the API server writes them
/// (`2026-11-26T06:28:10Z`, with optional fractional seconds, as in
/// `eventTime`'s `2026-11-26T06:28:10.123456Z`, and `Z` or a `+hh:mm` offset).
pub(crate) fn parse_time(text: &str) -> Option<Instant> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let year = digits(&b[0..4])?;
    let month = digits(&b[5..7])?;
    let day = digits(&b[8..10])?;
    let hour = digits(&b[11..13])?;
    let minute = digits(&b[14..16])?;
    let second = digits(&b[17..19])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = &b[19..];
    let mut nanos: i128 = 0;
    if let Some((b'.', fraction)) = rest.split_first() {
        let len = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if len == 0 {
            return None;
        }
        let (whole, tail) = fraction.split_at(len);
        // Digits past the ninth are below a nanosecond: dropped, as Go does.
        for (i, c) in whole.iter().take(9).enumerate() {
            nanos += i128::from(c - b'0') * 10i128.pow(8 - i as u32);
        }
        rest = tail;
    }
    let offset_secs: i64 = match rest {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let hours = digits(&[*h1, *h2])?;
            let minutes = digits(&[*m1, *m2])?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let offset = hours * 3600 + minutes * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    Some(Instant(i128::from(secs) * NANOS_PER_SEC + nanos))
}

fn digits(b: &[u8]) -> Option<i64> {
    b.iter().try_fold(0i64, |n, c| {
        c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
    })
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to a civil date of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A timestamp that is set: `None` when missing, `null`, Go's zero time or
/// not a timestamp (the API server would not have stored such a text).
pub(crate) fn timestamp(text: Option<&str>) -> Option<Instant> {
    text.and_then(parse_time).filter(|t| *t != GO_ZERO)
}

/// A timestamp as the API server's default Table writes `metadata.creationTimestamp`
/// (Go's `time.RFC3339` in UTC: whole seconds, `Z`); Go's zero time,
/// `0001-01-01T00:00:00Z`, when it is unset.
pub(crate) fn created_at(text: Option<&str>) -> String {
    match text.and_then(parse_time) {
        Some(Instant(nanos)) if nanos >= 0 => crate::time::rfc3339(std::time::Duration::from_secs(
            (nanos / NANOS_PER_SEC) as u64,
        )),
        // Before 1970: as the object says it (and Go's zero time as Go writes it).
        Some(t) if t != GO_ZERO => text.unwrap_or_default().to_string(),
        _ => "0001-01-01T00:00:00Z".to_string(),
    }
}

/// The age of `timestamp` at `now` as the API server prints it, or
/// `<unknown>` when the timestamp is not set.
pub(crate) fn age(text: Option<&str>, now: Instant) -> String {
    match timestamp(text) {
        Some(t) => since(t, now),
        None => "<unknown>".to_string(),
    }
}

/// The age at `now` of a time read earlier.
pub(crate) fn since(time: Instant, now: Instant) -> String {
    human_duration(now.0 - time.0)
}

/// The time from `from` to `to`, both RFC 3339 texts, printed as an age; a
/// job's duration. `None` when either is missing or not a timestamp.
pub(crate) fn between(from: &str, to: &str) -> Option<String> {
    Some(human_duration(parse_time(to)?.0 - parse_time(from)?.0))
}

/// A duration in nanoseconds, printed with two or three significant figures
/// as apimachinery's `duration.HumanDuration` does: seconds below 2 minutes,
/// minutes and seconds below 10 minutes, minutes below 3 hours, hours and
/// minutes below 8 hours, hours below 2 days, days and hours below 8 days,
/// days below 2 years, years and days below 8 years, then years (of 365
/// days). Up to two seconds in the future is `0s` (clocks drift), further
/// is `<invalid>`.
pub(crate) fn human_duration(nanos: i128) -> String {
    // Go's durations are i64 nanoseconds: a difference past ±292 years
    // saturates, so an absurdly old timestamp still prints `292y`.
    let nanos = nanos.clamp(i128::from(i64::MIN), i128::from(i64::MAX));
    let seconds = nanos / NANOS_PER_SEC;
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        return with_rest(minutes, "m", seconds % 60, "s");
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = minutes / 60;
    if hours < 8 {
        return with_rest(hours, "h", minutes % 60, "m");
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return with_rest(days, "d", hours % 24, "h");
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    if hours < 24 * 365 * 8 {
        return with_rest(days / 365, "y", days % 365, "d");
    }
    format!("{}y", days / 365)
}

/// `5m` when the smaller unit is zero, `5m3s` otherwise.
fn with_rest(big: i128, big_unit: &str, small: i128, small_unit: &str) -> String {
    if small == 0 {
        format!("{big}{big_unit}")
    } else {
        format!("{big}{big_unit}{small}{small_unit}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i128 = NANOS_PER_SEC;

    #[test]
    fn ages_follow_the_api_servers_steps() {
        let m = 60 * S;
        let h = 60 * m;
        let d = 24 * h;
        let y = 365 * d;
        let cases: &[(i128, &str)] = &[
            (-3 * S, "<invalid>"),
            (-2 * S, "<invalid>"),
            (-S - S / 2, "0s"),
            (-S, "0s"),
            (0, "0s"),
            (S / 2, "0s"),
            (45 * S, "45s"),
            (119 * S, "119s"),
            (2 * m, "2m"),
            (5 * m + 3 * S, "5m3s"),
            (9 * m + 59 * S, "9m59s"),
            (10 * m + 30 * S, "10m"),
            (179 * m, "179m"),
            (3 * h, "3h"),
            (3 * h + 4 * m + 59 * S, "3h4m"),
            (7 * h + 59 * m, "7h59m"),
            (8 * h + 30 * m, "8h"),
            (47 * h, "47h"),
            (2 * d, "2d"),
            (2 * d + 3 * h, "2d3h"),
            (7 * d + 23 * h, "7d23h"),
            (8 * d, "8d"),
            (75 * d + 5 * h, "75d"),
            (729 * d, "729d"),
            (2 * y, "2y"),
            (2 * y + 10 * d, "2y10d"),
            (7 * y + 364 * d, "7y364d"),
            (8 * y + 100 * d, "8y"),
            (40 * y, "40y"),
        ];
        for (nanos, want) in cases {
            assert_eq!(human_duration(*nanos), *want, "{nanos} ns");
        }
    }

    #[test]
    fn reads_rfc3339_as_the_api_server_writes_it() {
        let t = parse_time("2026-11-26T06:28:10Z").unwrap();
        assert_eq!(t, Instant::from_secs(1_795_674_490));
        assert_eq!(
            parse_time("2026-11-26T06:28:10.5Z"),
            Some(t.plus_nanos(S / 2))
        );
        assert_eq!(
            parse_time("2026-11-26T06:28:10.123456789123Z"),
            Some(t.plus_nanos(123_456_789))
        );
        assert_eq!(parse_time("2026-11-26T08:28:10+02:00"), Some(t));
        assert_eq!(parse_time("2026-11-26T04:28:10-02:00"), Some(t));
        assert_eq!(parse_time("1970-01-01T00:00:00Z"), Some(Instant(0)));
        assert_eq!(
            parse_time("2000-02-29T00:00:00Z"),
            Some(Instant::from_secs(951_782_400))
        );
        assert_eq!(parse_time("0001-01-01T00:00:00Z"), Some(GO_ZERO));
        for bad in [
            "",
            "null",
            "2026-11-26",
            "2026-11-26 06:28:10Z",
            "2026-13-26T06:28:10Z",
            "2026-02-30T06:28:10Z",
            "2026-11-26T24:00:00Z",
            "2026-11-26T06:28:10",
            "2026-11-26T06:28:10.Z",
            "2026-11-26T06:28:10+0200",
            "2026-11-26T06:28:10Zjunk",
            "２０２６-11-26T06:28:10Z",
        ] {
            assert_eq!(parse_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ages_of_timestamps() {
        let now = parse_time("2026-11-26T06:28:14.6Z").unwrap();
        assert_eq!(age(Some("2026-11-26T06:28:03Z"), now), "11s");
        assert_eq!(age(Some("2026-11-26T06:28:16Z"), now), "0s");
        assert_eq!(age(Some("2026-11-26T06:28:17Z"), now), "<invalid>");
        assert_eq!(age(Some("2024-01-01T00:00:00Z"), now), "2y330d");
        assert_eq!(age(None, now), "<unknown>");
        assert_eq!(age(Some("yesterday"), now), "<unknown>");
        assert_eq!(age(Some("0001-01-01T00:00:00Z"), now), "<unknown>");
        // A second after Go's zero time is a real time, too old for i64
        // nanoseconds: the difference saturates at 292 years.
        assert_eq!(age(Some("0001-01-01T00:00:01Z"), now), "292y");
        assert_eq!(
            between("2026-11-26T06:00:00Z", "2026-11-26T06:04:30Z").as_deref(),
            Some("4m30s")
        );
        assert_eq!(between("2026-11-26T06:00:00Z", "soon"), None);
    }

    #[test]
    fn system_times_before_and_after_the_epoch() {
        use std::time::Duration;
        let after = SystemTime::UNIX_EPOCH + Duration::from_millis(1500);
        assert_eq!(Instant::from_system(after), Instant(1500 * 1_000_000));
        let before = SystemTime::UNIX_EPOCH - Duration::from_secs(2);
        assert_eq!(Instant::from_system(before), Instant(-2 * S));
    }
}
