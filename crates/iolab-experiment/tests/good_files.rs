//! Valid experiment files in tests/good_files/ and the plans they must give.

use std::path::{Path, PathBuf};
use std::time::Duration;

use iolab_engine::backend::EngineKind;
use iolab_experiment::{load, ExperimentPlan, Order};
use iolab_kind::table::from_stored;
use iolab_micro::kind::MicroTable;
use iolab_micro::{Access, MicroSpec, SyncMode};
use iolab_sut::target::{Target, TmpfsSize};
use iolab_wml::kind::WmlWorkload;
use serde_json::json;

fn file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/good_files")
        .join(name)
}

fn plan(name: &str) -> ExperimentPlan {
    load(&file(name)).unwrap_or_else(|e| panic!("{name}:\n{e}"))
}

fn labels(p: &ExperimentPlan) -> Vec<&str> {
    p.configs.iter().map(|c| c.label.as_str()).collect()
}

/// Configuration `i`'s WML workload, read again from the stored experiment.
fn wml(p: &ExperimentPlan, i: usize) -> WmlWorkload {
    let w = p.stored_workload(i);
    WmlWorkload::from_stored(w).unwrap_or_else(|e| panic!("not WML: {w}: {e}"))
}

/// Configuration `i`'s micro test, read again from the stored experiment.
fn micro(p: &ExperimentPlan, i: usize) -> MicroSpec {
    let w = p.stored_workload(i);
    from_stored::<MicroTable>(w).unwrap_or_else(|e| panic!("not a micro test: {w}: {e}"))
}

