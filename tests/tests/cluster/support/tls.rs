//! Certificates and a network namespace, for the TLS tests: a test CA
//! made with the `openssl` command, and a network namespace joined to the
//! test's own by a veth pair.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// A test CA made with the `openssl` command (ECDSA P-256, valid 2 days),
/// and the certificates it issues, all as PEM files in one directory.
pub struct Pki {
    dir: PathBuf,
    /// The CA certificate.
    pub ca: PathBuf,
    ca_key: PathBuf,
}

fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .output()
        .expect("run openssl (Debian's openssl package)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

impl Pki {
    /// A new CA named `name` in `dir` (created).
    pub fn new(dir: &Path, name: &str) -> Pki {
        std::fs::create_dir_all(dir).expect("pki dir");
        let (ca, ca_key) = (format!("{name}.crt"), format!("{name}.key"));
        openssl(
            dir,
            &[
                "req",
                "-x509",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                &ca_key,
                "-out",
                &ca,
                "-days",
                "2",
                "-subj",
                &format!("/CN={name}"),
                "-addext",
                "basicConstraints=critical,CA:TRUE",
                "-addext",
                "keyUsage=critical,keyCertSign,cRLSign",
            ],
        );
        Pki {
            dir: dir.to_path_buf(),
            ca: dir.join(ca),
            ca_key: dir.join(ca_key),
        }
    }

    /// Issues `name.crt` and `name.key` for the subject alternative names
    /// `sans` (e.g. `IP:127.0.0.1`; none for a client), usable as server and
    /// client certificate. Returns (certificate, key).
    pub fn issue(&self, name: &str, sans: &[&str]) -> (PathBuf, PathBuf) {
        let mut ext = "basicConstraints=critical,CA:FALSE\n\
                       keyUsage=critical,digitalSignature,keyEncipherment\n\
                       extendedKeyUsage=serverAuth,clientAuth\n"
            .to_string();
        if !sans.is_empty() {
            ext.push_str(&format!("subjectAltName={}\n", sans.join(",")));
        }
        let extfile = format!("{name}.ext");
        std::fs::write(self.dir.join(&extfile), ext).expect("ext file");
        let (crt, key, csr) = (
            format!("{name}.crt"),
            format!("{name}.key"),
            format!("{name}.csr"),
        );
        openssl(
            &self.dir,
            &[
                "req",
                "-new",
                "-newkey",
                "ec",
                "-pkeyopt",
                "ec_paramgen_curve:prime256v1",
                "-nodes",
                "-keyout",
                &key,
                "-out",
                &csr,
                "-subj",
                &format!("/CN={name}"),
            ],
        );
        let ca = self.ca.display().to_string();
        let ca_key = self.ca_key.display().to_string();
        openssl(
            &self.dir,
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca,
                "-CAkey",
                &ca_key,
                "-set_serial",
                &format!("{}", std::process::id() as u64 * 1000 + name.len() as u64),
                "-out",
                &crt,
                "-days",
                "2",
                "-extfile",
                &extfile,
            ],
        );
        (self.dir.join(crt), self.dir.join(key))
    }
}

fn ip(args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("ip").args(args).stdin(Stdio::null()).output()
}

/// A network namespace made by the test, joined to the test's own
/// namespace by a veth pair on a /30 of 198.18.0.0/15 (the benchmarking
/// range, unused on real networks): `host_ip` on the host side, `ns_ip`
/// inside. Needs root; removed on drop.
pub struct Netns {
    /// The namespace's name.
    pub name: String,
    host_if: String,
    /// The host side's address (a non-loopback address of this namespace).
    pub host_ip: String,
    /// The namespace side's address.
    pub ns_ip: String,
}

