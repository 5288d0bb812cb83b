//! clusterd's command line (docs/contract.md §7):
//!
//! ```text
//! clusterd --etcd URL[,URL...] [--etcd-prefix /flotilla/] [--machine-id ID] [--metadata k=v,k=v]
//!          [--public-ip IP] [--control PATH] [--api-listen unix:///run/clusterd/fleet.sock | tcp://HOST:PORT]
//!          [--agent-ttl 30s] [--etcd-ca FILE --etcd-cert FILE --etcd-key FILE]
//!          [--api-cert FILE --api-key FILE --api-client-ca FILE]
//! ```
//!
//! The last three are flotilla's addition to docs/contract.md §7's synopsis: the API
//! over TCP off loopback must use TLS with client certificates
//! (docs/fleet-compat.md, docs/cluster.md "Security"), and these name the files.
//!
//! Parsing is pure: [`parse_args`] takes the arguments and the contents of
//! `/etc/machine-id` (read by the caller) and returns settings or a message.

use crate::keys::valid_machine_id;
use crate::serve::{parse_listen, ApiTls, Listen};
use flotilla_units::cli::{self, Word};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// The default API address.
pub const DEFAULT_API: &str = "unix:///run/clusterd/fleet.sock";

/// Validated settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// etcd endpoints.
    pub etcd: Vec<String>,
    /// Key prefix.
    pub prefix: String,
    /// This machine's ID.
    pub machine_id: String,
    /// Metadata from the flag.
    pub metadata: BTreeMap<String, String>,
    /// Primary IP reported for this machine.
    pub public_ip: String,
    /// The init's control socket.
    pub control: PathBuf,
    /// Where the API listens.
    pub api: Listen,
    /// TLS of the API (TCP only), with client certificates.
    pub api_tls: Option<ApiTls>,
    /// Presence lease TTL (whole seconds, at least 1).
    pub agent_ttl: Duration,
    /// TLS files for etcd.
    pub etcd_ca: Option<PathBuf>,
    /// Client certificate for etcd.
    pub etcd_cert: Option<PathBuf>,
    /// Client key for etcd.
    pub etcd_key: Option<PathBuf>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run with these settings.
    Run(Box<Config>),
    /// Print this (help or version) and exit 0.
    Print(String),
}

/// The usage text.
pub const USAGE: &str = "usage: clusterd --etcd URL[,URL...] [--etcd-prefix /flotilla/] [--machine-id ID] [--metadata k=v,k=v]
                [--public-ip IP] [--control PATH] [--api-listen unix:///run/clusterd/fleet.sock | tcp://HOST:PORT]
                [--agent-ttl 30s] [--etcd-ca FILE --etcd-cert FILE --etcd-key FILE]
                [--api-cert FILE --api-key FILE --api-client-ca FILE]";

/// Parses `k=v,k=v`.
pub fn parse_metadata(s: &str) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                out.insert(k.trim().to_string(), v.trim().to_string());
            }
            _ => return Err(format!("--metadata: {pair:?} is not key=value")),
        }
    }
    Ok(out)
}

