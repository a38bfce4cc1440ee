//! `iolab mdtest`: mdtest's own command line (`-n 1000 -u -F -d DIR …`), so that an mdtest
//! line pastes in; `-i N` runs N iterations (one stored run each) through the experiment
//! runner; the output is mdtest's summary table with the aggregates of the ranks.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Command};
use iolab_kind::cli::{self, CommandError, Counting, Host, RunArgs, Subcommand};
use iolab_kind::{CommandConfig, CommandPlan, Origin, Outputs};
use serde_json::json;

use crate::kind::{in_mdtest_flags, MdtestTable, MdtestWorkload};
use crate::options::{MdtestSpec, Preset};
use crate::output::{self, Iteration, FORMATS};

/// `iolab mdtest`.
pub struct MdtestCommand;

/// mdtest's flags that take a number: (flag, id, help).
const NUMBERS: &[(char, &str, &str)] = &[
    ('n', "items", "Items (files and directories) per rank [default: 1000]"),
    ('N', "stride", "Stride between ranks for stat, read and remove [default: 0]"),
    ('w', "write_bytes", "Bytes written to each file after it is created"),
    ('e', "read_bytes", "Bytes read from each file"),
    ('W', "stonewall", "Stonewall timer in seconds: creating stops, then every rank goes on to the most items any rank made"),
    ('i', "iterations", "Iterations (one stored run each) [default: 1]"),
    ('b', "branching", "Branching factor of the directory tree"),
    ('z', "depth", "Depth of the directory tree (only 0, the flat tree)"),
];

/// mdtest's flags without a value: (flag, id, help).
const SWITCHES: &[(char, &str, &str)] = &[
    ('u', "unique_dir", "A directory per rank"),
    ('F', "files_only", "Files only"),
    ('D', "dirs_only", "Directories only"),
    ('y', "sync", "fsync each file after writing it"),
    (
        'C',
        "create",
        "Only create (with -T, -E, -r: those phases only)",
    ),
    ('T', "stat", "Only stat"),
    ('E', "read", "Only read"),
    ('r', "remove", "Only remove"),
    (
        'L',
        "leaf_only",
        "Items at the tree's leaves only (the flat tree's one level: no change)",
    ),
    (
        'P',
        "print_rate_and_time",
        "Accepted; the summary gives rates, the JSON times too",
    ),
    ('v', "verbose", "Accepted and ignored"),
];

impl Subcommand for MdtestCommand {
    fn command(&self) -> Command {
        let mut cmd = Command::new("mdtest")
            .about("Run mdtest's metadata phases: create, stat, read and remove N items per rank")
            .after_help(
                "Takes mdtest's own flags, so an mdtest line pastes in:\n  iolab mdtest -n 10000 -u -F -d /mnt/test\n  iolab mdtest -n 1000 -F -w 3901 -e 3901 -d /mnt/test -i 3\n  iolab mdtest --preset mdtest-easy -n 100000 -W 300 -d /mnt/test\n\nUnder MPI (mpirun -np N iolab mdtest …) each rank does its items; the phases start at\nbarriers. Items live in DIR/test-dir.0-0/mdtest_tree.0 (or mdtest_tree.RANK.0 with -u),\nas file.mdtest.RANK.I and dir.mdtest.RANK.I; -C alone leaves them there.",
            )
            .arg(
                Arg::new("dir")
                    .short('d')
                    .long("dir")
                    .value_name("DIR")
                    .required(true)
                    .value_parser(clap::value_parser!(PathBuf))
                    .help("Directory the test directory is made in (must exist)"),
            )
            .arg(
                Arg::new("api")
                    .short('a')
                    .value_name("API")
                    .value_parser(["POSIX"])
                    .help("Backend: POSIX only"),
            )
            .arg(
                Arg::new("preset")
                    .long("preset")
                    .value_name("PRESET")
                    .value_parser(["mdtest-easy", "mdtest-hard"])
                    .help("IO500's mdtest-easy (-F -u, empty files) or mdtest-hard (-F -w 3901 -e 3901, one directory)"),
            );
        for &(c, id, help) in NUMBERS {
            cmd = cmd.arg(
                Arg::new(id)
                    .short(c)
                    .value_name("N")
                    .value_parser(clap::value_parser!(u64))
                    .help(help),
            );
        }
        for &(c, id, help) in SWITCHES {
            let action = if c == 'v' {
                ArgAction::Count
            } else {
                ArgAction::SetTrue
            };
            cmd = cmd.arg(Arg::new(id).short(c).action(action).help(help));
        }
        cli::run_args(
            cmd.arg(cli::seed_arg(
                "Seed of the run (mdtest's items are not random)",
            )),
            FORMATS,
        )
    }

