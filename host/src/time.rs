//! RFC 3339 timestamps without a date-time dependency.

use std::time::{Duration, SystemTime};

/// Formats a time since the Unix epoch as `2026-11-21T00:25:17Z` (UTC, seconds).
pub fn rfc3339(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Civil date from days since 1970-01-01 (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Formats a time since the Unix epoch as `2026-11-21T00:25:17.042Z` (UTC,
/// milliseconds).
pub fn rfc3339_millis(since_epoch: Duration) -> String {
    let seconds = rfc3339(Duration::from_secs(since_epoch.as_secs()));
    format!(
        "{}.{:03}Z",
        &seconds[..seconds.len() - 1],
        since_epoch.subsec_millis()
    )
}

/// Reads an RFC 3339 time (`2026-11-21T00:25:17Z`, with fractions of a
/// second and a `+01:00` offset if any) as the time since the Unix epoch;
/// `None` if it is not one, or before the epoch.
pub fn parse_rfc3339(text: &str) -> Option<Duration> {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(range)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut at = 19;
    let mut nanos = 0u32;
    if b[at] == b'.' {
        at += 1;
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            if at - start < 9 {
                nanos = nanos * 10 + u32::from(b[at] - b'0');
            }
            at += 1;
        }
        let places = (at - start).min(9);
        if places == 0 {
            return None;
        }
        nanos *= 10u32.pow(9 - places as u32);
    }
    let offset = match b.get(at..)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let part = |a: &u8, b: &u8| {
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
            };
            let minutes = part(h1, h2)? * 60 + part(m1, m2)?;
            if *sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => return None,
    };
    // Days since 1970-01-01 of a civil date (proleptic Gregorian calendar).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    u64::try_from(seconds).ok().map(|s| Duration::new(s, nanos))
}

/// Milliseconds since the Unix epoch, now.
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The current time in RFC 3339, UTC.
pub fn now_rfc3339() -> String {
    rfc3339(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339(Duration::ZERO), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(Duration::from_secs(1_795_220_717)),
            "2026-11-21T00:25:17Z"
        );
        assert_eq!(
            rfc3339_millis(Duration::from_millis(1_795_220_717_042)),
            "2026-11-21T00:25:17.042Z"
        );
    }

    #[test]
    fn reads_what_it_writes_and_offsets() {
        for secs in [0, 951_782_400, 1_795_220_717, 4_102_444_800] {
            let text = rfc3339(Duration::from_secs(secs));
            assert_eq!(
                parse_rfc3339(&text),
                Some(Duration::from_secs(secs)),
                "{text}"
            );
        }
        assert_eq!(
            parse_rfc3339("2026-11-21T01:25:17.5+01:00"),
            Some(Duration::from_millis(1_795_220_717_500))
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-11-21T00:25:17",
            "2026-11-21T00:25:17.Z",
            "1969-12-31T23:59:59Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
