//! Writes cut into transactions that etcd accepts.
//!
//! etcd refuses a transaction of more than `--max-txn-ops` operations
//! (default 128) or a request of more than `--max-request-bytes` (default
//! 1.5 MiB). Writers hand over *groups* of operations that must land
//! together (everything about one unit: its old schedule key deleted and
//! its new one put in the same revision, so that no agent ever sees it on
//! two machines); [`chunks`] packs whole groups into transactions of at most
//! [`MAX_TXN_OPS`] operations and [`MAX_TXN_BYTES`] bytes. A group larger
//! than that (a global unit on hundreds of machines) is split; its parts
//! stay in order.

use etcd_client::{PutOptions, TxnOp};

/// Largest number of operations in one transaction.
pub const MAX_TXN_OPS: usize = 120;

/// Largest size of one transaction's keys and values, well under etcd's
/// default request limit of 1.5 MiB.
pub const MAX_TXN_BYTES: usize = 1024 * 1024;

/// One write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Put `value` at `key`, bound to `lease` when not 0.
    Put {
        /// The key.
        key: String,
        /// The value.
        value: Vec<u8>,
        /// The lease, or 0.
        lease: i64,
    },
    /// Delete `key`.
    Delete {
        /// The key.
        key: String,
    },
}

impl Op {
    /// A put without a lease.
    pub fn put(key: String, value: impl Into<Vec<u8>>) -> Op {
        Op::Put {
            key,
            value: value.into(),
            lease: 0,
        }
    }

    /// A put bound to a lease.
    pub fn put_leased(key: String, value: impl Into<Vec<u8>>, lease: i64) -> Op {
        Op::Put {
            key,
            value: value.into(),
            lease,
        }
    }

    /// A delete.
    pub fn delete(key: String) -> Op {
        Op::Delete { key }
    }

    /// Its size in a request (key, value and a little framing).
    pub fn size(&self) -> usize {
        match self {
            Op::Put { key, value, .. } => key.len() + value.len() + 16,
            Op::Delete { key } => key.len() + 8,
        }
    }

    /// The etcd operation.
    pub fn to_txn_op(&self) -> TxnOp {
        match self {
            Op::Put { key, value, lease } => {
                let opts = (*lease != 0).then(|| PutOptions::new().with_lease(*lease));
                TxnOp::put(key.as_str(), value.clone(), opts)
            }
            Op::Delete { key } => TxnOp::delete(key.as_str(), None),
        }
    }
}

/// Packs groups of operations into transactions: groups are never split
/// unless one alone is over the limits, and order is kept.
pub fn chunks(groups: Vec<Vec<Op>>) -> Vec<Vec<Op>> {
    let mut out: Vec<Vec<Op>> = Vec::new();
    let mut cur: Vec<Op> = Vec::new();
    let mut bytes = 0;
    for g in groups {
        let gbytes: usize = g.iter().map(Op::size).sum();
        let fits_alone = g.len() <= MAX_TXN_OPS && gbytes <= MAX_TXN_BYTES;
        // A group that fits in a transaction of its own is never split.
        if fits_alone
            && !cur.is_empty()
            && (cur.len() + g.len() > MAX_TXN_OPS || bytes + gbytes > MAX_TXN_BYTES)
        {
            out.push(std::mem::take(&mut cur));
            bytes = 0;
        }
        for op in g {
            let s = op.size();
            if !cur.is_empty() && (cur.len() + 1 > MAX_TXN_OPS || bytes + s > MAX_TXN_BYTES) {
                out.push(std::mem::take(&mut cur));
                bytes = 0;
            }
            bytes += s;
            cur.push(op);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(k: &str, n: usize) -> Op {
        Op::put(k.to_string(), vec![b'x'; n])
    }

    #[test]
    fn groups_stay_whole_within_the_limits() {
        // 50 groups of 3 small ops: 40 groups (120 ops) fit in one txn.
        let groups: Vec<Vec<Op>> = (0..50)
            .map(|i| {
                vec![
                    Op::delete(format!("a{i}")),
                    put(&format!("b{i}"), 10),
                    put(&format!("c{i}"), 10),
                ]
            })
            .collect();
        let c = chunks(groups);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), vec![120, 30]);
        // By bytes: 300 KiB values, three per transaction.
        let groups: Vec<Vec<Op>> = (0..7)
            .map(|i| vec![put(&format!("k{i}"), 300 * 1024)])
            .collect();
        let c = chunks(groups);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), vec![3, 3, 1]);
        for t in &c {
            assert!(t.iter().map(Op::size).sum::<usize>() <= MAX_TXN_BYTES);
        }
        // A group over the limit alone is split, in order.
        let big: Vec<Op> = (0..300).map(|i| put(&format!("g{i:03}"), 1)).collect();
        let c = chunks(vec![vec![put("first", 1)], big.clone()]);
        assert_eq!(
            c.iter().map(Vec::len).collect::<Vec<_>>(),
            vec![120, 120, 61]
        );
        let flat: Vec<Op> = c.into_iter().flatten().collect();
        assert_eq!(flat[1..], big[..]);
        assert!(chunks(Vec::new()).is_empty());
    }
}
