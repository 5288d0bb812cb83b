//! clusterd's command line (docs/contract.md §7):
//!
//! ```text
//! clusterd --etcd URL[,URL...] [--etcd-prefix /flotilla/] [--machine-id ID] [--metadata k=v,k=v]
//!          [--public-ip IP] [--control PATH] [--api-listen unix:///run/clusterd/fleet.sock | tcp://HOST:PORT]
//!          [--api-advertise unix:///PATH | tcp://HOST:PORT | https://IP:PORT | none]
//!          [--agent-ttl 30s] [--etcd-ca FILE --etcd-cert FILE --etcd-key FILE]
//!          [--api-cert FILE --api-key FILE --api-client-ca FILE]
//!          [--capacity memory=MIB,cores=N] [--reserve memory=MIB,cores=N]
//! ```
//!
//! The API's TLS flags are flotilla's addition to docs/contract.md §7's synopsis: the API
//! over TCP off loopback must use TLS with client certificates
//! (docs/fleet-compat.md, docs/cluster.md "Security"), and these name the files.
//! `--capacity` and `--reserve` are the machine's resources for placement
//! by fit (docs/cluster.md "Resources").
//!
//! Parsing is pure: [`parse_args`] takes the arguments and the contents of
//! `/etc/machine-id` (read by the caller) and returns settings or a message.

use crate::keys::valid_machine_id;
use crate::listen::{parse_listen, ApiTls, Listen};
use flotilla_units::cli::{self, Word};
use flotilla_units::fleet_api::Resources;
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
    /// `--api-advertise`: where the other clusterds reach this API to hand
    /// it their unit writes while this one leads ([`crate::forward`]); by
    /// default its listen, when that names one place
    /// ([`crate::forward::default_advertise`]); `none`: no committer.
    pub api_advertise: Option<String>,
    /// Presence lease TTL (whole seconds, at least 1).
    pub agent_ttl: Duration,
    /// TLS files for etcd.
    pub etcd_ca: Option<PathBuf>,
    /// Client certificate for etcd.
    pub etcd_cert: Option<PathBuf>,
    /// Client key for etcd.
    pub etcd_key: Option<PathBuf>,
    /// `--capacity`: the memory (MiB) and cores (hundredths) to publish
    /// instead of the kernel's, each when given.
    pub capacity: Amounts,
    /// `--reserve`: what is kept for the system.
    pub reserve: Resources,
}

/// Memory (MiB) and cores (hundredths of a core), each when given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amounts {
    /// MiB.
    pub memory: Option<u64>,
    /// Hundredths of a core.
    pub cores: Option<u64>,
}

impl Amounts {
    /// What units may reserve on a machine whose kernel says `kernel`,
    /// with `reserve` kept for the system.
    pub fn capacity(self, kernel: Resources, reserve: Resources) -> Resources {
        Resources {
            memory: self.memory.unwrap_or(kernel.memory),
            cores: self.cores.unwrap_or(kernel.cores),
        }
        .minus(reserve)
    }
}

/// Parses `memory=MIB,cores=N` (`N` a number of cores with at most two
/// decimals: `2`, `1.5`, `0.25`), for `flag`.
pub fn parse_amounts(flag: &str, s: &str) -> Result<Amounts, String> {
    let mut out = Amounts::default();
    for pair in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            format!("{flag}: {pair:?} is not memory=MIB or cores=N (e.g. memory=2048,cores=1.5)")
        };
        let (k, v) = pair.split_once('=').ok_or_else(bad)?;
        let v = v.trim();
        match k.trim() {
            "memory" => {
                out.memory = Some(
                    v.parse::<u64>()
                        .ok()
                        .filter(|n| *n <= 1 << 40)
                        .ok_or_else(bad)?,
                )
            }
            "cores" => out.cores = Some(parse_cores(v).ok_or_else(bad)?),
            _ => return Err(bad()),
        }
    }
    Ok(out)
}

