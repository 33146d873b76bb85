//! Kubernetes' IP and CIDR libraries, as CRD validation rules and
//! admission policies have them: `ip('10.0.0.1')`, `isIP(s)`,
//! `ip.isCanonical(s)`, an address's `family()`, `isUnspecified()`,
//! `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()` and
//! `isGlobalUnicast()`; `cidr('10.0.0.0/8')`, `isCIDR(s)`, a network's
//! `containsIP(ip or string)`, `containsCIDR(cidr or string)`, `ip()`,
//! `masked()` and `prefixLength()`; and `string()` of either, e.g.
//! `cidr('10.0.0.0/8').containsIP(object.status.podIP)`.
//!
//! Addresses are read as the API server reads them: IPv4 without leading
//! zeros in an octet, IPv6 in any of its forms, but no IPv4-mapped IPv6
//! address (`::ffff:1.2.3.4`) and no zone (`fe80::1%eth0`). A network may
//! have bits set past its prefix (`10.0.0.1/8`): `masked()` clears them,
//! and two networks are `==` only when address and prefix both are.

use std::net::{IpAddr, Ipv6Addr};

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};

/// The type of addresses, as `type(ip('::1'))` names it.
static IP: Type = Type::new_unspecified_type("net.IP");
/// The type of networks, as `type(cidr('::/0'))` names it.
static CIDR: Type = Type::new_unspecified_type("net.CIDR");

/// An IPv4 or IPv6 address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip(IpAddr);

/// A network: an address and how many of its leading bits are the prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

library_value!(Ip, IP);
library_value!(Cidr, CIDR);

/// Adds both libraries to `env`.
pub(super) fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(IP.to_owned())?;
    env.add_type(CIDR.to_owned())?;
    cel::add_overload!(env, fn ip: (CelString) -> Result<Ip>)?;
    cel::add_overload!(env, fn is_ip: (CelString) -> CelBool, name = "isIP")?;
    cel::add_overload!(env, fn is_canonical: (CelString) -> Result<CelBool>, name = "ip.isCanonical")?;
    cel::add_overload!(env, fn ip_string: (Ip) -> CelString, name = "string")?;
    cel::add_member_overload!(env, fn family: (Ip) -> CelInt)?;
    cel::add_member_overload!(env, fn is_unspecified: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_loopback: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_multicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_link_local_unicast: (Ip) -> CelBool)?;
    cel::add_member_overload!(env, fn is_global_unicast: (Ip) -> CelBool)?;

    cel::add_overload!(env, fn cidr: (CelString) -> Result<Cidr>)?;
    cel::add_overload!(env, fn is_cidr: (CelString) -> CelBool, name = "isCIDR")?;
    cel::add_overload!(env, fn cidr_string: (Cidr) -> CelString, name = "string")?;
    cel::add_member_overload!(env, fn contains_ip: (Cidr, Ip) -> CelBool, name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_ip_text: (Cidr, CelString) -> Result<CelBool>, name = "containsIP")?;
    cel::add_member_overload!(env, fn contains_cidr: (Cidr, Cidr) -> CelBool, name = "containsCIDR")?;
    cel::add_member_overload!(env, fn contains_cidr_text: (Cidr, CelString) -> Result<CelBool>, name = "containsCIDR")?;
    cel::add_member_overload!(env, fn network_ip: (Cidr) -> Ip, name = "ip")?;
    cel::add_member_overload!(env, fn masked: (Cidr) -> Cidr)?;
    cel::add_member_overload!(env, fn prefix_length: (Cidr) -> CelInt)?;
    Ok(())
}

/// Reads an address as the API server does.
pub fn parse_ip(text: &str) -> Result<IpAddr, String> {
    if text.contains('%') {
        return Err(format!("IP address '{text}' with a zone is not allowed"));
    }
    let addr: IpAddr = text
        .parse()
        .map_err(|_| format!("'{text}' is not an IPv4 or IPv6 address"))?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address '{text}' is not allowed"));
    }
    Ok(addr)
}

/// Reads a network, `address/prefix length`, as the API server does.
pub fn parse_cidr(text: &str) -> Result<Cidr, String> {
    let (addr, bits) = text
        .split_once('/')
        .ok_or_else(|| format!("'{text}' has no '/' and prefix length"))?;
    let addr = parse_ip(addr)?;
    let most = if addr.is_ipv4() { 32 } else { 128 };
    let bits = (!bits.is_empty()
        && bits.bytes().all(|b| b.is_ascii_digit())
        && (bits == "0" || !bits.starts_with('0')))
    .then(|| bits.parse::<u8>().ok())
    .flatten()
    .filter(|b| *b <= most)
    .ok_or_else(|| format!("'{text}': the prefix length must be a number from 0 to {most}"))?;
    Ok(Cidr { addr, bits })
}

