//! What a user or group may be written as where a unit names one
//! (`User=`, `Group=`, `SocketUser=`, …): a name or a number, not empty,
//! with no whitespace and no `:`. Whether it exists is the init's to find
//! out when the unit starts.

/// What is wrong with a value that [`valid`] refuses.
pub const INVALID: &str = "empty, or with blanks or `:`";

/// Whether `s` can name a user or group.
pub fn valid(s: &str) -> bool {
    !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == ':')
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_name_or_number_without_spaces_or_colons() {
        for ok in ["root", "_apt", "1000", "systemd-network"] {
            assert!(super::valid(ok), "{ok}");
        }
        for bad in ["", "a b", "a:b", "tab\there"] {
            assert!(!super::valid(bad), "{bad:?}");
        }
    }
}
