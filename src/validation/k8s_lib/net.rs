//! Kubernetes' IP and CIDR libraries (`kubernetes.net.ip`, `net.cidr`): `ip()`, `isIP()`,
//! `ip.isCanonical()`, `family`, `isUnspecified`, `isLoopback`, `isLinkLocalMulticast`,
//! `isLinkLocalUnicast`, `isGlobalUnicast`, `string(ip)`; `cidr()`, `isCIDR()`, `containsIP`,
//! `containsCIDR`, `ip`, `prefixLength`, `masked`, `string(cidr)`.
//!
//! Addresses are parsed with `std::net` and checked as Go's `netip.ParseAddr` and Kubernetes
//! check them (no zones, no IPv4-mapped IPv6); Go's error texts are rebuilt for IPv4 and the
//! common IPv6 cases.

use std::any::Any;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::common::value::{StaticVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::{go_quote, k8s_error};

static IP_TYPE: Type = Type::new_unspecified_type("net.IP");
static CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ip(IpAddr);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl Val for Ip {
    fn get_type(&self) -> &Type {
        &IP_TYPE
    }
    fn cel_type() -> &'static Type {
        &IP_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Ip>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Ip {}

impl Val for Cidr {
    fn get_type(&self) -> &Type {
        &CIDR_TYPE
    }
    fn cel_type() -> &'static Type {
        &CIDR_TYPE
    }
    fn equals(&self, other: &dyn Val) -> bool {
        other.downcast_ref::<Cidr>().is_some_and(|o| o == self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(*self)
    }
    fn as_any(&self) -> Option<&dyn Any> {
        Some(self)
    }
}
impl StaticVal for Cidr {}

/// Go's `parseIPv4Fields` error message for an invalid dotted quad, with its `at` part.
fn ipv4_error(s: &str) -> (&'static str, Option<&str>) {
    let b = s.as_bytes();
    let (mut val, mut fields, mut dig_len) = (0u32, 0, 0);
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_digit() {
            if dig_len == 1 && val == 0 {
                return ("IPv4 field has octet with leading zero", None);
            }
            val = val * 10 + u32::from(c - b'0');
            dig_len += 1;
            if val > 255 {
                return ("IPv4 field has value >255", None);
            }
        } else if c == b'.' {
            if i == 0 || i == b.len() - 1 || b[i - 1] == b'.' {
                return ("IPv4 field must have at least one digit", Some(&s[i..]));
            }
            if fields == 3 {
                return ("IPv4 address too long", None);
            }
            fields += 1;
            val = 0;
            dig_len = 0;
        } else {
            return ("unexpected character", Some(&s[i..]));
        }
    }
    if fields < 3 {
        return ("IPv4 address too short", None);
    }
    ("unable to parse IP", None)
}

/// Go's `netip.ParseAddr` error text for `s`, which `std::net` rejected.
fn parse_addr_error(s: &str) -> String {
    let first = s.bytes().find(|b| matches!(b, b'.' | b':' | b'%'));
    let (msg, at) = match first {
        Some(b'.') => ipv4_error(s),
        Some(b':') if s.contains('%') && s.ends_with('%') => {
            ("zone must be a non-empty string", None)
        }
        Some(b':') => ("unable to parse IP", None),
        Some(_) => ("missing IPv6 address", None),
        None => ("unable to parse IP", None),
    };
    match at {
        Some(at) => format!("ParseAddr({}): {msg} (at {})", go_quote(s), go_quote(at)),
        None => format!("ParseAddr({}): {msg}", go_quote(s)),
    }
}

/// Why Kubernetes' `parseIPAddr` rejects `s`, or the address.
fn parse_ip(s: &str) -> Result<IpAddr, String> {
    if let Some((addr, zone)) = s.split_once('%') {
        if !zone.is_empty() && addr.contains(':') && addr.parse::<Ipv6Addr>().is_ok() {
            return Err(format!(
                "IP address {} with zone value is not allowed",
                go_quote(s)
            ));
        }
    }
    let addr: IpAddr = s.parse().map_err(|_| {
        format!(
            "IP Address {} parse error during conversion from string: {}",
            go_quote(s),
            parse_addr_error(s)
        )
    })?;
    if let IpAddr::V6(v6) = addr {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!(
                "IPv4-mapped IPv6 address {} is not allowed",
                go_quote(s)
            ));
        }
    }
    Ok(addr)
}