fn ip(text: &CelString<'_>) -> Result<Ip, ExecutionError> {
    parse_ip(text.inner())
        .map(Ip)
        .map_err(|e| ExecutionError::function_error("ip", e))
}

fn is_ip(text: &CelString<'_>) -> CelBool {
    CelBool::from(parse_ip(text.inner()).is_ok())
}

/// Whether a text is the one way its address is written: lower case, the
/// longest run of zero groups (two or more) shortened to `::`.
fn is_canonical(text: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr =
        parse_ip(text.inner()).map_err(|e| ExecutionError::function_error("ip.isCanonical", e))?;
    Ok(CelBool::from(addr.to_string() == text.inner()))
}

fn ip_string(ip: &Ip) -> CelString<'static> {
    CelString::from(ip.0.to_string())
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

/// 224.0.0.0/24, or ff02::/16 (and the other scopes' flags: `ffX2::`).
fn link_local_multicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// 169.254.0.0/16, or fe80::/10.
fn link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

fn is_link_local_multicast(ip: &Ip) -> CelBool {
    CelBool::from(link_local_multicast(ip.0))
}

fn is_link_local_unicast(ip: &Ip) -> CelBool {
    CelBool::from(link_local_unicast(ip.0))
}

/// Any address but the unspecified, loopback, link-local and multicast
/// ones and 255.255.255.255; private and documentation addresses are
/// global unicast, as Go's `netip` says.
fn is_global_unicast(ip: &Ip) -> CelBool {
    let addr = ip.0;
    let broadcast = matches!(addr, IpAddr::V4(v4) if v4.is_broadcast());
    CelBool::from(
        !(addr.is_unspecified()
            || addr.is_loopback()
            || addr.is_multicast()
            || link_local_unicast(addr)
            || broadcast),
    )
}

fn cidr(text: &CelString<'_>) -> Result<Cidr, ExecutionError> {
    parse_cidr(text.inner()).map_err(|e| ExecutionError::function_error("cidr", e))
}

fn is_cidr(text: &CelString<'_>) -> CelBool {
    CelBool::from(parse_cidr(text.inner()).is_ok())
}

fn cidr_string(cidr: &Cidr) -> CelString<'static> {
    CelString::from(format!("{}/{}", cidr.addr, cidr.bits))
}

/// The address with every bit past the first `bits` cleared.
fn mask(addr: IpAddr, bits: u8) -> IpAddr {
    match addr {
        IpAddr::V4(v4) => {
            let keep = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            IpAddr::V4((u32::from(v4) & keep).into())
        }
        IpAddr::V6(v6) => {
            let keep = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & keep))
        }
    }
}

impl Cidr {
    fn contains(&self, addr: IpAddr) -> bool {
        addr.is_ipv4() == self.addr.is_ipv4() && mask(addr, self.bits) == mask(self.addr, self.bits)
    }
}

fn contains_ip(cidr: &Cidr, ip: &Ip) -> CelBool {
    CelBool::from(cidr.contains(ip.0))
}

fn contains_ip_text(cidr: &Cidr, text: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let addr =
        parse_ip(text.inner()).map_err(|e| ExecutionError::function_error("containsIP", e))?;
    Ok(CelBool::from(cidr.contains(addr)))
}

/// Whether every address of `other` is in `cidr`.
fn contains_cidr(cidr: &Cidr, other: &Cidr) -> CelBool {
    CelBool::from(cidr.bits <= other.bits && cidr.contains(other.addr))
}

fn contains_cidr_text(cidr: &Cidr, text: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    let other =
        parse_cidr(text.inner()).map_err(|e| ExecutionError::function_error("containsCIDR", e))?;
    Ok(contains_cidr(cidr, &other))
}

fn network_ip(cidr: &Cidr) -> Ip {
    Ip(cidr.addr)
}

fn masked(cidr: &Cidr) -> Cidr {
    Cidr {
        addr: mask(cidr.addr, cidr.bits),
        bits: cidr.bits,
    }
}

fn prefix_length(cidr: &Cidr) -> CelInt {
    CelInt::from(i64::from(cidr.bits))
}
