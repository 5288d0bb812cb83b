//! The rules of a service's descriptor store (systemd's "file descriptor
//! store", `sd_notify(3)`'s `FDSTORE=1`), without the descriptors: the
//! init keeps a [`FdStore`] of its own handles (`init/src/runtime/fdstore.rs`)
//! and asks it what to keep, what to close and what to hand back.
//!
//! - A main process sends descriptors with `FDSTORE=1`, optionally named by
//!   `FDNAME=` ([`DEFAULT_NAME`] otherwise, or when the name is not valid:
//!   [`name_is_valid`]). The store holds at most the unit's
//!   `FileDescriptorStoreMax=`; one past it is refused (closed by the
//!   init, which says so). A descriptor already in the store (the same open
//!   file, as a service that stores again what it was handed back) is not
//!   kept twice.
//! - `FDSTOREREMOVE=1` with `FDNAME=` removes every entry of that name.
//! - `FDPOLL=0`: the entries of that message are not watched for hang-up;
//!   the others are, and leave the store when their peer closes.
//! - At the next start of the main process the entries are handed back
//!   after the socket units' descriptors, in the order they were stored,
//!   their names in `LISTEN_FDNAMES`.
//!
//! One notify message's store keys are read by [`StoreAsk::of`].

/// The name of a stored descriptor sent without `FDNAME=` (systemd's).
pub const DEFAULT_NAME: &str = "stored";

/// The longest `FDNAME=` (systemd's bound).
pub const MAX_NAME: usize = 255;

/// Whether `name` may name a descriptor in `LISTEN_FDNAMES`: at most
/// [`MAX_NAME`] bytes of printable ASCII (space included), no `:` (the
/// list's separator). The empty name is valid, as in systemd.
pub fn name_is_valid(name: &str) -> bool {
    name.len() <= MAX_NAME
        && name
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b':')
}

/// What one notify message asks of the store.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoreAsk {
    /// `FDSTORE=1`: keep the descriptors sent along.
    pub store: bool,
    /// `FDSTOREREMOVE=1`: drop the entries named `name`.
    pub remove: bool,
    /// `FDNAME=`, as given (checked by [`StoreAsk::name`]).
    pub name: Option<String>,
    /// `FDPOLL=0` was not given: watch what is stored for hang-up.
    pub poll: bool,
}

impl StoreAsk {
    /// The store keys among a message's `KEY=VALUE` pairs (of several
    /// `FDNAME=`, the first counts, as in systemd).
    pub fn of<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> StoreAsk {
        let mut ask = StoreAsk {
            poll: true,
            ..StoreAsk::default()
        };
        for (k, v) in pairs {
            match (k, v) {
                ("FDSTORE", "1") => ask.store = true,
                ("FDSTOREREMOVE", "1") => ask.remove = true,
                ("FDPOLL", "0") => ask.poll = false,
                ("FDNAME", v) if ask.name.is_none() => ask.name = Some(v.to_string()),
                _ => {}
            }
        }
        ask
    }

    /// Whether the message touches the store at all.
    pub fn any(&self) -> bool {
        self.store || self.remove
    }

    /// The name to store under: `FDNAME=`'s when valid, else
    /// [`DEFAULT_NAME`]; `Err` carries an invalid name given, to be said.
    pub fn name(&self) -> Result<&str, &str> {
        match self.name.as_deref() {
            None => Ok(DEFAULT_NAME),
            Some(n) if name_is_valid(n) => Ok(n),
            Some(n) => Err(n),
        }
    }
}

/// One stored entry: its name, the init's handle, and whether it is
/// watched for hang-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry<T> {
    /// Its name in `LISTEN_FDNAMES`.
    pub name: String,
    /// The init's handle (the descriptor, and its token when watched).
    pub item: T,
    /// Watched for hang-up (not sent with `FDPOLL=0`).
    pub poll: bool,
}

/// Why [`FdStore::add`] did not keep a descriptor: it is handed back to
/// be closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused<T> {
    /// The store holds `FileDescriptorStoreMax=` entries already (zero: the
    /// unit has no store).
    Full(T),
    /// The same open file is stored already.
    Duplicate(T),
}

/// A unit's store, in the order its entries were stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FdStore<T> {
    entries: Vec<Entry<T>>,
}

impl<T> Default for FdStore<T> {
    fn default() -> Self {
        FdStore {
            entries: Vec::new(),
        }
    }
}

impl<T> FdStore<T> {
    /// Keeps `item` under `name` if there is room (`max`: the unit's
    /// `FileDescriptorStoreMax=`) and `same` finds no entry holding the
    /// same file.
    pub fn add(
        &mut self,
        max: u32,
        name: &str,
        item: T,
        poll: bool,
        same: impl Fn(&T, &T) -> bool,
    ) -> Result<(), Refused<T>> {
        if self.entries.iter().any(|e| same(&e.item, &item)) {
            return Err(Refused::Duplicate(item));
        }
        if self.entries.len() >= max as usize {
            return Err(Refused::Full(item));
        }
        self.entries.push(Entry {
            name: name.to_string(),
            item,
            poll,
        });
        Ok(())
    }

    /// Takes out every entry named `name`.
    pub fn remove_named(&mut self, name: &str) -> Vec<Entry<T>> {
        self.take_where(|e| e.name == name)
    }

    /// Takes out the first entry `pick` chooses (the one that hung up).
    pub fn remove_first(&mut self, pick: impl Fn(&Entry<T>) -> bool) -> Option<Entry<T>> {
        let at = self.entries.iter().position(pick)?;
        Some(self.entries.remove(at))
    }

