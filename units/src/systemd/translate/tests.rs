use super::*;

/// Every key in SPECIAL has its own arm and every twin of a YAML key is
/// read: none of them gets the generic warning, and a key outside both
/// does.
#[test]
fn handled_keys_are_read() {
    let twins = keys::KEYS.iter().flat_map(|k| k.systemd.iter().copied());
    for (sec, key) in SPECIAL.into_iter().chain(twins) {
        let text = format!("[{sec}]\n{key}=\n[Service]\nExecStart=/bin/x\n");
        let p = translate_file("f", "a.service", &text);
        let generic = format!("[{sec}] {key}= is not supported, ignored");
        assert!(
            p.diagnostics.iter().all(|d| d.message != generic),
            "{sec} {key}: {:?}",
            p.diagnostics
        );
    }
    let p = translate_file(
        "f",
        "a.service",
        "[Service]\nExecStart=/bin/x\nIPAddressDeny=any\n",
    );
    assert_eq!(
        p.diagnostics[0].message,
        "[Service] IPAddressDeny= is not supported, ignored"
    );
}