/// Go's `netip.ParsePrefix` (with Kubernetes' checks), the error in Kubernetes' words.
fn parse_cidr(s: &str) -> Result<Cidr, String> {
    let prefix_error = |msg: String| {
        format!(
            "network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix({}): {msg}",
            go_quote(s)
        )
    };
    let Some((addr, bits)) = s.rsplit_once('/') else {
        return Err(prefix_error("no '/'".to_string()));
    };
    let zoned = addr
        .split_once('%')
        .is_some_and(|(a, z)| !z.is_empty() && a.parse::<Ipv6Addr>().is_ok());
    if zoned {
        return Err(prefix_error(
            "IPv6 zones cannot be present in a prefix".to_string(),
        ));
    }
    let ip: IpAddr = addr
        .parse()
        .map_err(|_| prefix_error(parse_addr_error(addr)))?;
    let bad_bits = || prefix_error(format!("bad bits after slash: {}", go_quote(bits)));
    if bits.len() > 1 && !matches!(bits.as_bytes()[0], b'1'..=b'9') {
        return Err(bad_bits());
    }
    let n: u64 = match parse_go_atoi(bits) {
        Some(n) if n >= 0 => n as u64,
        Some(_) => return Err(prefix_error("prefix length out of range".to_string())),
        None => return Err(bad_bits()),
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if n > max {
        return Err(prefix_error("prefix length out of range".to_string()));
    }
    if let IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return Err(format!(
                "network address parse error during conversion from string: IPv4-mapped IPv6 address {} is not allowed",
                go_quote(s)
            ));
        }
    }
    Ok(Cidr {
        addr: ip,
        bits: n as u8,
    })
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn parse_go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

/// Go's `netip.Addr.String()`.
fn addr_string(addr: IpAddr) -> String {
    // std's formatting follows RFC 5952 as Go does; only IPv4-mapped addresses differ, and
    // Kubernetes rejects those.
    addr.to_string()
}

fn masked_addr(addr: IpAddr, bits: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

fn ip(s: &CelString<'_>) -> Result<Ip, ExecutionError> {
    parse_ip(s.inner()).map(Ip).map_err(|e| k8s_error("ip", e))
}

fn is_ip(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse_ip(s.inner()).is_ok())
}

fn is_canonical(s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip(s.inner()).map_err(|e| k8s_error("ip.isCanonical", e))?;
    Ok(CelBool::from(addr_string(addr) == s.inner()))
}

fn ip_to_string(ip: &Ip) -> CelString<'static> {
    CelString::from(addr_string(ip.0))
}

fn family(ip: &Ip) -> CelInt {
    CelInt::from(if ip.0.is_ipv4() { 4 } else { 6 })
}

fn is_unspecified(ip: &Ip) -> CelBool {
    CelBool::from(ip.0.is_unspecified())
}

fn is_loopback(ip: &Ip) -> CelBool {
    CelBool::from(ip.0.is_loopback())
}

fn is_link_local_multicast(ip: &Ip) -> CelBool {
    CelBool::from(match ip.0 {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    })
}

fn link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_unicast(ip: &Ip) -> CelBool {
    CelBool::from(link_local_unicast(ip.0))
}

