//! The system calls of `iolab replay`, as `strace -ff` sees them, are the list's operations
//! in the list's order (docs/replay.md): a create is `openat(O_CREAT|O_EXCL)`, `write`s of
//! the listed size and `close` (with `fsync` for `cf`), made parents first; a whole read is
//! `openat(O_RDONLY)` and `read`s to the end of the file; a partial read `pread64` at the
//! offset; a delete `unlinkat`; the install, then per day the boot list and the day.

mod common;

use std::collections::HashMap;
use std::path::Path;

/// What the replaying thread did, one entry per list operation (or made parent).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Did {
    Mkdir(String),
    Create {
        name: String,
        bytes: u64,
        fsync: bool,
    },
    Read {
        name: String,
        bytes: u64,
        to_eof: bool,
    },
    ReadAt {
        name: String,
        len: u64,
        offset: u64,
    },
    Fsync(String),
    Unlink(String),
    Rmdir(String),
}

struct Call<'a> {
    name: &'a str,
    args: Vec<&'a str>,
    ret: i64,
}

fn parse(line: &str) -> Option<Call<'_>> {
    let (call, ret) = line.rsplit_once(" = ")?;
    let call = call.trim_end();
    let open = call.find('(')?;
    Some(Call {
        name: &call[..open],
        args: call[open + 1..].strip_suffix(')')?.split(", ").collect(),
        ret: ret.split_whitespace().next()?.parse().ok()?,
    })
}

fn unquote(s: &str) -> String {
    s.trim_matches('"').to_string()
}

/// Open descriptors of list files: name, created?, bytes, fsync, read to 0, pread.
#[derive(Default)]
struct Open {
    name: String,
    create: bool,
    bytes: u64,
    fsync: bool,
    eof: bool,
    pread: Option<(u64, u64)>,
}

fn interpret(text: &str) -> Vec<Did> {
    let mut out = Vec::new();
    let mut open: HashMap<i64, Open> = HashMap::new();
    for c in text.lines().filter_map(parse) {
        let fd: i64 = c.args.first().and_then(|a| a.parse().ok()).unwrap_or(-1);
        match c.name {
            "mkdirat" if fd >= 0 && c.ret == 0 => out.push(Did::Mkdir(unquote(c.args[1]))),
            "openat" if fd >= 0 && !c.args[1].starts_with("\"/") && c.ret >= 0 => {
                open.insert(
                    c.ret,
                    Open {
                        name: unquote(c.args[1]),
                        create: c.args[2].contains("O_CREAT"),
                        ..Open::default()
                    },
                );
                if c.args[2].contains("O_CREAT") {
                    assert!(
                        c.args[2].contains("O_EXCL") && c.args[2].contains("O_WRONLY"),
                        "{}",
                        c.args[2]
                    );
                }
            }
            "write" | "read" => {
                if let Some(o) = open.get_mut(&fd) {
                    o.bytes += c.ret as u64;
                    o.eof |= c.name == "read" && c.ret == 0;
                }
            }
            "pread64" => {
                if let Some(o) = open.get_mut(&fd) {
                    o.pread = Some((c.args[2].parse().unwrap(), c.args[3].parse().unwrap()));
                }
            }
            "fsync" => {
                if let Some(o) = open.get_mut(&fd) {
                    o.fsync = true;
                }
            }
            "close" => {
                if let Some(o) = open.remove(&fd) {
                    out.push(if o.create {
                        Did::Create {
                            name: o.name,
                            bytes: o.bytes,
                            fsync: o.fsync,
                        }
                    } else if let Some((len, offset)) = o.pread {
                        Did::ReadAt {
                            name: o.name,
                            len,
                            offset,
                        }
                    } else if o.fsync {
                        Did::Fsync(o.name)
                    } else {
                        Did::Read {
                            name: o.name,
                            bytes: o.bytes,
                            to_eof: o.eof,
                        }
                    });
                }
            }
            "unlinkat" if fd >= 0 => {
                let n = unquote(c.args[1]);
                out.push(if c.args[2].contains("AT_REMOVEDIR") {
                    Did::Rmdir(n)
                } else {
                    Did::Unlink(n)
                });
            }
            _ => {}
        }
    }
    out
}

