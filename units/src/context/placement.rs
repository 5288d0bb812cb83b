//! Where a service's processes run and where their memory comes from:
//! `CPUAffinity=`, `NUMAPolicy=` and `NUMAMask=` (systemd.exec(5)). The
//! manager's own `NUMAPolicy=` and `NUMAMask=` (system.conf) take the same
//! values and the same rules ([`mem_request`]).
//!
//! A set of CPUs or of NUMA nodes ([`IndexSet`]) is written as systemd
//! writes it (`0 2-3`, blanks or commas between the words), and travels
//! over D-Bus as its `ay`: bit `n % 8` of byte `n / 8` for number `n`. The
//! policies' numbers are Linux's (`mempolicy.h`), so that the init only
//! passes them on.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The largest CPU or node number a set takes (Linux's largest
/// `CONFIG_NR_CPUS` less one).
pub const MAX_INDEX: u32 = 8191;

/// A set of CPU or NUMA node numbers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexSet {
    /// Byte `n / 8`, bit `n % 8`: no trailing zero bytes.
    bytes: Vec<u8>,
}

impl IndexSet {
    /// The set of systemd's `ay` form (trailing zero bytes dropped).
    pub fn from_bytes(bytes: &[u8]) -> IndexSet {
        let mut s = IndexSet {
            bytes: bytes.to_vec(),
        };
        s.trim();
        s
    }

    /// The set in systemd's `ay` form.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Whether no number is in the set.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Whether `n` is in the set.
    pub fn contains(&self, n: u32) -> bool {
        let i = (n / 8) as usize;
        self.bytes.get(i).is_some_and(|b| b & (1 << (n % 8)) != 0)
    }

    /// The numbers in the set, smallest first.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.bytes.len() as u32 * 8).filter(|n| self.contains(*n))
    }

    /// Adds `n`.
    pub fn insert(&mut self, n: u32) {
        let i = (n / 8) as usize;
        if self.bytes.len() <= i {
            self.bytes.resize(i + 1, 0);
        }
        self.bytes[i] |= 1 << (n % 8);
    }

    /// Adds every number of `other`.
    pub fn extend(&mut self, other: &IndexSet) {
        for n in other.iter() {
            self.insert(n);
        }
    }

    /// The set as the kernel's bitmaps take it (`sched_setaffinity`,
    /// `set_mempolicy`): 64 numbers a word, at least one word.
    pub fn words(&self) -> Vec<u64> {
        let mut words = vec![0u64; self.bytes.len().div_ceil(8).max(1)];
        for (i, b) in self.bytes.iter().enumerate() {
            words[i / 8] |= u64::from(*b) << ((i % 8) * 8);
        }
        words
    }

    /// Reads systemd's list: numbers and ranges (`2-5`) separated by blanks
    /// or commas, as `CPUAffinity=` and the kernel's `cpulist` files
    /// write them. An empty text is the empty set.
    pub fn parse(value: &str) -> Result<IndexSet, String> {
        let mut set = IndexSet::default();
        for word in value
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
        {
            let (lo, hi) = match word.split_once('-') {
                Some((a, b)) => (number(a, word)?, number(b, word)?),
                None => {
                    let n = number(word, word)?;
                    (n, n)
                }
            };
            if lo > hi {
                return Err(format!("`{word}` is a range that ends before it starts"));
            }
            for n in lo..=hi {
                set.insert(n);
            }
        }
        Ok(set)
    }

    /// The set as systemd prints it: ranges, smallest first, separated by
    /// blanks (`0-1 3`).
    pub fn to_text(&self) -> String {
        let mut out = Vec::new();
        let mut run: Option<(u32, u32)> = None;
        for n in self.iter() {
            run = match run {
                Some((lo, hi)) if hi + 1 == n => Some((lo, n)),
                Some(r) => {
                    out.push(range(r));
                    Some((n, n))
                }
                None => Some((n, n)),
            };
        }
        out.extend(run.map(range));
        out.join(" ")
    }

    fn trim(&mut self) {
        while self.bytes.last() == Some(&0) {
            self.bytes.pop();
        }
    }
}

