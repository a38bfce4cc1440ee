//! The command line itself: the exit codes `--help` and the man page list, `iolab recover`
//! with a journal that is not there, and the shell completions and manual pages generated
//! from the one command-line definition. Rootless.

mod common;

use std::process::Stdio;

use common::{assert_clean_failure, run, stderr, stdout, Scratch};

/// Every code iolab exits with (docs/experiments.md; 130 is what an interrupted run returns,
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
