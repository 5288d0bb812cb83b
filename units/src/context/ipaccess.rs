//! `IPAddressAllow=` and `IPAddressDeny=` (systemd.resource-control(5)):
//! which remote addresses a service's sockets may exchange IP packets
//! with. A packet whose remote address (the source of one received, the
//! destination of one sent) is in an allowed prefix passes; else one in a
//! denied prefix is dropped; else it passes. The init makes the lists
//! into cgroup packet programs (`init/src/sys/ipfilter.rs`).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use super::value::words;

/// An address prefix: the address, and how many of its leading bits
/// count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IpPrefix {
    /// The address (bits past the prefix are zero).
    pub addr: IpAddr,
    /// The prefix length: up to 32 for IPv4, 128 for IPv6.
    pub len: u8,
}

impl IpPrefix {
    fn new(addr: IpAddr, len: u8) -> IpPrefix {
        let addr = match addr {
            IpAddr::V4(a) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(u32::from(a) & mask))
            }
            IpAddr::V6(a) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(u128::from(a) & mask))
            }
        };
        IpPrefix { addr, len }
    }

    /// The prefix's mask and address, as the bytes of the packet carry
    /// them (network order).
    pub fn bytes(&self) -> (Vec<u8>, Vec<u8>) {
        let (addr, bits): (Vec<u8>, usize) = match self.addr {
            IpAddr::V4(a) => (a.octets().to_vec(), 32),
            IpAddr::V6(a) => (a.octets().to_vec(), 128),
        };
        let mut mask = vec![0u8; bits / 8];
        for (i, b) in mask.iter_mut().enumerate() {
            let left = usize::from(self.len).saturating_sub(i * 8).min(8);
            *b = (0xffu16 << (8 - left)) as u8;
        }
        (mask, addr)
    }
}

/// The two lists of a service.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct IpAccess {
    /// `IPAddressAllow=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<IpPrefix>,
    /// `IPAddressDeny=`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<IpPrefix>,
}

impl IpAccess {
    /// Whether packets are filtered at all: only a deny list drops any.
    pub fn filters(&self) -> bool {
        !self.deny.is_empty()
    }
}

/// One word of `IPAddressAllow=`/`IPAddressDeny=`: an address, an
/// address with `/LENGTH`, or one of systemd's names.
fn prefixes(word: &str) -> Result<Vec<IpPrefix>, String> {
    let v4 = |a: [u8; 4], len| IpPrefix::new(IpAddr::V4(Ipv4Addr::from(a)), len);
    let v6 = |a: u128, len| IpPrefix::new(IpAddr::V6(Ipv6Addr::from(a)), len);
    Ok(match word {
        "any" => vec![v4([0; 4], 0), v6(0, 0)],
        "localhost" => vec![v4([127, 0, 0, 0], 8), v6(1, 128)],
        "link-local" => vec![v4([169, 254, 0, 0], 16), v6(0xfe80 << 112, 64)],
        "multicast" => vec![v4([224, 0, 0, 0], 4), v6(0xff00 << 112, 8)],
        _ => {
            let bad = || {
                format!(
                    "`{word}` is not an address, ADDRESS/LENGTH, any, localhost, link-local \
                     or multicast"
                )
            };
            let (a, len) = match word.split_once('/') {
                Some((a, l)) => (a, Some(l.parse::<u8>().map_err(|_| bad())?)),
                None => (word, None),
            };
            let addr: IpAddr = a.parse().map_err(|_| bad())?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let len = len.unwrap_or(max);
            if len > max {
                return Err(format!("`{word}`: a prefix of at most {max} bits"));
            }
            vec![IpPrefix::new(addr, len)]
        }
    })
}

/// One assignment: blank-separated words, each adding to `list`; an empty
/// value empties it. Nothing changes on error.
pub fn assign(list: &mut Vec<IpPrefix>, value: &str) -> Result<(), String> {
    let w = words(value)?;
    if w.is_empty() {
        list.clear();
        return Ok(());
    }
    let mut add = Vec::new();
    for word in &w {
        add.extend(prefixes(word)?);
    }
    list.extend(add);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_addresses_and_prefixes() {
        let mut l = Vec::new();
        assign(&mut l, "localhost 10.1.2.3/8 fd00::1").unwrap();
        assert_eq!(l.len(), 4);
        assert_eq!(
            l[2].addr,
            "10.0.0.0".parse::<IpAddr>().unwrap(),
            "host bits cleared"
        );
        assert_eq!(l[2].len, 8);
        assert_eq!(l[3].len, 128);
        assert_eq!(l[2].bytes(), (vec![255, 0, 0, 0], vec![10, 0, 0, 0]));
        let (mask, _) = prefixes("fe80::/10").unwrap()[0].bytes();
        assert_eq!(&mask[..3], &[0xff, 0xc0, 0]);
        assign(&mut l, "").unwrap();
        assert!(l.is_empty());
        assign(&mut l, "any").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].bytes().0, [0, 0, 0, 0]);
    }

    #[test]
    fn bad_words_say_why() {
        let mut l = Vec::new();
        assert_eq!(
            assign(&mut l, "localhost everything").unwrap_err(),
            "`everything` is not an address, ADDRESS/LENGTH, any, localhost, link-local or \
             multicast"
        );
        assert!(l.is_empty(), "nothing changes on error");
        assert_eq!(
            assign(&mut l, "10.0.0.0/33").unwrap_err(),
            "`10.0.0.0/33`: a prefix of at most 32 bits"
        );
    }
}