fn range((lo, hi): (u32, u32)) -> String {
    if lo == hi {
        lo.to_string()
    } else {
        format!("{lo}-{hi}")
    }
}

fn number(text: &str, word: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(n) if n <= MAX_INDEX => Ok(n),
        Ok(_) => Err(format!(
            "`{word}`: {MAX_INDEX} is the largest number a set takes"
        )),
        Err(_) => Err(format!(
            "`{word}` is not a number or a range of numbers (write e.g. `0 2-3`)"
        )),
    }
}

impl Serialize for IndexSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_text())
    }
}

impl<'de> Deserialize<'de> for IndexSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<IndexSet, D::Error> {
        let text = String::deserialize(d)?;
        IndexSet::parse(&text).map_err(serde::de::Error::custom)
    }
}

/// The CPUs of the NUMA nodes `nodes` (`CPUAffinity=numa`), from each
/// node's CPU list as `read` gives the text of the file at [`node_cpulist`]
/// (the init at a start, flotilla-busd for the property); a node without
/// one adds none.
pub fn cpus_of_nodes(nodes: &IndexSet, read: impl Fn(&str) -> Option<String>) -> IndexSet {
    let mut cpus = IndexSet::default();
    for n in nodes.iter() {
        if let Some(set) = read(&node_cpulist(n)).and_then(|t| IndexSet::parse(&t).ok()) {
            cpus.extend(&set);
        }
    }
    cpus
}

/// sysfs's list of the CPUs of NUMA node `n`.
pub fn node_cpulist(n: u32) -> String {
    format!("/sys/devices/system/node/node{n}/cpulist")
}

/// A NUMA memory policy (`set_mempolicy(2)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NumaPolicy {
    /// `MPOL_DEFAULT`: the system's default, no node list.
    Default,
    /// `MPOL_PREFERRED`: one node first, others when it is full; with no
    /// node, the local one.
    Preferred,
    /// `MPOL_BIND`: only these nodes.
    Bind,
    /// `MPOL_INTERLEAVE`: page by page over these nodes.
    Interleave,
    /// `MPOL_LOCAL`: the node the allocating CPU is on.
    Local,
}

impl NumaPolicy {
    const ALL: [NumaPolicy; 5] = [
        NumaPolicy::Default,
        NumaPolicy::Preferred,
        NumaPolicy::Bind,
        NumaPolicy::Interleave,
        NumaPolicy::Local,
    ];

    /// The policy's number (`MPOL_*`), which D-Bus carries too.
    pub fn number(self) -> i32 {
        match self {
            NumaPolicy::Default => 0,
            NumaPolicy::Preferred => 1,
            NumaPolicy::Bind => 2,
            NumaPolicy::Interleave => 3,
            NumaPolicy::Local => 4,
        }
    }

    /// The policy of a number.
    pub fn from_number(n: i32) -> Option<NumaPolicy> {
        NumaPolicy::ALL.into_iter().find(|p| p.number() == n)
    }

    /// Its name in a unit file.
    pub fn name(self) -> &'static str {
        match self {
            NumaPolicy::Default => "default",
            NumaPolicy::Preferred => "preferred",
            NumaPolicy::Bind => "bind",
            NumaPolicy::Interleave => "interleave",
            NumaPolicy::Local => "local",
        }
    }
}

/// `NUMAPolicy=`.
pub fn parse_numa_policy(value: &str) -> Result<NumaPolicy, String> {
    let t = value.trim();
    NumaPolicy::ALL
        .into_iter()
        .find(|p| p.name() == t)
        .ok_or_else(|| {
            format!(
                "`{t}` is not a NUMA policy (write default, preferred, bind, interleave or local)"
            )
        })
}

/// `CPUAffinity=`: CPUs, or those of the NUMA nodes of `NUMAMask=`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Affinity {
    /// These CPUs.
    Cpus(IndexSet),
    /// `numa`: the CPUs of the nodes the NUMA mask names.
    Numa,
}