    fn run(&self, m: &ArgMatches, host: &mut dyn Host) -> Result<(), CommandError> {
        let (spec, iterations) = spec_of(m)?;
        let args = RunArgs::from_matches(m, FORMATS);
        let name = format!(
            "mdtest -n {}{}{}",
            spec.items,
            if spec.unique_dir { " -u" } else { "" },
            if spec.preset == Preset::None {
                String::new()
            } else {
                format!(" --preset {}", spec.preset.name())
            }
        );
        spec.validate().map_err(|e| {
            CommandError::usage(in_mdtest_flags(&iolab_util::setting::Worded::phrase(&e)))
        })?;
        let outputs = Outputs::default();
        let workload_json =
            json!({ crate::kind::KEY: iolab_kind::table::options_json::<MdtestTable>(&spec) });
        let configs = (1..=iterations)
            .map(|i| CommandConfig {
                label: if iterations == 1 {
                    "default".into()
                } else {
                    format!("iteration-{i}")
                },
                factors: Default::default(),
                workload: outputs.wrap(MdtestWorkload::new(spec.clone(), Origin::CommandLine)),
                workload_json: workload_json.clone(),
            })
            .collect();
        let plan = CommandPlan {
            name,
            source: "iolab mdtest".into(),
            dir: spec.dir.clone(),
            seed: spec.seed,
            configs,
            factors: Vec::new(),
        };
        let runs = iolab_kind::Runs { plan, outputs };
        let done = cli::run(
            host,
            runs,
            &args,
            &mut Counting { unit: "item" },
            "interrupted; the items made so far are left in the test directory",
        )?;
        let stored = done.first().and_then(|s| s.end.stored);
        let findings: Vec<_> = done.iter().flat_map(|s| s.end.findings.clone()).collect();
        let its: Vec<Iteration> = done.into_iter().map(Iteration::from).collect();
        host.emit(&mut |out| output::write(args.format, &its, out))?;
        if args.human() {
            host.epilogue(&findings, stored, &args.db);
        }
        Ok(())
    }
}

/// The spec and the iterations of an mdtest command line.
pub fn spec_of(m: &ArgMatches) -> Result<(MdtestSpec, u64), CommandError> {
    let mut spec = MdtestSpec::with_defaults(cli::dir_of(m), cli::seed_of(m));
    let num = |id: &str| m.get_one::<u64>(id).copied();
    let on = |id: &str| m.get_flag(id);
    if let Some(n) = num("items") {
        if n == 0 {
            return Err(CommandError::usage("-n 0 runs nothing")
                .with_hint("give the items per rank, e.g. -n 1000"));
        }
        spec.items = n;
    }
    spec.stride = num("stride");
    spec.write_bytes = num("write_bytes").unwrap_or(0);
    spec.read_bytes = num("read_bytes").unwrap_or(0);
    if let Some(w) = num("stonewall").filter(|&w| w > 0) {
        spec.stonewall = Some(Duration::from_secs(w));
    }
    spec.branching = num("branching").unwrap_or(1).max(1);
    spec.depth = num("depth").unwrap_or(0);
    spec.unique_dir = on("unique_dir");
    spec.files_only = on("files_only");
    spec.dirs_only = on("dirs_only");
    spec.sync = on("sync");
    let only: u64 = ["create", "stat", "read", "remove"]
        .iter()
        .enumerate()
        .filter(|(_, id)| on(id))
        .fold(0, |b, (i, _)| b | 1 << i);
    if only != 0 {
        spec.phases = only;
    }
    if let Some(p) = m.get_one::<String>("preset") {
        spec.preset = Preset::parse(p).unwrap_or(Preset::None);
    }
    let iterations = num("iterations").unwrap_or(1);
    if iterations == 0 {
        return Err(CommandError::usage("-i 0 runs nothing").with_hint("give -i 1 or more"));
    }
    Ok((spec, iterations))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(MdtestSpec, u64), String> {
        let m = MdtestCommand
            .command()
            .try_get_matches_from(args)
            .map_err(|e| e.to_string())?;
        spec_of(&m).map_err(|e| e.message)
    }

    #[test]
    fn an_mdtest_line_pastes_in() {
        let (s, i) = parse(&[
            "mdtest", "-n", "500", "-u", "-N", "1", "-w", "3901", "-e", "3901", "-F", "-d", "/tmp",
            "-i", "3", "-y", "-C", "-T", "-W", "5", "-P", "-v", "-v", "-a", "POSIX",
        ])
        .unwrap();
        assert_eq!(i, 3);
        assert_eq!(s.items, 500);
        assert!(s.unique_dir && s.files_only && s.sync && !s.dirs_only);
        assert_eq!(s.stride, Some(1));
        assert_eq!((s.write_bytes, s.read_bytes), (3901, 3901));
        assert_eq!(s.phases, 0b0011);
        assert_eq!(s.stonewall, Some(Duration::from_secs(5)));
        assert_eq!(s.dir, PathBuf::from("/tmp"));
        let (s, _) = parse(&["mdtest", "-n1000", "-d/tmp", "-E", "-r"]).unwrap();
        assert_eq!((s.items, s.phases), (1000, 0b1100));
    }

    #[test]
    fn an_unknown_flag_is_named() {
        let e = parse(&["mdtest", "-n", "5", "-S", "-d", "/tmp"]).unwrap_err();
        assert!(e.contains("'-S'"), "{e}");
        let e = parse(&["mdtest", "-n", "5", "-d", "/tmp", "-a", "MPIIO"]).unwrap_err();
        assert!(e.contains("MPIIO"), "{e}");
    }

    #[test]
    fn errors_name_mdtests_flags() {
        let (s, _) = parse(&["mdtest", "-n", "5", "-d", "/tmp", "-e", "10"]).unwrap();
        let e = s.validate().unwrap_err();
        let text = in_mdtest_flags(&iolab_util::setting::Worded::phrase(&e));
        assert!(text.starts_with("-e 10 is more than -w 0"), "{text}");
    }
}
