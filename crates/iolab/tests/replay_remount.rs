//! Between days a replay remounts the filesystem (docs/replay.md): every day runs on a new
//! mount (its unique mount id changes) and starts with the replay's files out of the page
//! cache, so the block layer sees every byte the day reads; `drop_caches` empties the cache
//! without a new mount, and `none` keeps the files cached — the device then reads nothing,
//! which shows that the measurement can tell. Each day's time, flush and
//! rates are stored as metrics, series and rows, and nothing is left mounted or attached.

mod common;

use std::fmt::Write as _;

use common::{require_root, stderr, Scratch};
use serde_json::Value;

#[test]
#[ignore = "needs root: loop device, mkfs, mount"]
fn a_remount_between_days_is_a_new_mount_with_an_empty_page_cache() {
    require_root();
    iolab_testkit::require_tool("mkfs.ext4");
    let _hang = iolab_testkit::timeout(600);
    let s = Scratch::new();
    let mut install = String::new();
    let mut boot = String::new();
    for i in 0..16 {
        let _ = writeln!(install, "usr/lib/f{i:02}, 524288, c");
        if i % 2 == 0 {
            let _ = writeln!(boot, "usr/lib/f{i:02}, 524288, s");
        }
    }
    s.write("install.list", &install);
    s.write("boot.list", &boot);
    s.write(
        "days.list",
        "[day 1]\nhome/x, 1048576, c\n[day 2]\nhome/x, 1048576, s\n[day 3]\nhome/x, 1048576, d\n",
    );
    let f = s.write(
        "replay.toml",
        r#"
name = "replay between days"
[factors]
between = ["remount", "drop_caches", "none"]
[sut]
target = { kind = "loop_image", size = "128M" }
fs = { kind = "ext4" }
[workload]
replay = { install = "install.list", boot = "boot.list", days = "days.list", between_days = "${between}" }
[repetitions]
min = 1
max = 1
[procedure]
drop_caches = false
"#,
    );
    let configs = s.run_ok_once(&f);
    assert_eq!(configs.len(), 3);
    for (label, run) in &configs {
        let days: Vec<&Value> = run["flowops"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "replay_day")
            .collect();
        let names: Vec<&str> = days.iter().map(|d| d["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["install", "day 1", "day 2", "day 3"], "{label}");
        let x = |d: &Value, k: &str| d["extra"][k].clone();
        let reads: Vec<u64> = days
            .iter()
            .map(|d| x(d, "device_read_bytes").as_u64().expect("device counters"))
            .collect();
        let ids: Vec<Value> = days.iter().map(|d| x(d, "mount_id")).collect();
        if label.contains("remount") {
            let mut distinct: Vec<u64> = ids
                .iter()
                .map(|i| i.as_u64().expect("a mount id"))
                .collect();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(
                distinct.len(),
                4,
                "{label}: every day on a new mount: {ids:?}"
            );
        } else {
            assert!(ids.iter().all(Value::is_null), "{label}: {ids:?}");
        }
        // Each day reads the boot list's 4 MiB (and day 2 the 1 MiB made on day 1).
        if label.contains("none") {
            // Without a remount or a drop they stay cached: the device reads (almost) nothing.
            assert!(
                reads[1..].iter().all(|&r| r < 1 << 20),
                "{label}: {reads:?}"
            );
        } else {
            // Cold days: the block layer sees every byte the day reads.
            assert!(reads[1] >= 4 << 20, "{label}: {reads:?}");
            assert!(reads[2] >= 5 << 20, "{label}: {reads:?}");
            assert!(reads[3] >= 4 << 20, "{label}: {reads:?}");
        }
        // The install's 8 MiB reach the device by the end of the install's flush.
        let wrote = x(days[0], "device_write_bytes").as_u64().unwrap();
        assert!(
            wrote >= 8 << 20,
            "{label}: the install wrote {wrote} bytes to the device"
        );
        // The day's time includes its flush.
        for d in &days {
            assert!(x(d, "time_ns").as_u64().unwrap() >= x(d, "flush_ns").as_u64().unwrap());
        }
        let metric = |n: &str| {
            run["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .find(|m| m["name"] == n)
                .unwrap_or_else(|| panic!("{label}: no {n}"))["value"]
                .as_f64()
                .unwrap()
        };
        assert!(metric("day_s") > 0.0 && metric("install_s") > 0.0);
        assert_eq!(metric("ops"), 16.0 + 3.0 * 8.0 + 3.0);
        let series = run["monitor"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == "replay.day_s")
            .unwrap_or_else(|| panic!("{label}: no replay.day_s series"));
        assert_eq!(series["points"].as_array().unwrap().len(), 3, "{label}");
    }

    // The report draws the time per day of every configuration.
    let html = s.path().join("r.html");
    let o = s.run(&["report", "-o", html.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&html).unwrap();
    assert!(text.contains("id=\"replay\""), "no replay section");
    for (label, _) in &configs {
        assert!(text.contains(label.as_str()), "{label}");
    }
}