impl Netns {
    /// Makes the namespace and the link, or `None` (with the reason) when
    /// that is not possible here (not root, no `ip`).
    pub fn new() -> Result<Netns, String> {
        // Tests of one process run in parallel: each namespace gets the
        // next number of this process, in its names and its /30.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let pid = std::process::id();
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        let tag = format!("{pid}x{k}");
        let slot = pid.wrapping_mul(8).wrapping_add(k) % (250 * 64);
        let (a, b) = (slot / 64, (slot % 64) * 4);
        let n = Netns {
            name: format!("flotilla-{tag}"),
            host_if: format!("flth{tag}"),
            host_ip: format!("198.18.{a}.{}", b + 1),
            ns_ip: format!("198.18.{a}.{}", b + 2),
        };
        let peer = format!("fltn{tag}");
        let steps: Vec<Vec<String>> = vec![
            vec!["netns".into(), "add".into(), n.name.clone()],
            vec![
                "link".into(),
                "add".into(),
                n.host_if.clone(),
                "type".into(),
                "veth".into(),
                "peer".into(),
                "name".into(),
                peer.clone(),
            ],
            vec![
                "link".into(),
                "set".into(),
                peer.clone(),
                "netns".into(),
                n.name.clone(),
            ],
            vec![
                "addr".into(),
                "add".into(),
                format!("{}/30", n.host_ip),
                "dev".into(),
                n.host_if.clone(),
            ],
            vec!["link".into(), "set".into(), n.host_if.clone(), "up".into()],
            vec![
                "-n".into(),
                n.name.clone(),
                "addr".into(),
                "add".into(),
                format!("{}/30", n.ns_ip),
                "dev".into(),
                peer.clone(),
            ],
            vec![
                "-n".into(),
                n.name.clone(),
                "link".into(),
                "set".into(),
                peer,
                "up".into(),
            ],
            vec![
                "-n".into(),
                n.name.clone(),
                "link".into(),
                "set".into(),
                "lo".into(),
                "up".into(),
            ],
        ];
        for st in steps {
            let args: Vec<&str> = st.iter().map(String::as_str).collect();
            match ip(&args) {
                Ok(o) if o.status.success() => {}
                Ok(o) => {
                    return Err(format!(
                        "ip {}: {}",
                        args.join(" "),
                        String::from_utf8_lossy(&o.stderr).trim()
                    ))
                }
                Err(e) => return Err(format!("ip: {e}")),
            }
        }
        Ok(n)
    }

    /// A command run inside the namespace (`ip netns exec`).
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["link", "del", &self.host_if]);
        let _ = ip(&["netns", "del", &self.name]);
    }
}

/// An answer of [`curl`]: the HTTP status (0 when no HTTP answer came,
/// e.g. the TLS handshake was refused), the machine that committed the
/// write (`X-Flotilla-Committed-By`, empty if none) and the body.
pub struct Answer {
    pub code: u16,
    pub by: String,
    pub body: String,
}

/// One request with curl (`cmd`: `curl`, or curl inside a namespace)
/// trusting `ca`, with a client certificate and key or none.
pub fn curl(
    mut cmd: Command,
    ca: &Path,
    client: Option<(&Path, &Path)>,
    method: &str,
    url: &str,
    body: Option<&str>,
) -> Answer {
    cmd.args(["-s", "--max-time", "20", "-o", "-", "-X", method])
        .args(["-w", "\n%header{x-flotilla-committed-by}\n%{http_code}"])
        .arg("--cacert")
        .arg(ca);
    if let Some((cert, key)) = client {
        cmd.arg("--cert").arg(cert).arg("--key").arg(key);
    }
    if let Some(b) = body {
        cmd.args(["-H", "Content-Type: application/json", "--data-binary", b]);
    }
    let out = cmd
        .arg(url)
        .stdin(Stdio::null())
        .output()
        .expect("run curl");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let mut parts = text.rsplitn(3, '\n');
    let code = parts.next().unwrap_or("").trim().parse().unwrap_or(0);
    let by = parts.next().unwrap_or("").trim().to_string();
    let body = parts.next().unwrap_or("").to_string();
    Answer { code, by, body }
}
