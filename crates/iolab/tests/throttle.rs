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
