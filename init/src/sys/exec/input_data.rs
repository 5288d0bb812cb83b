//! `StandardInput=data`: the bytes of `StandardInputText=` and
//! `StandardInputData=` in a sealed memfd, made once per run of the unit
//! (in memory: no disk), and a descriptor of its own for each process,
//! opened anew through `/proc/self/fd` so that every process reads the
//! data from its start whatever another one has read.

use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};

/// A memfd holding `data`, sealed against any change.
pub fn sealed(data: &[u8]) -> std::io::Result<OwnedFd> {
    let mut file = crate::sys::memfd::create(c"flotilla-stdin", libc::MFD_ALLOW_SEALING)?;
    file.write_all(data)?;
    let seals = libc::F_SEAL_SEAL | libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE;
    // SAFETY: fcntl(2) on a descriptor we own.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(file.into())
}

/// A new read-only descriptor of the memfd `fd`, at offset 0.
pub fn reopen(fd: &OwnedFd) -> std::io::Result<OwnedFd> {
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    std::fs::File::open(path).map(OwnedFd::from)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::io::{Read, Seek};

    #[test]
    fn each_reader_starts_at_the_beginning_and_the_data_cannot_change() {
        let fd = super::sealed(b"line\n").unwrap();
        for _ in 0..2 {
            let mut text = String::new();
            std::fs::File::from(super::reopen(&fd).unwrap())
                .read_to_string(&mut text)
                .unwrap();
            assert_eq!(text, "line\n");
        }
        let mut f = std::fs::File::from(fd);
        f.rewind().unwrap();
        use std::io::Write;
        assert!(f.write_all(b"x").is_err());
    }
}