/// The placement keys of a service; the default changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "kebab-case")]
pub struct Placement {
    /// `CPUAffinity=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_affinity: Option<Affinity>,
    /// `NUMAPolicy=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_policy: Option<NumaPolicy>,
    /// `NUMAMask=`: the nodes of the policy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub numa_mask: Option<IndexSet>,
}

impl Placement {
    /// The policy the NUMA keys make, as systemd's `numa_policy_get_type`
    /// reads them: a mask alone is `preferred`; neither key, none.
    pub fn mem_policy(&self) -> Option<NumaPolicy> {
        self.numa_policy
            .or(self.numa_mask.as_ref().map(|_| NumaPolicy::Preferred))
    }

    /// The memory policy to set, if either NUMA key is given
    /// ([`mem_request`]).
    pub fn mem(&self) -> Option<Result<MemRequest, InvalidPolicy>> {
        if self.numa_policy.is_none() && self.numa_mask.is_none() {
            return None;
        }
        Some(mem_request(self.numa_policy, self.numa_mask.as_ref()))
    }
}

/// One assignment of `CPUAffinity=`: `numa` takes the NUMA mask's CPUs;
/// CPUs add to those of earlier lines (after `numa`, they start anew); an
/// empty value resets the key.
pub fn assign_affinity(slot: &mut Option<Affinity>, value: &str) -> Result<(), String> {
    let t = value.trim();
    if t.is_empty() {
        *slot = None;
    } else if t == "numa" {
        *slot = Some(Affinity::Numa);
    } else {
        let mut cpus = IndexSet::parse(t)?;
        if let Some(Affinity::Cpus(earlier)) = slot {
            cpus.extend(earlier);
        }
        *slot = Some(Affinity::Cpus(cpus));
    }
    Ok(())
}

/// One assignment of `NUMAMask=`: nodes add to those of earlier lines; an
/// empty value resets the key.
pub fn assign_mask(slot: &mut Option<IndexSet>, value: &str) -> Result<(), String> {
    let t = value.trim();
    if t.is_empty() {
        *slot = None;
        return Ok(());
    }
    let mut nodes = IndexSet::parse(t)?;
    if let Some(earlier) = slot {
        nodes.extend(earlier);
    }
    *slot = Some(nodes);
    Ok(())
}

/// What `set_mempolicy(2)` is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemRequest {
    /// The mode (`MPOL_*`).
    pub mode: i32,
    /// The node mask's words, or none (`NULL`, 0 nodes).
    pub nodes: Option<Vec<u64>>,
}

impl MemRequest {
    /// `maxnode`: the bits the mask's words hold (none without a mask).
    pub fn max_node(&self) -> u64 {
        self.nodes.as_ref().map_or(0, |w| w.len() as u64 * 64)
    }
}

/// A policy the kernel would refuse (`EINVAL`): a mask is missing or too
/// wide for it. systemd sets nothing then, and says `Invalid argument`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InvalidPolicy;

