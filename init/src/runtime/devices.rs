//! Device units (docs/systemd-units.md, "Device units"): where udev can
//! run (`Sys::udev_available`), the init reads udev's database at start
//! and at each reload (`crate::udev_db`) and follows udevd's broadcast on
//! a netlink socket watched in the loop, keeping the devices tagged
//! `systemd`. Their units (`flotilla_units::udev::units`) are the
//! transient set [`SET`], made again when a message changes them, and
//! each is wanted as long as it is in the set, whatever the target: a
//! device plugged starts what waits for it and what it wants, one gone
//! takes its units out, which stops what binds to it.

use super::Runtime;
use crate::sys::{Sys, Token};
use flotilla_units::planner::{OnChange, WantLife};
use flotilla_units::protocol::{DeviceLink, Reply};
use flotilla_units::udev::{self, monitor, Device};
use std::collections::{BTreeMap, HashMap};
use std::os::fd::{AsFd, OwnedFd};

/// The transient set of the device units.
pub(super) const SET: &str = "udev";
/// The udev socket's token.
pub(super) const UDEV_TOKEN: Token = Token(3);

/// The devices the init follows.
#[derive(Default)]
pub(super) struct Devices {
    /// The socket on udevd's group, while following.
    monitor: Option<OwnedFd>,
    /// The tagged devices by sysfs path.
    by_syspath: BTreeMap<String, Device>,
    /// Each device unit's device, for its status.
    links: HashMap<String, DeviceLink>,
}

impl Devices {
    /// The device of the device unit `name`.
    pub(super) fn link(&self, name: &str) -> Option<DeviceLink> {
        self.links.get(name).cloned()
    }
}

impl<S: Sys> Runtime<S> {
    /// Starts following udev where it can run: the socket first, so that
    /// nothing broadcast while the database is read is lost, then the
    /// database. Said once on the console if the socket cannot be had.
    pub(super) fn follow_udev(&mut self) {
        if !self.sys.udev_available() {
            return;
        }
        match self.read_watched(self.sys.udev_monitor(), UDEV_TOKEN) {
            Ok(fd) => self.devices.monitor = Some(fd),
            Err(e) => {
                self.sys
                    .console(&format!("init: {e}: device units do not follow udev"));
                return;
            }
        }
        self.reread_devices();
    }

    /// Reads udev's database again (at a reload, or when messages were
    /// lost) and applies what it says.
    pub(super) fn reread_devices(&mut self) {
        if self.devices.monitor.is_none() {
            return;
        }
        self.devices.by_syspath = crate::udev_db::read(&self.sys)
            .into_iter()
            .map(|d| (d.syspath.clone(), d))
            .collect();
        self.apply_devices();
    }

    /// The udev socket is readable: each message updates its device.
    pub(super) fn on_udev(&mut self) {
        let Some(fd) = &self.devices.monitor else {
            return;
        };
        let read = self.sys.udev_messages(fd.as_fd());
        if read.lost {
            self.reread_devices();
            return;
        }
        for m in &read.messages {
            let Some(e) = monitor::parse(m) else {
                continue;
            };
            let map = &mut self.devices.by_syspath;
            if let Some(old) = &e.old_syspath {
                map.remove(old);
            }
            if e.action == monitor::Action::Remove || !e.device.is_tagged() {
                map.remove(&e.device.syspath);
            } else {
                map.insert(e.device.syspath.clone(), e.device);
            }
        }
        self.apply_devices();
    }

    /// Makes the device units those of the devices now, if they changed,
    /// and wants each.
    fn apply_devices(&mut self) {
        let mut links = HashMap::new();
        for d in self.devices.by_syspath.values() {
            for u in d.units() {
                links.entry(u.name).or_insert_with(|| DeviceLink {
                    sysfs_path: d.syspath.clone(),
                    following: u.following,
                });
            }
        }
        self.devices.links = links;
        let specs = udev::units::specs(self.devices.by_syspath.values());
        let same = match self.units.transient_sets().get(SET) {
            Some(now) => now.iter().map(|u| &**u).eq(&specs),
            None => specs.is_empty(),
        };
        if same {
            return;
        }
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        if let Reply::Error {
            message, details, ..
        } = self.apply_transient_with(SET.to_string(), specs, OnChange::Keep)
        {
            self.sys
                .console(&format!("init: device units not changed: {message}"));
            for d in details {
                self.sys.console(&format!("init: {d}"));
            }
            return;
        }
        let now = self.now();
        for n in names {
            // Only a shutdown refuses it, and then nothing is to start.
            let _ = self.planner.want(&n, WantLife::Kept, now);
        }
    }
}
