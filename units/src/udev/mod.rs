//! udev's view of the devices, as systemd's `.device` units read it
//! (docs/systemd-units.md, "Device units"): the records of udev's database
//! under `/run/udev/data/` ([`db`]), the messages udevd broadcasts on its
//! netlink group once it has processed an event ([`monitor`]), and what a
//! device becomes as units ([`device`]: its names, `SYSTEMD_WANTS=`,
//! whether it is ready, its description). Pure: the init reads the files
//! and the socket and hands their bytes here.

pub mod db;
pub mod device;
pub mod monitor;
pub mod units;

#[cfg(test)]
mod tests;

pub use device::Device;
