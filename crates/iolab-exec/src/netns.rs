//! Two network namespaces joined by a veth pair, for a tool whose server should not share
//! the client's network stack (iperf3 across namespaces): created per run, removed after it
//! on every path (and when dropped).

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The pair: the server's namespace and the client's.
#[derive(Debug)]
pub struct NamespacePair {
    server: String,
    client: String,
    server_addr: String,
    removed: bool,
}

/// The prefix of every namespace iolab creates (`ip netns list`).
pub const PREFIX: &str = "iolab-";

impl NamespacePair {
    /// Creates both namespaces, the veth pair between them (10.213.N.1 on the server's side,
    /// .2 on the client's) and brings every link up. Anything made before a failure is
    /// removed.
    pub fn create() -> Result<NamespacePair, String> {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let net = (pid.wrapping_mul(31).wrapping_add(n)) % 250 + 1;
        let mut pair = NamespacePair {
            server: format!("{PREFIX}{pid}-{n}-srv"),
            client: format!("{PREFIX}{pid}-{n}-cli"),
            server_addr: format!("10.213.{net}.1"),
            removed: false,
        };
        let client_addr = format!("10.213.{net}.2");
        let (vs, vc) = (format!("ilab{n}s"), format!("ilab{n}c"));
        let steps: Vec<Vec<String>> = vec![
            argv(&["netns", "add", &pair.server]),
            argv(&["netns", "add", &pair.client]),
            argv(&[
                "link",
                "add",
                &vs,
                "netns",
                &pair.server,
                "type",
                "veth",
                "peer",
                "name",
                &vc,
                "netns",
                &pair.client,
            ]),
            argv(&[
                "-n",
                &pair.server,
                "addr",
                "add",
                &format!("{}/30", pair.server_addr),
                "dev",
                &vs,
            ]),
            argv(&[
                "-n",
                &pair.client,
                "addr",
                "add",
                &format!("{client_addr}/30"),
                "dev",
                &vc,
            ]),
            argv(&["-n", &pair.server, "link", "set", "lo", "up"]),
            argv(&["-n", &pair.client, "link", "set", "lo", "up"]),
            argv(&["-n", &pair.server, "link", "set", &vs, "up"]),
            argv(&["-n", &pair.client, "link", "set", &vc, "up"]),
        ];
        for (i, a) in steps.iter().enumerate() {
            if let Err(e) = ip(a) {
                if i == 0 {
                    pair.removed = true;
                } else {
                    let _ = pair.remove_now();
                }
                return Err(e);
            }
        }
        Ok(pair)
    }

    pub fn server_ns(&self) -> &str {
        &self.server
    }

    pub fn client_ns(&self) -> &str {
        &self.client
    }

    /// The server's address, as the client reaches it.
    pub fn server_addr(&self) -> &str {
        &self.server_addr
    }

    /// Removes both namespaces (their veth ends go with them).
    pub fn remove(mut self) -> Result<(), String> {
        self.remove_now()
    }

    fn remove_now(&mut self) -> Result<(), String> {
        if self.removed {
            return Ok(());
        }
        self.removed = true;
        let mut first = None;
        for ns in [&self.server, &self.client] {
            if exists(ns) {
                if let Err(e) = ip(&argv(&["netns", "delete", ns])) {
                    first.get_or_insert(e);
                }
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl Drop for NamespacePair {
    fn drop(&mut self) {
        let _ = self.remove_now();
    }
}

fn argv(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Whether namespace `name` exists (`/run/netns/NAME`, where `ip netns` keeps them).
pub fn exists(name: &str) -> bool {
    std::path::Path::new("/run/netns").join(name).exists()
}

fn ip(args: &[String]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running `ip {}`: {e} (install iproute2)", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}
