//! A tool's raw output as a run keeps it ([`iolab_store::RunOutput`]s): `exec.json` (which
//! tool, its version, the parser's version, the command line, how it ended, its wall time
//! and CPU), `stdout`, `stderr`, `file:NAME` for each result file, and the server's
//! `server.stdout` / `server.stderr`. [`raw`] reads them back into the [`Raw`] a parser reads.

use iolab_store::RunOutput;
use iolab_supervise::Usage;
use iolab_tools::Raw;
use serde_json::{json, Value};

/// The name of the exec kind's own description of a run.
pub const META: &str = "exec.json";
/// The prefix of a result file's name.
pub const FILE: &str = "file:";

/// What the exec kind says about a run besides the tool's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Meta {
    pub tool: String,
    pub version: Option<String>,
    pub parser_version: u32,
    pub argv: Vec<String>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub wall_ns: u64,
    pub usage: Option<Usage>,
}

impl Meta {
    fn to_json(&self) -> Value {
        json!({
            "tool": self.tool,
            "version": self.version,
            "parser_version": self.parser_version,
            "argv": self.argv,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "timed_out": self.timed_out,
            "wall_ns": self.wall_ns,
            "usage": self.usage.map(|u| json!({
                "user_ns": u.user.as_nanos() as u64,
                "system_ns": u.system.as_nanos() as u64,
                "max_rss_kib": u.max_rss_kib,
                "voluntary_switches": u.voluntary_switches,
                "involuntary_switches": u.involuntary_switches,
            })),
        })
    }

    fn from_json(v: &Value) -> Option<Meta> {
        let u64_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
        let usage = v.get("usage").filter(|u| !u.is_null()).map(|u| Usage {
            user: std::time::Duration::from_nanos(u64_of(u, "user_ns").unwrap_or(0)),
            system: std::time::Duration::from_nanos(u64_of(u, "system_ns").unwrap_or(0)),
            max_rss_kib: u64_of(u, "max_rss_kib").unwrap_or(0),
            voluntary_switches: u64_of(u, "voluntary_switches").unwrap_or(0),
            involuntary_switches: u64_of(u, "involuntary_switches").unwrap_or(0),
        });
        Some(Meta {
            tool: v.get("tool")?.as_str()?.to_string(),
            version: v.get("version").and_then(Value::as_str).map(str::to_string),
            parser_version: u64_of(v, "parser_version")? as u32,
            argv: v
                .get("argv")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default(),
            exit_code: v.get("exit_code").and_then(Value::as_i64).map(|c| c as i32),
            signal: v.get("signal").and_then(Value::as_i64).map(|c| c as i32),
            timed_out: v.get("timed_out").and_then(Value::as_bool).unwrap_or(false),
            wall_ns: u64_of(v, "wall_ns").unwrap_or(0),
            usage,
        })
    }
}

/// The outputs a run keeps.
pub fn outputs(meta: &Meta, raw: &Raw, server: Option<(Vec<u8>, Vec<u8>)>) -> Vec<RunOutput> {
    let mut v = vec![
        RunOutput {
            name: META.into(),
            content: serde_json::to_vec_pretty(&meta.to_json()).unwrap_or_default(),
        },
        RunOutput {
            name: "stdout".into(),
            content: raw.stdout.clone(),
        },
        RunOutput {
            name: "stderr".into(),
            content: raw.stderr.clone(),
        },
    ];
    for (name, bytes) in &raw.files {
        v.push(RunOutput {
            name: format!("{FILE}{name}"),
            content: bytes.clone(),
        });
    }
    if let Some((out, err)) = server {
        v.push(RunOutput {
            name: "server.stdout".into(),
            content: out,
        });
        v.push(RunOutput {
            name: "server.stderr".into(),
            content: err,
        });
    }
    v
}

/// The run's description and raw output, from what it kept; `None` when it kept no
/// `exec.json` (not a run of the exec kind, or one that failed before its tool ran).
pub fn raw(outputs: &[RunOutput]) -> Option<(Meta, Raw)> {
    let meta = outputs.iter().find(|o| o.name == META)?;
    let meta = Meta::from_json(&serde_json::from_slice(&meta.content).ok()?)?;
    let get = |n: &str| {
        outputs
            .iter()
            .find(|o| o.name == n)
            .map(|o| o.content.clone())
            .unwrap_or_default()
    };
    let raw = Raw {
        exit_code: meta.exit_code,
        signal: meta.signal,
        timed_out: meta.timed_out,
        stdout: get("stdout"),
        stderr: get("stderr"),
        files: outputs
            .iter()
            .filter_map(|o| Some((o.name.strip_prefix(FILE)?.to_string(), o.content.clone())))
            .collect(),
    };
    Some((meta, raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_outputs_read_back_as_the_same_raw_output() {
        let meta = Meta {
            tool: "fio".into(),
            version: Some("fio-3.33".into()),
            parser_version: 3,
            argv: vec!["fio".into(), "--output-format=json".into()],
            exit_code: Some(1),
            signal: None,
            timed_out: false,
            wall_ns: 2_000_000_123,
            usage: Some(Usage {
                user: std::time::Duration::from_micros(1500),
                system: std::time::Duration::from_micros(2500),
                max_rss_kib: 4096,
                voluntary_switches: 7,
                involuntary_switches: 3,
            }),
        };
        let raw = Raw {
            exit_code: Some(1),
            signal: None,
            timed_out: false,
            stdout: b"fio: pid=1, err=28/file:/dev/full\n".to_vec(),
            stderr: vec![0xff, b'x'],
            files: vec![("fio.json".into(), b"{}".to_vec())],
        };
        let outs = outputs(&meta, &raw, Some((b"s".to_vec(), Vec::new())));
        assert_eq!(
            outs.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(),
            [
                "exec.json",
                "stdout",
                "stderr",
                "file:fio.json",
                "server.stdout",
                "server.stderr"
            ]
        );
        let (m, r) = raw_of(&outs);
        assert_eq!(m, meta);
        assert_eq!(r, raw);
        assert!(super::raw(&outs[1..]).is_none());
    }

    fn raw_of(o: &[RunOutput]) -> (Meta, Raw) {
        super::raw(o).expect("exec.json")
    }
}