/// `N` cores in hundredths: `2` is 200, `1.5` 150, `0.25` 25.
fn parse_cores(v: &str) -> Option<u64> {
    let (whole, frac) = v.split_once('.').unwrap_or((v, ""));
    if whole.is_empty() && frac.is_empty() || frac.len() > 2 {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(frac) {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let frac: u64 = format!("{frac:0<2}").parse().ok()?;
    whole
        .checked_mul(100)?
        .checked_add(frac)
        .filter(|n| *n <= 1 << 40)
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
                [--api-advertise unix:///PATH | tcp://HOST:PORT | https://IP:PORT | none]
                [--agent-ttl 30s] [--etcd-ca FILE --etcd-cert FILE --etcd-key FILE]
                [--api-cert FILE --api-key FILE --api-client-ca FILE]
                [--capacity memory=MIB,cores=N] [--reserve memory=MIB,cores=N]";

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
        "--api-advertise",
        "--agent-ttl",
        "--etcd-ca",
        "--etcd-cert",
        "--etcd-key",
        "--api-cert",
        "--api-key",
        "--api-client-ca",
        "--capacity",
        "--reserve",
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
    let capacity = parse_amounts(
        "--capacity",
        flags.get("--capacity").map(String::as_str).unwrap_or(""),
    )?;
    let reserve = parse_amounts(
        "--reserve",
        flags.get("--reserve").map(String::as_str).unwrap_or(""),
    )?;
    let reserve = Resources {
        memory: reserve.memory.unwrap_or(0),
        cores: reserve.cores.unwrap_or(0),
    };
    let api = parse_listen(
        flags
            .get("--api-listen")
            .map(String::as_str)
            .unwrap_or(DEFAULT_API),
        api_tls.is_some(),
    )?;
    let api_advertise = match flags.get("--api-advertise") {
        Some(a) if a == "none" => None,
        Some(a) => {
            crate::forward::check_advertise(a, api_tls.is_some())?;
            Some(a.clone())
        }
        None => crate::forward::default_advertise(&api, api_tls.is_some()),
    };
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
        api,
        api_tls,
        api_advertise,
        agent_ttl: ttl,
        etcd_ca: tls[0].clone(),
        etcd_cert: tls[1].clone(),
        etcd_key: tls[2].clone(),
        capacity,
        reserve,
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

    #[test]
    fn api_advertise() {
        // By default the listen, the unix socket's here; `none` turns it
        // off.
        let c = run("--etcd http://x:1", Some("m")).unwrap();
        assert_eq!(
            c.api_advertise.as_deref(),
            Some("unix:///run/clusterd/fleet.sock")
        );
        let c = run("--etcd http://x:1 --api-advertise none", Some("m")).unwrap();
        assert_eq!(c.api_advertise, None);
        let c = run(
            "--etcd http://x:1 --api-listen tcp://127.0.0.1:7",
            Some("m"),
        )
        .unwrap();
        assert_eq!(c.api_advertise.as_deref(), Some("tcp://127.0.0.1:7"));
        for a in ["unix:///run/m1/fleet.sock", "tcp://127.0.0.1:4001"] {
            let c = run(&format!("--etcd http://x:1 --api-advertise {a}"), Some("m")).unwrap();
            assert_eq!(c.api_advertise.as_deref(), Some(a));
        }
        // Plain HTTP: loopback or a socket only.
        let err = |a: &str| {
            run(&format!("--etcd http://x:1 --api-advertise {a}"), Some("m"))
                .err()
                .unwrap_or_default()
        };
        assert!(err("tcp://10.0.0.1:4001").starts_with(
            "--api-advertise tcp://10.0.0.1:4001: forwarded writes would travel in plain HTTP"
        ));
        assert!(err("unix://rel.sock").contains("absolute path"));
        assert!(err("http://127.0.0.1:1").contains("names unix:///PATH, a loopback"));
        // https:// with the API's TLS flags (and only so); a TLS API is
        // advertised as https://.
        let tls = "--api-listen tcp://10.0.0.1:4001 --api-cert a --api-key b --api-client-ca c";
        let c = run(
            &format!("--etcd http://x:1 {tls} --api-advertise https://10.0.0.1:4001"),
            Some("m"),
        )
        .unwrap();
        assert_eq!(c.api_advertise.as_deref(), Some("https://10.0.0.1:4001"));
        assert!(err("https://10.0.0.1:4001").contains("needs --api-cert, --api-key"));
        let e = run(
            &format!("--etcd http://x:1 {tls} --api-advertise tcp://127.0.0.1:4001"),
            Some("m"),
        )
        .err()
        .unwrap_or_default();
        assert!(e.contains("advertise it as https://IP:PORT"), "{e}");
    }

    #[test]
    fn capacity_and_reserve() {
        let c = run(
            "--etcd http://x:1 --capacity memory=4096,cores=1.5 --reserve cores=0.25,memory=512",
            Some("m"),
        )
        .unwrap();
        assert_eq!(
            c.capacity,
            Amounts {
                memory: Some(4096),
                cores: Some(150)
            }
        );
        let kernel = Resources {
            memory: 24_000,
            cores: 200,
        };
        assert_eq!(
            c.capacity.capacity(kernel, c.reserve),
            Resources {
                memory: 3584,
                cores: 125
            }
        );
        // Only one given: the other is the kernel's; more reserved than
        // there is leaves nothing.
        let c = run(
            "--etcd http://x:1 --capacity cores=8 --reserve memory=99999",
            Some("m"),
        )
        .unwrap();
        assert_eq!(
            c.capacity.capacity(kernel, c.reserve),
            Resources {
                memory: 0,
                cores: 800
            }
        );
        for (v, cores) in [
            ("2", 200),
            ("1.5", 150),
            ("0.25", 25),
            (".5", 50),
            ("3.", 300),
        ] {
            assert_eq!(parse_cores(v), Some(cores), "{v}");
        }
        for v in ["", ".", "1.255", "-1", "1e3", "x"] {
            assert_eq!(parse_cores(v), None, "{v:?}");
        }
        let err = |s: &str| run(s, Some("m")).err().unwrap_or_default();
        assert_eq!(
            err("--etcd http://x:1 --capacity memory=2G"),
            "--capacity: \"memory=2G\" is not memory=MIB or cores=N (e.g. memory=2048,cores=1.5)"
        );
        assert!(err("--etcd http://x:1 --reserve disk=5").starts_with("--reserve: \"disk=5\""));
        assert!(err("--etcd http://x:1 --capacity cores").starts_with("--capacity: "));
    }
}