/// Parses the arguments (without the program name).
pub fn parse_args(
    args: &[String],
    etc_machine_id: Option<&str>,
    default_control: PathBuf,
) -> Result<Parsed, String> {
    let mut flags: BTreeMap<&str, String> = BTreeMap::new();
    let known = [
        "--etcd",
        "--etcd-prefix",
        "--machine-id",
        "--metadata",
        "--public-ip",
        "--control",
        "--api-listen",
        "--agent-ttl",
        "--etcd-ca",
        "--etcd-cert",
        "--etcd-key",
        "--api-cert",
        "--api-key",
        "--api-client-ca",
    ];
    let mut p = cli::parser(args.iter().cloned());
    while let Some(arg) = p.next().map_err(|e| e.to_string())? {
        let given = match cli::word(arg) {
            Word::Flag(f) if f == "-h" || f == "--help" => {
                return Ok(Parsed::Print(USAGE.to_string()))
            }
            Word::Flag(f) if f == "--version" => {
                return Ok(Parsed::Print(format!(
                    "clusterd {}",
                    env!("CARGO_PKG_VERSION")
                )))
            }
            Word::Flag(f) => f,
            Word::Value(v) => return Err(format!("unknown argument {v:?}\n{USAGE}")),
        };
        let Some(flag) = known.iter().find(|k| **k == given) else {
            let written = cli::as_written(&given, &mut p);
            return Err(format!("unknown argument {written:?}\n{USAGE}"));
        };
        let value = p
            .value()
            .map_err(|_| format!("{flag} needs a value"))?
            .into_string()
            .map_err(|_| format!("{flag}: the value is not UTF-8"))?;
        flags.insert(flag, value);
    }
    let etcd: Vec<String> = flags
        .get("--etcd")
        .ok_or_else(|| format!("--etcd URL is required\n{USAGE}"))?
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if etcd.is_empty() {
        return Err("--etcd: no URL given".into());
    }
    let machine_id = match flags.get("--machine-id") {
        Some(m) => m.trim().to_string(),
        None => etc_machine_id
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .ok_or("no --machine-id given and /etc/machine-id is missing or empty")?,
    };
    if !valid_machine_id(&machine_id) {
        return Err(format!(
            "machine ID {machine_id:?} is not valid (letters, digits, _ . : -)"
        ));
    }
    let ttl = match flags.get("--agent-ttl") {
        Some(s) => flotilla_units::duration::parse_duration(s)
            .map_err(|e| format!("--agent-ttl {s}: {e}"))?,
        None => Duration::from_secs(30),
    };
    let ttl = Duration::from_secs(ttl.as_secs_f64().ceil().max(1.0) as u64);
    let tls: Vec<Option<PathBuf>> = ["--etcd-ca", "--etcd-cert", "--etcd-key"]
        .iter()
        .map(|f| flags.get(f).map(PathBuf::from))
        .collect();
    let n_tls = tls.iter().filter(|t| t.is_some()).count();
    if n_tls != 0 && n_tls != 3 {
        return Err("--etcd-ca, --etcd-cert and --etcd-key go together".into());
    }
    for url in &etcd {
        let https = url.starts_with("https://");
        if n_tls == 3 && url.starts_with("http://") {
            return Err(format!(
                "--etcd {url}: with --etcd-ca, --etcd-cert and --etcd-key the endpoints are https:// URLs"
            ));
        }
        if n_tls == 0 && https {
            return Err(format!(
                "--etcd {url}: an https:// endpoint needs --etcd-ca, --etcd-cert and --etcd-key"
            ));
        }
    }
    let api_tls: Vec<Option<PathBuf>> = ["--api-cert", "--api-key", "--api-client-ca"]
        .iter()
        .map(|f| flags.get(f).map(PathBuf::from))
        .collect();
    let api_tls = match api_tls.as_slice() {
        [Some(cert), Some(key), Some(ca)] => Some(ApiTls {
            cert: cert.clone(),
            key: key.clone(),
            client_ca: ca.clone(),
        }),
        [None, None, None] => None,
        _ => return Err(
            "--api-cert, --api-key and --api-client-ca go together (TLS with client certificates)"
                .into(),
        ),
    };
    let prefix = flags
        .get("--etcd-prefix")
        .cloned()
        .unwrap_or_else(|| "/flotilla/".into());
    if prefix.is_empty() {
        return Err("--etcd-prefix must not be empty".into());
    }
    Ok(Parsed::Run(Box::new(Config {
        etcd,
        prefix,
        machine_id,
        metadata: parse_metadata(flags.get("--metadata").map(String::as_str).unwrap_or(""))?,
        public_ip: flags.get("--public-ip").cloned().unwrap_or_default(),
        control: flags
            .get("--control")
            .map(PathBuf::from)
            .unwrap_or(default_control),
        api: parse_listen(
            flags
                .get("--api-listen")
                .map(String::as_str)
                .unwrap_or(DEFAULT_API),
            api_tls.is_some(),
        )?,
        api_tls,
        agent_ttl: ttl,
        etcd_ca: tls[0].clone(),
        etcd_cert: tls[1].clone(),
        etcd_key: tls[2].clone(),
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn run(s: &str, mid: Option<&str>) -> Result<Config, String> {
        match parse_args(&args(s), mid, "/c.sock".into())? {
            Parsed::Run(c) => Ok(*c),
            Parsed::Print(p) => Err(p),
        }
    }

    #[test]
    fn flags() {
        let c = run(
            "--etcd http://127.0.0.1:1,http://127.0.0.1:2 --metadata a=1,b=2 --agent-ttl 500ms",
            Some("abc\n"),
        )
        .unwrap();
        assert_eq!(c.etcd.len(), 2);
        assert_eq!(c.machine_id, "abc");
        assert_eq!(c.metadata.len(), 2);
        assert_eq!(c.agent_ttl, Duration::from_secs(1));
        assert_eq!(c.prefix, "/flotilla/");
        assert_eq!(c.api, Listen::Unix("/run/clusterd/fleet.sock".into()));
        let c = run(
            "--etcd=http://x:1 --machine-id m1 --api-listen tcp://127.0.0.1:9 --agent-ttl 3",
            None,
        )
        .unwrap();
        assert_eq!(c.machine_id, "m1");
        assert_eq!(c.agent_ttl, Duration::from_secs(3));
        assert!(run("--machine-id m1", None).is_err());
        assert!(run("--etcd http://x:1", None).is_err());
        assert!(run("--etcd http://x:1 --machine-id a/b", None).is_err());
        assert!(run(
            "--etcd http://x:1 --machine-id m --api-listen tcp://0.0.0.0:1",
            None
        )
        .is_err());
        assert!(run("--etcd http://x:1 --machine-id m --etcd-ca x", None).is_err());
        assert!(run("--etcd http://x:1 --machine-id m --metadata nokey", None).is_err());
        assert!(run("--etcd http://x:1 --bogus", None).is_err());
        // The usage errors, word for word.
        let err = |s: &str| run(s, Some("m")).err().unwrap_or_default();
        assert_eq!(
            err("--bogus=1"),
            format!("unknown argument \"--bogus=1\"\n{USAGE}")
        );
        assert_eq!(err("stray"), format!("unknown argument \"stray\"\n{USAGE}"));
        assert_eq!(err("-xyz"), format!("unknown argument \"-xyz\"\n{USAGE}"));
        // After `--` nothing is a flag.
        assert_eq!(
            err("-- --etcd http://x:1"),
            format!("unknown argument \"--etcd\"\n{USAGE}")
        );
        assert_eq!(err("--etcd"), "--etcd needs a value");
        assert_eq!(err("--help --bogus"), USAGE);
        assert_eq!(
            err("--version"),
            format!("clusterd {}", env!("CARGO_PKG_VERSION"))
        );
        // A value may be empty.
        assert!(run("--etcd http://x:1 --metadata=", Some("m")).is_ok());
        // TLS to etcd: all three files, https:// endpoints.
        let c = run(
            "--etcd https://127.0.0.1:1 --machine-id m --etcd-ca a --etcd-cert b --etcd-key c",
            None,
        )
        .unwrap();
        assert_eq!(c.etcd_key.as_deref(), Some(std::path::Path::new("c")));
        assert!(run(
            "--etcd http://127.0.0.1:1 --machine-id m --etcd-ca a --etcd-cert b --etcd-key c",
            None
        )
        .is_err());
        assert!(run("--etcd https://127.0.0.1:1 --machine-id m", None).is_err());
        // TLS on the API: all three files; then any TCP address is allowed.
        let c = run(
            "--etcd http://x:1 --machine-id m --api-listen tcp://10.1.2.3:4 --api-cert a --api-key b --api-client-ca c",
            None,
        )
        .unwrap();
        assert_eq!(c.api, Listen::Tcp("10.1.2.3:4".parse().unwrap()));
        assert_eq!(
            c.api_tls.map(|t| t.client_ca),
            Some(std::path::PathBuf::from("c"))
        );
        assert!(run(
            "--etcd http://x:1 --machine-id m --api-listen tcp://10.1.2.3:4 --api-cert a --api-key b",
            None
        )
        .is_err());
        assert!(
            run(
                "--etcd http://x:1 --machine-id m --api-cert a --api-key b --api-client-ca c",
                None
            )
            .is_err(),
            "TLS on the default unix socket"
        );
    }
}
