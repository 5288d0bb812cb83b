//! A TCP relay on loopback between clusterds and etcd that a test can cut
//! and reopen: fleet's functional tests cut a machine off etcd with
//! iptables, which needs root and a network of its own; here the machine's
//! clusterd reaches etcd through the relay, and a cut closes every relayed
//! connection and refuses new ones (closed as soon as accepted, as an
//! iptables REJECT answers at once) until it is reopened. etcd itself runs
//! on, and its leases expire as they would for a machine cut off.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A relay from a free loopback port to one address; stopped on drop.
pub struct Relay {
    port: u16,
    cut: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    conns: Arc<Mutex<Vec<TcpStream>>>,
    accept: Option<std::thread::JoinHandle<()>>,
}

impl Relay {
    /// Relays to `to` (`HOST:PORT`).
    pub fn start(to: &str) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").expect("relay listen");
        let port = listener.local_addr().expect("relay address").port();
        let cut = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let conns: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (c, s, k, to) = (cut.clone(), stop.clone(), conns.clone(), to.to_string());
        let accept = std::thread::spawn(move || {
            for client in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                if c.load(Ordering::SeqCst) {
                    continue;
                }
                let Ok(server) = TcpStream::connect(&to) else {
                    continue;
                };
                let mut held = k.lock().unwrap_or_else(|e| e.into_inner());
                for (from, into) in [(&client, &server), (&server, &client)] {
                    let (Ok(mut r), Ok(mut w)) = (from.try_clone(), into.try_clone()) else {
                        continue;
                    };
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        while let Ok(n) = r.read(&mut buf) {
                            if n == 0 || w.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                        let _ = w.shutdown(Shutdown::Both);
                        let _ = r.shutdown(Shutdown::Both);
                    });
                }
                held.push(client);
                held.push(server);
            }
        });
        Relay {
            port,
            cut,
            stop,
            conns,
            accept: Some(accept),
        }
    }

    /// Its address as an etcd URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    fn close_all(&self) {
        let mut held = self.conns.lock().unwrap_or_else(|e| e.into_inner());
        for c in held.drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }

    /// Cuts: every relayed connection closed, new ones refused.
    pub fn cut(&self) {
        self.cut.store(true, Ordering::SeqCst);
        self.close_all();
    }

    /// Relays again.
    pub fn reopen(&self) {
        self.cut.store(false, Ordering::SeqCst);
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.close_all();
        // Wake the accepting thread so that it sees the stop.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
    }
}
