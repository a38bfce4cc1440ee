//! `iolab completions SHELL` and `iolab man [COMMAND]`: a shell's completion script and the
//! manual pages, both generated from the one command-line definition ([`crate::cli::command`],
//! every kind's commands included), so they cannot drift from `--help`.

use std::io::{self, Write};

use clap_mangen::roff::{bold, roman, Roff};

use crate::cli::{CompletionsArgs, ManArgs, ShellArg};
use crate::error::CliError;

pub fn completions(args: CompletionsArgs) -> Result<(), CliError> {
    let shell = match args.shell {
        ShellArg::Bash => clap_complete::Shell::Bash,
        ShellArg::Zsh => clap_complete::Shell::Zsh,
        ShellArg::Fish => clap_complete::Shell::Fish,
    };
    // Into memory first: the generator panics when a write fails, and stdout may be a pipe
    // whose reader has gone.
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut crate::cli::command(), "iolab", &mut script);
    crate::output::emit(|out| out.write_all(&script))
}

pub fn man(args: ManArgs) -> Result<(), CliError> {
    let cli = crate::cli::command();
    let Some(name) = &args.command else {
        return crate::output::emit(|out| iolab_page(cli, out));
    };
    let Some(sub) = cli.find_subcommand(name) else {
        let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
        return Err(CliError::usage(format!("iolab has no command `{name}`"))
            .with_hint(format!("one of: {}", names.join(", "))));
    };
    // iolab-run(1), as git names its commands' pages; the synopsis says `iolab run`.
    let sub = sub
        .clone()
        .name(format!("iolab-{name}"))
        .bin_name(format!("iolab {name}"));
    let page = clap_mangen::Man::new(sub).source(format!("iolab {}", env!("CARGO_PKG_VERSION")));
    crate::output::emit(|out| page.render(out))
}

/// iolab(1): the page clap_mangen makes, with the exit codes as EXIT STATUS (from their one
/// table, as `--help` has them) in place of the help's closing text.
fn iolab_page(cli: clap::Command, out: &mut dyn Write) -> io::Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(cli.after_help(None::<&str>)).render(&mut page)?;
    let page = String::from_utf8_lossy(&page);
    let mut roff = Roff::new();
    roff.control("SH", ["EXIT STATUS"]);
    for (code, meaning) in iolab_kind::cli::EXIT_CODES {
        roff.control("TP", [])
            .text([bold(code.to_string())])
            .text([roman(*meaning)]);
    }
    roff.control("SH", ["SEE ALSO"]).text([roman(
        "iolab-COMMAND(1) for each command (iolab man COMMAND); docs/ in the source tree.",
    )]);
    // Before the closing VERSION section, where man-pages(7) puts them.
    let at = page.find("\n.SH VERSION").map_or(page.len(), |i| i + 1);
    out.write_all(page[..at].as_bytes())?;
    out.write_all(roff.to_roff().as_bytes())?;
    out.write_all(page[at..].as_bytes())
}
