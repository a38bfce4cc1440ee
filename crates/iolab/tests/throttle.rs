//! `[sut] throttle`: the run joins a blkio cgroup limiting its loop device; what the
//! cgroup was charged is stored with the run, and buffered writes flushed by the kernel
//! (which cgroup v1 does not throttle) are reported as `throttle-bypassed`.

mod common;

use common::{require_root, stderr, Scratch};
use serde_json::Value;

fn experiment(s: &Scratch, name: &str, sync: &str, size: &str, tunables: &str) -> Value {
    let f = s.write(
        &format!("{name}.toml"),
        &format!(
            r#"
name = "{name}"
seed = 1
[sut]
target = {{ kind = "loop_image", size = "512M" }}
fs = {{ kind = "ext4" }}
throttle = {{ write_bps = "512M", read_bps = "512M" }}
[workload]
micro = {{ access = "write", sync = "{sync}", bs = "1m", size = "{size}" }}
[repetitions]
min = 1
max = 1
{tunables}
"#
        ),
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v = s.latest();
    v["configs"][0]["runs"][0].clone()
}

fn metric(run: &Value, name: &str) -> Option<f64> {
    run["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == name)
        .and_then(|m| m["value"].as_f64())
}

fn finding(run: &Value, id: &str) -> Option<Value> {
    run["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == id)
        .cloned()
}

#[test]
#[ignore = "needs root: loop devices, mounts, blkio cgroups"]
fn throttled_runs_store_what_the_limits_applied_to() {
    require_root();
    let s = Scratch::new();
    let direct = experiment(&s, "direct", "direct", "48m", "");
    let charged = metric(&direct, "throttle.charged_write_bytes").expect("charged bytes");
    assert!(charged >= (48 << 20) as f64, "{charged}");
    assert!(finding(&direct, "throttle-bypassed").is_none(), "{direct}");
    let v = s.latest();
    let env = &v["configs"][0]["runs"][0]["environment"]["sut"]["throttle"];
    assert_eq!(env["limits"]["write_bps"], 512u64 << 20, "{env}");
    assert!(
        env["device"].as_str().is_some_and(|d| d.starts_with("7:")),
        "{env}"
    );

    // Buffered writes with no sync of their own, and dirty limits so low that the kernel's
    // flusher writes nearly all of them back while the run goes on (the writer waits in
    // balance_dirty_pages): the device writes them past the limits, uncharged.
    let buffered = experiment(
        &s,
        "buffered",
        "normal",
        "192m",
        "[sut.tunables]\n\"vm.dirty_bytes\" = 8388608\n\"vm.dirty_background_bytes\" = 1048576\n",
    );
    let charged = metric(&buffered, "throttle.charged_write_bytes").expect("charged bytes");
    // (A little is charged: what the run's own threads wrote back, e.g. at close.)
    assert!(
        charged < (16 << 20) as f64,
        "flusher writeback charged {charged}"
    );
    let f = finding(&buffered, "throttle-bypassed").unwrap_or_else(|| panic!("{buffered}"));
    assert_eq!(f["severity"], "warning", "{f}");
    assert!(
        f["evidence"]["bypass_bytes"].as_u64().unwrap() >= 128 << 20,
        "{f}"
    );
    assert!(s.mounts().is_empty() && s.loops().is_empty());
}

/// Bad throttles and caches, and a kernel without device-mapper/bcache: located errors,
/// exit 2, nothing created.
#[test]
fn bad_throttles_and_caches_are_located() {
    let s = Scratch::new();
    let file = |sut_extra: &str| {
        s.write(
            "bad.toml",
            &format!(
                "name = \"x\"\n[sut]\ntarget = {{ kind = \"loop_image\", size = \"256M\" }}\n\
                 fs = {{ kind = \"ext4\" }}\n{sut_extra}\n[workload]\nmicro = {{ size = \"1m\" }}\n"
            ),
        )
    };
    for (extra, want) in [
        (
            "throttle = { read_iops = 0, write_bps = \"fast\" }",
            vec![
                "bad.toml:5:26: `sut.throttle.read_iops`: must be at least 1",
                "bad.toml:5:41: `sut.throttle.write_bps`: \"fast\" is not a size",
            ],
        ),
        (
            "throttle = { iops = 10 }",
            vec![
                "bad.toml:5:",
                "`sut.throttle.iops`: unknown field `iops`, expected one of `read_iops`",
            ],
        ),
        (
            "cache = { kind = \"bcache\", size = \"1G\", mode = \"write-back\" }",
            vec!["bad.toml:5:48: `sut.cache.mode`: \"write-back\" is not one of"],
        ),
        (
            "cache = { kind = \"dm-cache\", size = \"1G\", block_size = \"4K\" }",
            vec!["bad.toml:5:56: `sut.cache.block_size`: dm-cache blocks are 32K to 1G"],
        ),
    ] {
        let f = file(extra);
        let o = s.run(&["run", f.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra}: {err}");
        for w in want {
            assert!(err.contains(w), "{extra}: expected {w:?} in {err}");
        }
        assert!(!s.db().exists(), "nothing stored");
    }
    // This machine's kernel: device-mapper and bcache are reported where they are named.
    let misc = std::fs::read_to_string("/proc/misc").unwrap_or_default();
    let no_dm = !misc
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some("device-mapper"));
    let no_bcache = !std::path::Path::new("/sys/fs/bcache").exists();
    for (kind, absent, says) in [
        ("dm-cache", no_dm, "has no device-mapper"),
        ("bcache", no_bcache, "has no bcache"),
    ] {
        let f = file(&format!("cache = {{ kind = \"{kind}\", size = \"1G\" }}"));
        let o = s.run(&["run", f.to_str().unwrap()]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("bad.toml:5:18: `sut.cache.kind`: "), "{err}");
        let expect = if absent { says } else { "does not set up" };
        assert!(err.contains(expect), "{err}");
        assert!(!s.db().exists(), "nothing stored");
    }
}

/// Before running: a throttled workload that writes buffered and syncs nothing is told
/// that its writes will pass the limits.
#[test]
fn check_predicts_unthrottled_writeback() {
    let s = Scratch::new();
    let f = s.write(
        "fs.toml",
        "name = \"x\"\n[sut]\ntarget = { kind = \"loop_image\", size = \"2G\" }\n\
         fs = { kind = \"ext4\" }\nthrottle = { write_bps = \"100M\" }\n\
         [workload]\nbuiltin = \"fileserver\"\n",
    );
    let o = s.run(&["check", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = common::stdout(&o) + &stderr(&o);
    assert!(out.contains("warning [throttle-bypassed]"), "{out}");
    // Reads only: nothing to say.
    let f = s.write(
        "read.toml",
        "name = \"x\"\n[sut]\ntarget = { kind = \"loop_image\", size = \"256M\" }\n\
         fs = { kind = \"ext4\" }\nthrottle = { write_bps = \"100M\" }\n\
         [workload]\nmicro = { access = \"read\", size = \"8m\" }\n",
    );
    let o = s.run(&["check", f.to_str().unwrap()]);
    let out = common::stdout(&o) + &stderr(&o);
    assert!(!out.contains("throttle-bypassed"), "{out}");
}