    /// Takes out every entry (the unit is stopped for good).
    pub fn take_all(&mut self) -> Vec<Entry<T>> {
        std::mem::take(&mut self.entries)
    }

    fn take_where(&mut self, pick: impl Fn(&Entry<T>) -> bool) -> Vec<Entry<T>> {
        let (out, keep) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|e| pick(e));
        self.entries = keep;
        out
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[Entry<T>] {
        &self.entries
    }

    /// The entry stored last.
    pub fn last_mut(&mut self) -> Option<&mut Entry<T>> {
        self.entries.last_mut()
    }

    /// How many.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Whether a unit's store is emptied now that it is in `state`: when it is
/// stopped or failed for good (no restart under way), as systemd 252
/// releases it (Debian 12; `FileDescriptorStorePreserve=` came later). A
/// restart, automatic or asked for, keeps it.
pub fn released_in(state: crate::state::UnitState, restarting: bool) -> bool {
    use crate::state::UnitState as S;
    match state {
        S::Disabled => true,
        S::Failed => !restarting,
        S::Waiting | S::Starting | S::Running | S::Reloading | S::Exited | S::Stopping => false,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::state::UnitState;

    fn eq(a: &u32, b: &u32) -> bool {
        a == b
    }

    #[test]
    fn names() {
        assert!(name_is_valid(""));
        assert!(name_is_valid("stream-1 x"));
        assert!(!name_is_valid("a:b"));
        assert!(!name_is_valid("tab\there"));
        assert!(!name_is_valid("é"));
        assert!(name_is_valid(&"x".repeat(255)));
        assert!(!name_is_valid(&"x".repeat(256)));
    }

    #[test]
    fn asks() {
        let ask = StoreAsk::of([("READY", "1")]);
        assert!(!ask.any());
        assert_eq!(ask.name(), Ok(DEFAULT_NAME));
        let ask = StoreAsk::of([("FDSTORE", "1"), ("FDNAME", "db"), ("FDPOLL", "0")]);
        assert!(ask.store && !ask.remove && !ask.poll);
        assert_eq!(ask.name(), Ok("db"));
        let ask = StoreAsk::of([("FDSTOREREMOVE", "1"), ("FDNAME", "a:b")]);
        assert!(ask.remove && ask.poll);
        assert_eq!(ask.name(), Err("a:b"));
        // Only `1` stores; the first FDNAME= counts.
        let ask = StoreAsk::of([("FDSTORE", "yes"), ("FDNAME", "a"), ("FDNAME", "b")]);
        assert!(!ask.store);
        assert_eq!(ask.name(), Ok("a"));
    }

    #[test]
    fn bounded_by_the_max_and_without_duplicates() {
        let mut s = FdStore::default();
        assert_eq!(s.add(0, "x", 1, true, eq), Err(Refused::Full(1)));
        assert_eq!(s.add(2, "a", 1, true, eq), Ok(()));
        assert_eq!(s.add(2, "a", 1, true, eq), Err(Refused::Duplicate(1)));
        assert_eq!(s.add(2, "b", 2, false, eq), Ok(()));
        assert_eq!(s.add(2, "c", 3, true, eq), Err(Refused::Full(3)));
        let names: Vec<&str> = s.entries().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(!s.entries()[1].poll);
    }

    #[test]
    fn removal_by_name_and_by_pick() {
        let mut s = FdStore::default();
        for (i, n) in ["a", "b", "a", "c"].iter().enumerate() {
            s.add(10, n, i as u32, true, eq).unwrap();
        }
        let gone: Vec<u32> = s.remove_named("a").into_iter().map(|e| e.item).collect();
        assert_eq!(gone, [0, 2]);
        assert_eq!(
            s.remove_first(|e| e.item == 3).map(|e| e.name),
            Some("c".into())
        );
        assert_eq!(s.remove_first(|e| e.item == 3), None);
        assert_eq!(s.len(), 1);
        assert_eq!(s.take_all().len(), 1);
        assert!(s.is_empty());
    }

    #[test]
    fn released_only_when_stopped_for_good() {
        assert!(released_in(UnitState::Disabled, false));
        assert!(released_in(UnitState::Failed, false));
        assert!(!released_in(UnitState::Failed, true));
        for s in [
            UnitState::Waiting,
            UnitState::Starting,
            UnitState::Running,
            UnitState::Reloading,
            UnitState::Exited,
            UnitState::Stopping,
        ] {
            assert!(!released_in(s, false), "{s:?}");
        }
    }

    proptest::proptest! {
        /// Whatever is added, the store never holds more than its max nor
        /// the same item twice, and keeps the order of what it kept.
        #[test]
        fn never_over_max(max in 0u32..8, items in proptest::collection::vec(0u32..12, 0..40)) {
            let mut s = FdStore::default();
            let mut kept = Vec::new();
            for i in items {
                if s.add(max, "n", i, true, eq).is_ok() {
                    kept.push(i);
                }
            }
            proptest::prop_assert!(s.len() <= max as usize);
            let held: Vec<u32> = s.entries().iter().map(|e| e.item).collect();
            proptest::prop_assert_eq!(&held, &kept);
            let mut dedup = held.clone();
            dedup.sort_unstable();
            dedup.dedup();
            proptest::prop_assert_eq!(dedup.len(), held.len());
        }
    }
}