#[test]
#[ignore = "needs strace"]
fn the_calls_are_the_lists_operations_in_order() {
    iolab_testkit::require_tool("strace");
    let s = tempfile::tempdir().unwrap();
    let w = |name: &str, text: &str| {
        let p = s.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let install = w(
        "install.list",
        "a/b/f1, 3000000, c\na/f2, 100, cf\ng, 0, c\nd, 0, m\n",
    );
    let boot = w("boot.list", "a/b/f1, 3000000, s\n");
    let days = w(
        "days.list",
        "[day 1]\nd/x, 5000, c\na/f2, 40, r, 10\ng, 0, d\n[day 2]\nd/x, 5000, s\nd/x, 5000, d\nd, 0, x\na/f2, 0, f\n",
    );
    let dir = s.path().join("run");
    std::fs::create_dir(&dir).unwrap();
    let out = s.path().join("trace");
    std::fs::create_dir(&out).unwrap();
    let o = iolab_testkit::bounded("strace", common::HUNG)
        .args(["-ff", "-qq", "-s", "0", "-o"])
        .arg(out.join("t"))
        .args([
            "-e",
            "trace=openat,mkdirat,write,read,pread64,fsync,close,unlinkat",
        ])
        .arg(env!("CARGO_BIN_EXE_iolab"))
        .arg("replay")
        .arg("--dir")
        .arg(&dir)
        .arg("--install")
        .arg(&install)
        .arg("--boot")
        .arg(&boot)
        .arg("--days")
        .arg(&days)
        .args(["--no-db", "--no-monitor", "--json"])
        .output()
        .expect("strace runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The thread that made `a` is the replaying one.
    let thread = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .find(|t| t.contains("mkdirat(") && t.contains("\"a\""))
        .expect("a thread made the directory a");
    let did = interpret(&thread);
    let s = |x: &str| x.to_string();
    let want = vec![
        // The install: parents made before the file.
        Did::Mkdir(s("a")),
        Did::Mkdir(s("a/b")),
        Did::Create {
            name: s("a/b/f1"),
            bytes: 3000000,
            fsync: false,
        },
        Did::Create {
            name: s("a/f2"),
            bytes: 100,
            fsync: true,
        },
        Did::Create {
            name: s("g"),
            bytes: 0,
            fsync: false,
        },
        Did::Mkdir(s("d")),
        // Day 1: boot, then the day.
        Did::Read {
            name: s("a/b/f1"),
            bytes: 3000000,
            to_eof: true,
        },
        Did::Create {
            name: s("d/x"),
            bytes: 5000,
            fsync: false,
        },
        Did::ReadAt {
            name: s("a/f2"),
            len: 40,
            offset: 10,
        },
        Did::Unlink(s("g")),
        // Day 2.
        Did::Read {
            name: s("a/b/f1"),
            bytes: 3000000,
            to_eof: true,
        },
        Did::Read {
            name: s("d/x"),
            bytes: 5000,
            to_eof: true,
        },
        Did::Unlink(s("d/x")),
        Did::Rmdir(s("d")),
        Did::Fsync(s("a/f2")),
    ];
    assert_eq!(&did[..want.len()], &want[..], "{did:#?}");
    // Then the clean-up removes what is left, each name before its parent.
    assert_eq!(
        &did[want.len()..],
        &[
            Did::Unlink(s("a/f2")),
            Did::Unlink(s("a/b/f1")),
            Did::Rmdir(s("a/b")),
            Did::Rmdir(s("a"))
        ],
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let days = json["result"]["days"].as_array().unwrap();
    assert_eq!(days.len(), 3, "the install and two days");
    assert_eq!(days[1]["phases"][0]["read_bytes"], 3000000);
    let _ = Path::new("");
}