/// Go's `netip.Addr.IsGlobalUnicast` (private addresses count as global, as in Go).
fn is_global_unicast(ip: &Ip) -> CelBool {
    let addr = ip.0;
    let global = match addr {
        IpAddr::V4(v4) => !v4.is_unspecified() && !v4.is_broadcast() && !v4.is_multicast(),
        IpAddr::V6(v6) => !v6.is_unspecified() && !v6.is_multicast(),
    };
    CelBool::from(global && !addr.is_loopback() && !link_local_unicast(addr))
}

fn cidr(s: &CelString<'_>) -> Result<Cidr, ExecutionError> {
    parse_cidr(s.inner()).map_err(|e| k8s_error("cidr", e))
}

fn is_cidr(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse_cidr(s.inner()).is_ok())
}

fn cidr_to_string(c: &Cidr) -> CelString<'static> {
    CelString::from(format!("{}/{}", addr_string(c.addr), c.bits))
}

fn contains(c: &Cidr, addr: IpAddr) -> bool {
    c.addr.is_ipv4() == addr.is_ipv4() && masked_addr(addr, c.bits) == masked_addr(c.addr, c.bits)
}

fn contains_ip(c: &Cidr, ip: &Ip) -> CelBool {
    CelBool::from(contains(c, ip.0))
}

fn contains_ip_string(c: &Cidr, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr = parse_ip(s.inner()).map_err(|e| k8s_error("containsIP", e))?;
    Ok(CelBool::from(contains(c, addr)))
}

/// Kubernetes' `containsCIDR`: the other prefix's address masked to this prefix's length is
/// this prefix's network, and this prefix is no longer.
fn contains_cidr(c: &Cidr, other: &Cidr) -> CelBool {
    CelBool::from(contains(c, other.addr) && c.bits <= other.bits)
}

fn contains_cidr_string(c: &Cidr, s: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other = parse_cidr(s.inner()).map_err(|e| k8s_error("containsCIDR", e))?;
    Ok(contains_cidr(c, &other))
}

fn cidr_ip(c: &Cidr) -> Ip {
    Ip(c.addr)
}

fn prefix_length(c: &Cidr) -> CelInt {
    CelInt::from(i64::from(c.bits))
}

fn masked(c: &Cidr) -> Cidr {
    Cidr {
        addr: masked_addr(c.addr, c.bits),
        bits: c.bits,
    }
}

pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn ip: (CelString) -> Result<Ip>, id = "string_to_ip")?;
    cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP", id = "is_ip")?;
    cel::add_overload!(env, fn is_canonical: (CelString) -> Result<CelBool>,
        name = "ip.isCanonical", id = "ip_is_canonical")?;
    cel::add_overload!(env, fn ip_to_string: (Ip) -> CelString, name = "string", id = "ip_to_string")?;
    cel::add_member_overload!(env, fn family: (Ip) -> CelInt)?;
    cel::add_member_overload!(env, fn is_unspecified: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_loopback: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_multicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_unicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_global_unicast: (Ip) -> CelBool)?;
    cel::add_overload!(env, fn cidr: (CelString) -> Result<Cidr>, id = "string_to_cidr")?;
    cel::add_overload!(env, fn is_cidr: (CelString) -> CelBool, name = "isCIDR", id = "is_cidr")?;
    cel::add_overload!(env, fn cidr_to_string: (Cidr) -> CelString, name = "string", id = "cidr_to_string")?;
    cel::add_member_overload!(env, fn contains_ip: (Cidr, Ip) -> CelBool, name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_ip_string: (Cidr, CelString) -> Result<CelBool>,
        name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_cidr: (Cidr, Cidr) -> CelBool, name = "containsCIDR")?;
    cel::add_member_overload!(env, fn contains_cidr_string: (Cidr, CelString) -> Result<CelBool>,
        name = "containsCIDR")?;
    cel::add_member_overload!(env, fn cidr_ip: (Cidr) -> Ip, name = "ip")?;
    cel::add_member_overload!(env, fn prefix_length: (Cidr) -> CelInt)?;
    cel::add_member_overload!(env, fn masked: (Cidr) -> Cidr)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{all_pass, error};

    #[test]
    fn ip_functions() {
        all_pass(&[
            "isIP('1.2.3.4') && isIP('::1') && !isIP('1.2.3') && !isIP('01.2.3.4')",
            "!isIP('fe80::1%eth0') && !isIP('::ffff:1.2.3.4') && !isIP('')",
            "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6",
            "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
            "!ip('127.0.0.1').isUnspecified()",
            "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()",
            "!ip('192.168.0.1').isLoopback() && !ip('2001:db8::abcd').isLoopback()",
            "ip('224.0.0.1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()",
            "ip('ff02::1').isLinkLocalMulticast() && !ip('fd00::1').isLinkLocalMulticast()",
            "ip('169.254.169.254').isLinkLocalUnicast() && !ip('192.168.0.1').isLinkLocalUnicast()",
            "ip('fe80::1').isLinkLocalUnicast() && !ip('fd80::1').isLinkLocalUnicast()",
            "ip('192.168.0.1').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast()",
            "ip('2001:db8::abcd').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()",
            "ip.isCanonical('127.0.0.1') && !ip.isCanonical('2001:DB8::1')",
            "ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:db8:0:0:0:0:2:1')",
            "string(ip('2001:DB8::1')) == '2001:db8::1' && ip('::1') == ip('0:0::1')",
        ]);
    }

    #[test]
    fn cidr_functions() {
        all_pass(&[
            "isCIDR('192.168.0.0/24') && !isCIDR('192.168.0.0') && !isCIDR('1.2.3.4/33')",
            "!isCIDR('1.2.3.4/024') && !isCIDR('::ffff:1.2.3.4/96')",
            "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
            "!cidr('192.168.0.0/24').containsIP(ip('192.168.1.1'))",
            "cidr('192.168.0.0/24').containsIP('192.168.0.1')",
            "!cidr('::/0').containsIP('1.2.3.4')",
            "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))",
            "!cidr('192.168.1.0/24').containsCIDR(cidr('192.168.2.0/24'))",
            "cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')",
            "!cidr('192.168.0.0/24').containsCIDR('192.168.0.0/16')",
            "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
            "cidr('::1/128').ip().family() == 6",
            "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
            "cidr('192.168.0.1/24') != cidr('192.168.0.1/24').masked()",
            "cidr('192.168.0.0/16').prefixLength() == 16 && cidr('::1/128').prefixLength() == 128",
            "string(cidr('2001:DB8::/32')) == '2001:db8::/32'",
        ]);
    }

    #[test]
    fn errors_in_the_api_servers_words() {
        assert_eq!(
            error("ip('foo').family() == 4"),
            r#"IP Address "foo" parse error during conversion from string: ParseAddr("foo"): unable to parse IP"#
        );
        assert_eq!(
            error("ip('1.2.3.256').family() == 4"),
            r#"IP Address "1.2.3.256" parse error during conversion from string: ParseAddr("1.2.3.256"): IPv4 field has value >255"#
        );
        assert_eq!(
            error("ip('1.2..3').family() == 4"),
            r#"IP Address "1.2..3" parse error during conversion from string: ParseAddr("1.2..3"): IPv4 field must have at least one digit (at ".3")"#
        );
        assert_eq!(
            error("ip('::ffff:1.2.3.4').family() == 4"),
            r#"IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed"#
        );
        assert_eq!(
            error("ip('fe80::1%eth0').family() == 6"),
            r#"IP address "fe80::1%eth0" with zone value is not allowed"#
        );
        assert_eq!(
            error("cidr('1.2.3.4').prefixLength() == 1"),
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("1.2.3.4"): no '/'"#
        );
        assert_eq!(
            error("cidr('1.2.3.4/33').prefixLength() == 1"),
            r#"network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix("1.2.3.4/33"): prefix length out of range"#
        );
    }
}