/// The request for a policy and a mask, by systemd's rules: no policy is
/// `preferred` when a mask is given, else `default`; `default` and `local`
/// take no mask (one given is left out); `preferred` without a mask is
/// the local node; `bind` and `interleave` need one, and `preferred`
/// takes at most one node.
pub fn mem_request(
    policy: Option<NumaPolicy>,
    mask: Option<&IndexSet>,
) -> Result<MemRequest, InvalidPolicy> {
    let mask = mask.filter(|m| !m.is_empty());
    let policy = policy.unwrap_or(if mask.is_some() {
        NumaPolicy::Preferred
    } else {
        NumaPolicy::Default
    });
    let nodes = match (policy, mask) {
        (NumaPolicy::Default | NumaPolicy::Local, _) | (NumaPolicy::Preferred, None) => None,
        (NumaPolicy::Bind | NumaPolicy::Interleave, None) => return Err(InvalidPolicy),
        (NumaPolicy::Preferred, Some(m)) if m.iter().count() > 1 => return Err(InvalidPolicy),
        (_, Some(m)) => Some(m.words()),
    };
    Ok(MemRequest {
        mode: policy.number(),
        nodes,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn sets_read_and_print_as_systemds() {
        let s = IndexSet::parse("3,0 1  7-9").unwrap();
        assert_eq!(s.to_text(), "0-1 3 7-9");
        assert_eq!(s.bytes(), &[0b1000_1011, 0b11]);
        assert_eq!(IndexSet::from_bytes(&[0b1000_1011, 0b11, 0, 0]), s);
        assert_eq!(s.words(), vec![0x38b]);
        assert_eq!(IndexSet::parse("").unwrap().words(), vec![0]);
        assert_eq!(IndexSet::parse("64").unwrap().words(), vec![0, 1]);
        assert_eq!(IndexSet::parse("0-1\n").unwrap().to_text(), "0-1");
    }

    #[test]
    fn bad_sets_say_why() {
        assert!(IndexSet::parse("3-1").unwrap_err().contains("ends before"));
        assert!(IndexSet::parse("a").unwrap_err().contains("not a number"));
        assert!(IndexSet::parse("9000").unwrap_err().contains("8191"));
    }

    #[test]
    fn affinity_lines_add_up_and_numa_starts_anew() {
        let mut a = None;
        assign_affinity(&mut a, "1").unwrap();
        assign_affinity(&mut a, "3").unwrap();
        assert_eq!(a, Some(Affinity::Cpus(IndexSet::parse("1 3").unwrap())));
        assign_affinity(&mut a, "numa").unwrap();
        assert_eq!(a, Some(Affinity::Numa));
        assign_affinity(&mut a, "2").unwrap();
        assert_eq!(a, Some(Affinity::Cpus(IndexSet::parse("2").unwrap())));
        assign_affinity(&mut a, "").unwrap();
        assert_eq!(a, None);
    }

    #[test]
    fn requests_follow_systemds_rules() {
        let zero = IndexSet::parse("0").unwrap();
        let two = IndexSet::parse("0-1").unwrap();
        let empty = IndexSet::default();
        let req = |p, m| mem_request(Some(p), m);
        // default and local take no mask, even one given.
        for p in [NumaPolicy::Default, NumaPolicy::Local] {
            for m in [None, Some(&zero)] {
                let r = req(p, m).unwrap();
                assert_eq!((r.mode, r.max_node(), r.nodes), (p.number(), 0, None));
            }
        }
        // bind and interleave need a mask.
        for p in [NumaPolicy::Bind, NumaPolicy::Interleave] {
            assert_eq!(req(p, None), Err(InvalidPolicy));
            assert_eq!(req(p, Some(&empty)), Err(InvalidPolicy));
            let r = req(p, Some(&zero)).unwrap();
            assert_eq!((r.max_node(), r.nodes), (64, Some(vec![1])));
        }
        // preferred: the local node without a mask, one node at most.
        assert_eq!(req(NumaPolicy::Preferred, None).unwrap().nodes, None);
        assert_eq!(req(NumaPolicy::Preferred, Some(&two)), Err(InvalidPolicy));
        // A mask alone is preferred.
        assert_eq!(mem_request(None, Some(&zero)).unwrap().mode, 1);
        assert_eq!(mem_request(None, None).unwrap().mode, 0);
    }

    #[test]
    fn the_cpus_of_nodes_are_their_lists_together() {
        let read = |p: &str| match p {
            "/sys/devices/system/node/node0/cpulist" => Some("0-1\n".to_string()),
            "/sys/devices/system/node/node2/cpulist" => Some("4,6\n".to_string()),
            _ => None,
        };
        let cpus = cpus_of_nodes(&IndexSet::parse("0-2").unwrap(), read);
        assert_eq!(cpus.to_text(), "0-1 4 6");
    }

    #[test]
    fn policies_by_name_and_number() {
        for p in NumaPolicy::ALL {
            assert_eq!(parse_numa_policy(p.name()), Ok(p));
            assert_eq!(NumaPolicy::from_number(p.number()), Some(p));
        }
        assert!(parse_numa_policy("weighted")
            .unwrap_err()
            .contains("interleave"));
        assert_eq!(NumaPolicy::from_number(6), None);
    }
}