#[test]
fn ext4_journal_modes() {
    let p = plan("ext4_journal.toml");
    assert_eq!(p.name, "ext4 journal modes");
    assert_eq!(p.seed, 42);
    assert_eq!(
        labels(&p),
        [
            "journal=journal readers=1",
            "journal=ordered readers=1",
            "journal=ordered readers=100",
            "journal=writeback readers=1",
            "journal=writeback readers=100",
        ]
    );
    let mounts: Vec<String> = p
        .configs
        .iter()
        .map(|c| c.sut_spec.fs.as_ref().unwrap().mount_options.clone())
        .collect();
    assert_eq!(
        mounts,
        [
            "data=journal,noatime",
            "data=ordered,noatime",
            "data=ordered,noatime",
            "data=writeback,noatime",
            "data=writeback,noatime",
        ]
    );
    let fs = p.configs[3].sut.fs.as_ref().unwrap();
    assert_eq!(fs.mount.get("data"), Some("writeback"));
    assert_eq!(p.configs[2].factors["readers"], json!(100));
    assert_eq!(p.configs[2].factors["journal"], json!("ordered"));
    assert_eq!(p.configs[0].sut.tunables.len(), 1);

    let w = wml(&p, 2);
    assert_eq!(w.source, "builtin:webserver");
    assert!(w.parsed.filesets().next().is_some());
    // Read again from the stored experiment, where `set` is a table: its keys in order.
    assert_eq!(
        w.settings.sets,
        [
            ("nfiles".to_string(), "100".to_string()),
            ("nthreads".to_string(), "100".to_string())
        ]
    );
    let nthreads = |i| {
        let w = wml(&p, i);
        w.settings
            .sets
            .iter()
            .find(|(k, _)| k == "nthreads")
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(nthreads(0), "1");
    assert_eq!(w.settings.duration, Some(Duration::from_secs(30)));
    assert_eq!(w.settings.size_scale, Some(0.01));
    assert!(!w.settings.pick_random);

    let r = &p.repetitions;
    assert_eq!((r.rule.min, r.rule.max, r.rule.target), (3, 10, 0.1));
    assert_eq!(r.time_budget, Some(Duration::from_secs(1800)));
    assert_eq!(p.procedure.order, Order::Sequential);
    assert_eq!(p.procedure.warmup, 1);
    assert!(p.procedure.fresh_fs && p.procedure.drop_caches);

    let res = &p.resolved;
    assert_eq!(res["name"], json!("ext4 journal modes"));
    assert_eq!(res["factors"][1]["name"], json!("readers"));
    assert_eq!(res["factors"][1]["levels"], json!([1, 100]));
    assert_eq!(
        res["exclude"],
        json!([{ "journal": "journal", "readers": 100 }])
    );
    assert_eq!(res["configs"].as_array().unwrap().len(), 5);
    assert_eq!(
        res["configs"][4]["sut"]["fs"]["mount_options"],
        json!("data=writeback,noatime")
    );
    assert_eq!(res["configs"][4]["workload"]["set"]["nthreads"], json!(100));
    assert_eq!(res["procedure"]["order"], json!("sequential"));
    assert_eq!(res["repetitions"]["metric"], json!("ops_per_s"));
}

#[test]
fn micro_cases_substitute_typed_values() {
    let p = plan("micro_cases.toml");
    assert_eq!(
        labels(&p),
        [
            "case=seqwrite threads=1",
            "case=seqwrite threads=4",
            "case=randwrite-fsync threads=1",
            "case=randwrite-fsync threads=4",
        ]
    );
    let threads: Vec<u32> = (0..4).map(|i| micro(&p, i).threads).collect();
    assert_eq!(threads, [1, 4, 1, 4]);
    let m = micro(&p, 3);
    assert_eq!((m.access, m.sync), (Access::Randwrite, SyncMode::Fsync));
    assert_eq!(micro(&p, 0).access, Access::Write);
    assert_eq!((m.bs, m.size), (4096, 64 << 20));
    assert_eq!(m.time_limit, Some(Duration::from_secs(10)));
    assert_eq!(m.seed, 0, "the runner seeds each run");
    assert!(m.validate().is_ok());
    assert_eq!(
        p.configs[3].factors["case"],
        json!({ "name": "randwrite-fsync", "access": "randwrite", "sync": "fsync" })
    );
    assert_eq!(
        p.resolved["configs"][1]["workload"]["micro"]["threads"],
        json!(4)
    );
}

#[test]
fn wml_file_by_relative_path_on_a_directory() {
    let p = plan("wml_file.toml");
    assert_eq!(p.name, "wml_file");
    assert_eq!(labels(&p), ["default"]);
    let w = wml(&p, 0);
    let want = std::fs::canonicalize(file("../../../../workloads/varmail.f")).unwrap();
    assert_eq!(Path::new(&w.source), want);
    let text = std::fs::read_to_string(&want).unwrap();
    assert_eq!(
        *w.parsed,
        iolab_wml::parse_str(&want.display().to_string(), &text).unwrap(),
        "parsed once, from the file"
    );
    assert!(w.settings.pick_random);
    assert_eq!(w.settings.duration, None, "the file's own `run` applies");
    match &p.configs[0].sut.target {
        Target::Directory(d) => assert!(d.path.is_dir(), "{}", d.path.display()),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p.resolved["configs"][0]["workload"]["source"],
        json!(w.source)
    );
}

#[test]
fn wml_engine_depth_and_system_keys() {
    let p = plan("wml_engines.toml");
    assert_eq!(labels(&p), ["engine=psync", "engine=io_uring"]);
    let engines: Vec<Option<EngineKind>> = (0..2).map(|i| wml(&p, i).settings.engine).collect();
    assert_eq!(
        engines,
        [Some(EngineKind::Psync), Some(EngineKind::IoUring)]
    );
    assert_eq!(wml(&p, 1).settings.iodepth, Some(1));
    assert!(!wml(&p, 0).settings.run_system);
    assert_eq!(
        p.resolved["configs"][1]["workload"]["engine"],
        json!("io_uring")
    );
}

#[test]
fn whole_table_levels() {
    let p = plan("whole_table.toml");
    assert_eq!(labels(&p), ["target=small", "target=large"]);
    let sizes: Vec<TmpfsSize> = p
        .configs
        .iter()
        .map(|c| match &c.sut.target {
            Target::Tmpfs(t) => t.size,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        sizes,
        [TmpfsSize::Bytes(256 << 20), TmpfsSize::Bytes(2 << 30)]
    );
    assert_eq!(micro(&p, 0).engine, Some(EngineKind::Null));
}

#[test]
fn loading_changes_nothing_on_disk() {
    // The stand-in run directory must not be created by checking a WML workload.
    plan("wml_file.toml");
    plan("ext4_journal.toml");
    assert!(!Path::new("/nonexistent-iolab-dir").exists());
}
