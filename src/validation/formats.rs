//! The `format`s the API server checks on custom resources (kube-openapi's default format
//! registry). Unknown formats, and formats that only document a type (`int32`, `int64`,
//! `float`, `double`, `password`), are not checked — as in the API server. Where the API
//! server's parser is lenient, so is crfix: it must never reject what the API server accepts.

use base64::Engine;

/// True for the formats crfix checks.
pub fn is_checked(format: &str) -> bool {
    matches!(
        format,
        "date"
            | "date-time"
            | "datetime"
            | "byte"
            | "uuid"
            | "uuid3"
            | "uuid4"
            | "uuid5"
            | "ipv4"
            | "ipv6"
            | "cidr"
            | "mac"
            | "hostname"
            | "email"
            | "uri"
            | "duration"
    )
}

/// True when `s` is a valid `format` (or the format is not checked).
pub fn check(format: &str, s: &str) -> bool {
    match format {
        "date" => is_date(s),
        "date-time" | "datetime" => is_date_time(s),
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "uuid" => is_uuid(s, None),
        "uuid3" => is_uuid(s, Some(b'3')),
        "uuid4" => is_uuid(s, Some(b'4')),
        "uuid5" => is_uuid(s, Some(b'5')),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "hostname" => is_hostname(s),
        "email" => is_email(s),
        "uri" => is_uri(s),
        "duration" => is_duration(s),
        _ => true,
    }
}

fn digits(s: &str, n: usize) -> Option<u32> {
    if s.len() == n && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

fn is_date(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Some(y), Some(m), Some(d)) = (digits(y, 4), digits(m, 2), digits(d, 2)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let max = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=max).contains(&d)
}

fn is_time(s: &str) -> bool {
    let (hms, frac) = match s.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (s, None),
    };
    if let Some(frac) = frac {
        if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(sec), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    matches!((digits(h, 2), digits(m, 2), digits(sec, 2)), (Some(h), Some(m), Some(s)) if h < 24 && m < 60 && s <= 60)
}

fn is_zone(z: &str) -> bool {
    if z.is_empty() || z == "Z" || z == "z" {
        return true;
    }
    let Some(rest) = z.strip_prefix('+').or_else(|| z.strip_prefix('-')) else {
        return false;
    };
    let (h, m) = match rest.split_once(':') {
        Some(hm) => hm,
        None if rest.len() == 4 => rest.split_at(2),
        None => return false,
    };
    matches!((digits(h, 2), digits(m, 2)), (Some(h), Some(m)) if h < 24 && m < 60)
}

/// RFC 3339 date-time; like the API server, also without a zone and with a lower-case `t`.
fn is_date_time(s: &str) -> bool {
    let Some(idx) = s.find(['T', 't', ' ']) else {
        return false;
    };
    let (date, rest) = (&s[..idx], &s[idx + 1..]);
    if !is_date(date) {
        return false;
    }
    let zone_at = rest
        .find(['Z', 'z', '+'])
        .or_else(|| rest.rfind('-'))
        .unwrap_or(rest.len());
    is_time(&rest[..zone_at]) && is_zone(&rest[zone_at..])
}

fn is_uuid(s: &str, version: Option<u8>) -> bool {
    let b = s.as_bytes();
    if b.len() != 36 {
        return false;
    }
    for (i, c) in b.iter().enumerate() {
        let dash = matches!(i, 8 | 13 | 18 | 23);
        if dash != (*c == b'-') || (!dash && !c.is_ascii_hexdigit()) {
            return false;
        }
    }
    match version {
        None => true,
        Some(v) => {
            b[14] == v
                && (v == b'3' || matches!(b[19].to_ascii_lowercase(), b'8' | b'9' | b'a' | b'b'))
        }
    }
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Some(bits) =
        (!bits.is_empty() && bits.len() <= 3 && bits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| bits.parse::<u32>().ok())
            .flatten()
    else {
        return false;
    };
    if ip.parse::<std::net::Ipv4Addr>().is_ok() {
        bits <= 32
    } else if ip.parse::<std::net::Ipv6Addr>().is_ok() {
        bits <= 128
    } else {
        false
    }
}

fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    for sep in [':', '-'] {
        let parts: Vec<&str> = s.split(sep).collect();
        if matches!(parts.len(), 6 | 8 | 20) && parts.iter().all(|p| hex(p, 2)) {
            return true;
        }
    }
    let parts: Vec<&str> = s.split('.').collect();
    matches!(parts.len(), 3 | 4 | 10) && parts.iter().all(|p| hex(p, 4))
}

fn is_hostname(s: &str) -> bool {
    if s.is_empty() || s.len() > 255 {
        return false;
    }
    let s = s.strip_suffix('.').unwrap_or(s);
    s.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && b.len() <= 63
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric()
            && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    })
}

fn is_email(s: &str) -> bool {
    let addr = match (s.find('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        _ => s,
    };
    match addr.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !addr.contains(char::is_whitespace)
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }
        None => false,
    }
}

/// Go's `url.ParseRequestURI`: an absolute URI (`scheme:...`) or an absolute path.
fn is_uri(s: &str) -> bool {
    if s.starts_with('/') {
        return !s.contains(char::is_whitespace);
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !s.contains(char::is_whitespace)
}

/// Go durations (`1h30m`, `-1.5s`) and kube-openapi's longer forms (`3 days`, `1 week`).
fn is_duration(s: &str) -> bool {
    let s = s.trim();
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    if body == "0" {
        return true;
    }
    let units = [
        "ns",
        "us",
        "µs",
        "μs",
        "ms",
        "s",
        "m",
        "h",
        "d",
        "w",
        "sec",
        "secs",
        "second",
        "seconds",
        "min",
        "mins",
        "minute",
        "minutes",
        "hr",
        "hrs",
        "hour",
        "hours",
        "day",
        "days",
        "wk",
        "wks",
        "week",
        "weeks",
        "nanosecond",
        "nanoseconds",
        "microsecond",
        "microseconds",
        "millisecond",
        "milliseconds",
    ];
    let mut rest = body;
    let mut any = false;
    while !rest.is_empty() {
        rest = rest.trim_start();
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 || rest[..num_len].parse::<f64>().is_err() {
            return false;
        }
        rest = rest[num_len..].trim_start();
        let unit_len = rest
            .find(|c: char| !c.is_alphabetic() && c != 'µ' && c != 'μ')
            .unwrap_or(rest.len());
        if !units.contains(&&rest[..unit_len]) {
            return false;
        }
        rest = &rest[unit_len..];
        any = true;
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(check("date-time", "2024-02-29T10:00:00Z"));
        assert!(check("date-time", "2024-02-29T10:00:00.123+02:00"));
        assert!(!check("date-time", "2023-02-29T10:00:00Z"));
        assert!(!check("date-time", "yesterday"));
        assert!(check("date", "2024-01-31") && !check("date", "2024-13-01"));
        assert!(check("byte", "aGVsbG8=") && !check("byte", "not base64!"));
        assert!(check("uuid", "123e4567-e89b-12d3-a456-426614174000"));
        assert!(!check("uuid", "123e4567e89b12d3a456426614174000"));
        assert!(check("uuid4", "123e4567-e89b-42d3-a456-426614174000"));
        assert!(check("ipv4", "10.0.0.1") && !check("ipv4", "10.0.0.256"));
        assert!(check("ipv6", "::1") && !check("ipv6", "10.0.0.1"));
        assert!(check("cidr", "10.0.0.0/8") && !check("cidr", "10.0.0.0/33"));
        assert!(check("mac", "00:1a:2b:3c:4d:5e") && !check("mac", "00:1a:2b"));
        assert!(check("hostname", "example.com") && !check("hostname", "-bad.com"));
        assert!(check("email", "a@example.com") && !check("email", "nope"));
        assert!(check("uri", "https://example.com/x") && !check("uri", "example.com"));
        assert!(check("duration", "1h30m") && check("duration", "3 days"));
        assert!(!check("duration", "soon"));
        assert!(check("int32", "anything") && !is_checked("int32"));
    }
}
