//! A real headless browser for the dashboard's test: Debian's Chromium
//! driven through Debian's ChromeDriver (W3C WebDriver over HTTP on a free
//! loopback port), with the flags this machine needs (no sandbox as root,
//! no GPU, no background networking: nothing leaves the machine). Dropping
//! [`Browser`] ends the session and kills ChromeDriver and every browser
//! process under it by PID, even when the test fails.

use super::etcd::free_port;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One browser session.
pub struct Browser {
    driver: Child,
    port: u16,
    session: String,
    _profile: tempfile::TempDir,
}

fn call(port: u16, method: &str, path: &str, body: Option<&Value>) -> Option<Value> {
    let s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    let body = body.map(Value::to_string).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut r = BufReader::new(s);
    r.get_mut().write_all(req.as_bytes()).ok()?;
    // ChromeDriver may keep the connection open: read by Content-Length.
    let mut len = 0;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok()?;
            }
        }
    }
    let mut out = vec![0; len];
    r.read_exact(&mut out).ok()?;
    serde_json::from_slice(&out).ok()
}

impl Browser {
    /// Starts ChromeDriver and a headless Chromium session.
    pub fn start() -> Browser {
        let port = free_port();
        let driver = Command::new("/usr/bin/chromedriver")
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver (Debian's chromium-driver)");
        let profile = tempfile::Builder::new()
            .prefix("flotilla-chromium-")
            .tempdir()
            .expect("profile dir");
        let mut b = Browser {
            driver,
            port,
            session: String::new(),
            _profile: profile,
        };
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "pageLoadStrategy": "eager",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--disable-crash-reporter",
                    "--disable-breakpad", "--window-size=1400,1000",
                    format!("--user-data-dir={}", b._profile.path().display()),
                ]
            }
        }}});
        let deadline = Instant::now() + Duration::from_secs(30);
        let v = loop {
            if let Some(v) = call(port, "POST", "/session", Some(&caps)) {
                break v;
            }
            assert!(Instant::now() < deadline, "chromedriver did not answer");
            std::thread::sleep(Duration::from_millis(100));
        };
        b.session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no browser session: {v}"))
            .to_string();
        b
    }

    fn cmd(&self, method: &str, what: &str, body: Option<Value>) -> Value {
        self.try_cmd(method, what, body)
            .unwrap_or_else(|e| panic!("webdriver {method} {what}: {e}"))
    }

    /// A command whose WebDriver error the caller may handle: `Err` holds
    /// the error's value (`{"error": …, "message": …}`).
    fn try_cmd(&self, method: &str, what: &str, body: Option<Value>) -> Result<Value, Value> {
        let path = format!("/session/{}{what}", self.session);
        let v = call(self.port, method, &path, body.as_ref())
            .unwrap_or_else(|| panic!("webdriver {method} {what}: no answer"));
        if v["value"]["error"].is_string() {
            return Err(v["value"].clone());
        }
        Ok(v["value"].clone())
    }

    /// Opens `url`.
    pub fn open(&self, url: &str) {
        self.cmd("POST", "/url", Some(json!({ "url": url })));
    }

    /// The page's URL.
    pub fn url(&self) -> String {
        self.cmd("GET", "/url", None)
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// Runs `script` (a function body) in the page; its return value.
    pub fn js(&self, script: &str) -> Value {
        self.cmd(
            "POST",
            "/execute/sync",
            Some(json!({ "script": script, "args": [] })),
        )
    }

    /// The text of the element `css` ("" when there is none).
    pub fn text(&self, css: &str) -> String {
        let script = format!(
            "const e = document.querySelector({}); return e ? e.innerText : '';",
            Value::from(css)
        );
        self.js(&script).as_str().unwrap_or("").to_string()
    }

    fn element(&self, css: &str) -> String {
        self.try_element(css)
            .unwrap_or_else(|e| panic!("webdriver POST /element {css}: {e}"))
    }

    /// The element `css` finds, or WebDriver's error (`no such element`).
    fn try_element(&self, css: &str) -> Result<String, Value> {
        let v = self.try_cmd(
            "POST",
            "/element",
            Some(json!({"using": "css selector", "value": css})),
        )?;
        Ok(v.as_object()
            .and_then(|o| o.values().next())
            .and_then(Value::as_str)
            .unwrap_or_else(|| panic!("no element {css}"))
            .to_string())
    }

    /// Clicks the element `css`, as a person would. The dashboard redraws
    /// its tables as the cluster changes, so the element found may be
    /// replaced before the click reaches it ("stale element reference"):
    /// then it is found again, until the deadline.
    pub fn click(&self, css: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            // The page re-renders a list whole: between two renders the
            // element may be gone, or the one found replaced.
            let clicked = self.try_element(css).and_then(|e| {
                self.try_cmd("POST", &format!("/element/{e}/click"), Some(json!({})))
            });
            match clicked {
                Ok(_) => return,
                Err(v)
                    if (v["error"] == "stale element reference"
                        || v["error"] == "no such element")
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(v) => panic!("webdriver click {css}: {v}"),
            }
        }
    }

    /// Types `text` into the element `css` (after clearing it).
    pub fn type_into(&self, css: &str, text: &str) {
        let e = self.element(css);
        self.cmd("POST", &format!("/element/{e}/clear"), Some(json!({})));
        self.cmd(
            "POST",
            &format!("/element/{e}/value"),
            Some(json!({ "text": text })),
        );
    }

    /// Waits until `f` gives something (the page updates by itself).
    pub fn wait<T>(
        &self,
        what: &str,
        limit: Duration,
        mut f: impl FnMut(&Browser) -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(v) = f(self) {
                return v;
            }
            if Instant::now() > deadline {
                let path = std::env::temp_dir().join("flotilla-ui-timeout.png");
                self.screenshot(&path);
                panic!(
                    "timed out waiting for {what} (screenshot: {})",
                    path.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Saves a screenshot of the page as PNG.
    pub fn screenshot(&self, path: &Path) {
        let v = self.cmd("GET", "/screenshot", None);
        let png = super::b64_decode(v.as_str().unwrap_or(""));
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).expect("screenshot dir");
        }
        std::fs::write(path, png).expect("write the screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = call(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            );
        }
        let pid = self.driver.id() as i32;
        // The browser's processes are ChromeDriver's descendants.
        super::signal(pid, libc::SIGSTOP);
        for p in super::descendants(pid) {
            super::signal(p, libc::SIGKILL);
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}
