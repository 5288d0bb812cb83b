//! `StandardInputFileDescriptor`, `StandardOutputFileDescriptor`,
//! `StandardErrorFileDescriptor` (D-Bus type `h`): the caller's own
//! descriptors as a transient service's standard streams, what
//! `systemd-run --pipe` sends (and `-t` where its streams are not all a
//! terminal). As systemd (its `stdio_as_fds`), every process of the unit
//! gets each one given in place of what the unit's `StandardInput=`,
//! `StandardOutput=`, `StandardError=` say. They go to the init with the
//! `transient-add` request (`SCM_RIGHTS`, docs/control-protocol.md).

use super::Props;
use crate::error::BusError;
use flotilla_units::protocol::StdStream;
use std::os::fd::OwnedFd;
use zbus::zvariant::Fd;

/// The stream a property stands for, if it is one of the three.
fn stream_of(key: &str) -> Option<StdStream> {
    match key {
        "StandardInputFileDescriptor" => Some(StdStream::Stdin),
        "StandardOutputFileDescriptor" => Some(StdStream::Stdout),
        "StandardErrorFileDescriptor" => Some(StdStream::Stderr),
        _ => None,
    }
}

/// Takes the three properties out of `props`: the streams given, each
/// with its descriptor (a copy of the caller's, which the message
/// carried), in the order of the properties, the last of a stream
/// winning.
pub fn take(props: &mut Props) -> Result<Vec<(StdStream, OwnedFd)>, BusError> {
    let mut out: Vec<(StdStream, OwnedFd)> = Vec::new();
    let mut rest = Vec::with_capacity(props.len());
    for (key, value) in props.drain(..) {
        let Some(stream) = stream_of(&key) else {
            rest.push((key, value));
            continue;
        };
        let fd = Fd::try_from(value)
            .map_err(|e| BusError::invalid_args(format!("property {key}: {e}")))?;
        let fd = OwnedFd::try_from(fd)
            .map_err(|e| BusError::invalid_args(format!("property {key}: {e}")))?;
        out.retain(|(s, _)| *s != stream);
        out.push((stream, fd));
    }
    *props = rest;
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use zbus::zvariant::{OwnedValue, Value};

    fn fd_value(fd: &OwnedFd) -> OwnedValue {
        let copy = fd.try_clone().unwrap();
        OwnedValue::try_from(Value::Fd(Fd::from(copy))).unwrap()
    }

    #[test]
    fn the_three_are_taken_and_the_rest_left() {
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let (a, b): (OwnedFd, OwnedFd) = (a.into(), b.into());
        let mut props: Props = vec![
            (
                "Description".into(),
                OwnedValue::from(zbus::zvariant::Str::from("x")),
            ),
            ("StandardInputFileDescriptor".into(), fd_value(&a)),
            ("StandardOutputFileDescriptor".into(), fd_value(&b)),
            ("StandardErrorFileDescriptor".into(), fd_value(&a)),
            ("StandardOutputFileDescriptor".into(), fd_value(&a)),
        ];
        let got = take(&mut props).unwrap();
        assert_eq!(props.len(), 1);
        assert_eq!(props.first().map(|p| p.0.as_str()), Some("Description"));
        let streams: Vec<StdStream> = got.iter().map(|(s, _)| *s).collect();
        assert_eq!(
            streams,
            [StdStream::Stdin, StdStream::Stderr, StdStream::Stdout]
        );
        // Copies: not the caller's numbers.
        assert!(got.iter().all(|(_, fd)| fd.as_raw_fd() != a.as_raw_fd()));
        // A wrong type is the caller's error, named.
        let mut bad: Props = vec![("StandardInputFileDescriptor".into(), OwnedValue::from(3u32))];
        let e = take(&mut bad).unwrap_err();
        assert!(
            e.message.contains("StandardInputFileDescriptor"),
            "{}",
            e.message
        );
    }
}
