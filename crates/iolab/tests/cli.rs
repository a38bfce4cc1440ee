//! The command line itself: the exit codes `--help` and the man page list, `iolab recover`
//! with a journal that is not there, the shell completions and manual pages generated from
//! the one command-line definition, and the progress `iolab run` shows on a terminal, in a
//! log and with `-q`. Rootless: experiments on a directory in /var/tmp.

mod common;

use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::PathBuf;
use std::process::Stdio;

use common::{assert_clean_failure, run, stderr, stdout, Scratch};

/// Every code iolab exits with (README.md "Exit codes"; 130 is what an interrupted run returns,
/// see experiment.rs) and a word of what it means.
const CODES: &[(&str, &str)] = &[
    ("0", "success"),
    ("1", "failed"),
    ("2", "bad input"),
    ("130", "interrupted"),
];

#[test]
fn help_lists_every_exit_code() {
    let o = run(&["--help"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let help = stdout(&o);
    let (_, codes) = help
        .split_once("Exit codes:")
        .unwrap_or_else(|| panic!("no exit codes in: {help}"));
    let listed: Vec<&str> = codes
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.parse::<u8>().is_ok())
        .collect();
    assert_eq!(
        listed,
        CODES.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        "{help}"
    );
    for (code, meaning) in CODES {
        assert!(
            codes
                .lines()
                .any(|l| l.trim_start().starts_with(&format!("{code} ")) && l.contains(meaning)),
            "exit code {code} ({meaning}) not listed in: {help}"
        );
    }
    // From the one table the binary exits by: the same lines, in its words.
    for (code, meaning) in iolab_kind::cli::EXIT_CODES {
        assert!(
            codes.contains(&format!("{code:>3}  {meaning}")),
            "{code} {meaning}: {help}"
        );
    }
}

#[test]
fn recover_with_a_missing_journal_says_so() {
    let s = Scratch::new();
    let journal = s.path().join("no-such-journal.json");
    let o = s.run(&["recover", "--journal", journal.to_str().unwrap()]);
    assert_clean_failure(&o, 2, "no such journal");
    assert!(
        stderr(&o).contains(journal.to_str().unwrap()),
        "{}",
        stderr(&o)
    );
    assert!(!journal.exists(), "recover created {}", journal.display());

    // The default journal not being there is a machine with nothing to recover.
    let o = s.run(&["recover"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("nothing to recover: there is no journal"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn completions_name_the_commands_and_their_flags() {
    // What each shell's script spells a subcommand and a flag as.
    for (shell, command, flag) in [
        ("bash", "compare", "--journal"),
        ("zsh", "'compare:", "--journal=["),
        ("fish", "-a \"compare\"", "-l journal"),
    ] {
        let o = run(&["completions", shell]);
        assert!(o.status.success(), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.lines().count() > 100, "{shell}: {script}");
        for word in [command, flag, "micro", "resume", "recover", "completions"] {
            assert!(script.contains(word), "{shell}: no `{word}` in {script}");
        }
    }
    let o = run(&["completions", "powershell"]);
    assert_clean_failure(&o, 2, "invalid value 'powershell'");
}

/// `bash -n` parses the script without running it: a generated script bash cannot read would
/// complete nothing.
#[test]
fn bash_completion_is_valid_bash() {
    if !iolab_testkit::has_tool("bash") {
        return iolab_testkit::not_run("no bash");
    }
    let o = run(&["completions", "bash"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let check = std::process::Command::new("bash")
        .args(["-n", "-c", &stdout(&o)])
        .output()
        .unwrap();
    assert!(check.status.success(), "{}", stderr(&check));
}

#[test]
fn man_pages_cover_the_commands_and_the_exit_codes() {
    let o = run(&["man"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH iolab 1"), "{page}");
    for word in [
        "iolab\\-compare(1)",
        "iolab\\-micro(1)",
        "iolab\\-recover(1)",
    ] {
        assert!(page.contains(word), "no `{word}` in {page}");
    }
    let (_, status) = page
        .split_once(".SH \"EXIT STATUS\"")
        .unwrap_or_else(|| panic!("no EXIT STATUS in {page}"));
    for (code, meaning) in CODES {
        assert!(
            status.contains(&format!("\\fB{code}\\fR")) && status.contains(meaning),
            "{code}: {status}"
        );
    }

    let o = run(&["man", "run"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.contains(".TH iolab-run 1"), "{page}");
    for flag in ["\\-\\-resume", "\\-\\-db", "\\-\\-monitor\\-interval"] {
        assert!(page.contains(flag), "no `{flag}` in {page}");
    }

    let o = run(&["man", "frobnicate"]);
    assert_clean_failure(&o, 2, "no command `frobnicate`");
    assert!(stderr(&o).contains("compare"), "{}", stderr(&o));
}

/// `iolab completions bash | head -1`: the reader going away is not an error (and no panic).
#[test]
fn generated_text_survives_a_closed_stdout() {
    for args in [&["completions", "bash"][..], &["man"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = common::iolab()
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
}

/// Four configurations of at most three runs each, in order: the time budget (1 ms) ends each
/// one after its first run, so the planned budget of 4 × 3 runs shrinks by two as each stops
/// (12, 10, 8, 6). The null engine makes the runs quick.
fn four_short_configurations(s: &Scratch) -> PathBuf {
    let target = s.path().join("target");
    std::fs::create_dir_all(&target).unwrap();
    s.write(
        "progress.toml",
        &format!(
            r#"
name = "budget"
[factors]
bs = ["4k", "8k", "16k", "32k"]
[sut]
target = {{ kind = "directory", path = "{}" }}
[workload]
micro = {{ access = "write", sync = "normal", bs = "${{bs}}", size = "16m", engine = "null" }}
[repetitions]
min = 2
max = 3
time_budget = "1ms"
[procedure]
drop_caches = false
order = "sequential"
"#,
            target.display()
        ),
    )
}

/// The plain progress lines of `err`: (runs done, budget, the rest).
fn progress_lines(err: &str) -> Vec<(u64, u64, String)> {
    err.lines()
        .filter_map(|l| l.strip_prefix("progress: "))
        .map(|l| {
            let (done, rest) = l.split_once(" of ").unwrap_or_else(|| panic!("{l}"));
            let (budget, rest) = rest
                .split_once(" runs done")
                .unwrap_or_else(|| panic!("{l}"));
            (
                done.parse().unwrap(),
                budget.parse().unwrap(),
                rest.to_string(),
            )
        })
        .collect()
}

#[test]
fn a_log_gets_plain_lines_of_runs_done_of_the_budget_with_an_eta() {
    let s = Scratch::new();
    let f = four_short_configurations(&s);
    let o = s.run(&["run", f.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let shown = s.latest();
    for c in shown["configs"].as_array().unwrap() {
        assert_eq!(c["runs"].as_array().unwrap().len(), 1, "{c}");
    }
    // At the start of each run, once the runs done reach a further tenth of the budget, which
    // shrinks as the stopping rule ends configurations: 0 of 12 is no tenth; 1 of 10, 2 of 8
    // and 3 of 6 each are.
    let lines = progress_lines(&err);
    let counts: Vec<(u64, u64)> = lines.iter().map(|(d, b, _)| (*d, *b)).collect();
    assert_eq!(counts, [(1, 10), (2, 8), (3, 6)], "{err}");
    for (_, _, rest) in &lines {
        assert!(rest.starts_with(" · ETA "), "{err}");
    }
    assert!(!err.contains('\r') && !err.contains("\x1b["), "{err:?}");
    // The line of each run says which configuration it was.
    assert!(
        err.contains("config 4/4 bs=32k · run 1 of ≤3: ops_per_s"),
        "{err}"
    );
}

#[test]
fn quiet_shows_no_progress() {
    let s = Scratch::new();
    let f = four_short_configurations(&s);
    let o = s.run(&["run", f.to_str().unwrap(), "-q"]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(progress_lines(&err).is_empty(), "{err}");
    assert!(!err.contains("run 1 of"), "{err}");
    // The results are all there.
    assert!(stdout(&o).contains("bs=32k"), "{}", stdout(&o));
    assert_eq!(s.show()["configs"].as_array().unwrap().len(), 4);
}

/// A deterministic configuration (a cache simulation) is planned for one run, not `max`.
#[test]
fn the_budget_of_deterministic_configurations_is_one_run_each() {
    let s = Scratch::new();
    s.write(
        "t.csv",
        "time,obj_id,obj_size,op\n1,7,4096,read\n2,7,4096,read\n3,8,4096,write\n4,9,4096,read\n",
    );
    let f = s.write(
        "sweep.toml",
        "name = \"sweep\"\n[factors]\npolicy = [\"lru\", \"belady\", \"clock:m=4,i=4\"]\n\
         [workload]\ncachesim = { trace = \"t.csv\", size = 2, block_size = 1, policy = \"${policy}\" }\n\
         [repetitions]\nmetric = \"miss_ratio\"\n",
    );
    let o = s.run(&["run", f.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let counts: Vec<(u64, u64)> = progress_lines(&err)
        .iter()
        .map(|(d, b, _)| (*d, *b))
        .collect();
    assert_eq!(counts, [(1, 3), (2, 3)], "{err}");
}

/// A pseudo-terminal: (the side iolab writes to, the side the test reads).
fn pty() -> (OwnedFd, std::fs::File) {
    let (mut master, mut slave) = (-1, -1);
    // SAFETY: openpty writes two descriptors it opened into the two ints; no name buffer,
    // terminal settings or window size are passed.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned by nothing else.
    unsafe {
        (
            OwnedFd::from_raw_fd(slave),
            std::fs::File::from_raw_fd(master),
        )
    }
}

#[test]
fn a_terminal_gets_a_status_line_of_runs_done_of_the_budget_with_an_eta() {
    let s = Scratch::new();
    let f = four_short_configurations(&s);
    let (slave, mut master) = pty();
    let mut cmd = s.cmd();
    cmd.args(["run", f.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().unwrap();
    // Only the child holds the terminal now: reading ends (EIO) when it exits.
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            text.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&text).into_owned()
    });
    let status = child.wait().unwrap();
    let err = reader.join().unwrap();
    assert!(status.success(), "{err}");
    // Redrawn in place: runs done of the planned budget first, the ETA once a run has ended.
    for shown in [
        "\r\x1b[K0/12 runs · config 1/4 bs=4k · run 1 of ≤3 · ",
        "\r\x1b[K1/10 runs · ETA ",
        "\r\x1b[K2/8 runs · ETA ",
        "\r\x1b[K3/6 runs · ETA ",
    ] {
        assert!(err.contains(shown), "no {shown:?} in {err:?}");
    }
    assert!(
        progress_lines(&err).is_empty(),
        "no plain lines on a terminal: {err}"
    );
}
