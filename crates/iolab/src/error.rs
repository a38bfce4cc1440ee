//! The one error path at the edge: every failure becomes a message, an optional hint and an
//! exit code.

use std::fmt::Display;

/// Exit code for a failed run.
pub const EXIT_FAILED: u8 = 1;
/// Exit code for bad input or usage.
pub const EXIT_USAGE: u8 = 2;
/// Exit code after Ctrl-C / SIGTERM (128 + SIGINT, as shells report it).
pub const EXIT_INTERRUPTED: u8 = 130;

#[derive(Debug)]
pub struct CliError {
    message: String,
    hint: Option<String>,
    code: u8,
    /// The message is a located diagnostic that says "error:" itself.
    located: bool,
}

impl CliError {
    pub fn usage(message: impl Display) -> CliError {
        CliError {
            message: message.to_string(),
            hint: None,
            code: EXIT_USAGE,
            located: false,
        }
    }

    /// Bad input reported as located diagnostics, each already `FILE:LINE:COL: error: …`
    /// (the shape compilers print, which editors jump to): printed as they are, without a
    /// second "error:" in front.
    pub fn located(diagnostics: impl Display) -> CliError {
        CliError {
            located: true,
            ..CliError::usage(diagnostics)
        }
    }

    pub fn failed(message: impl Display) -> CliError {
        CliError {
            message: message.to_string(),
            hint: None,
            code: EXIT_FAILED,
            located: false,
        }
    }

    pub fn interrupted(message: impl Display) -> CliError {
        CliError {
            message: message.to_string(),
            hint: None,
            code: EXIT_INTERRUPTED,
            located: false,
        }
    }

    pub fn with_hint(mut self, hint: impl Display) -> CliError {
        self.hint = Some(hint.to_string());
        self
    }

    pub fn exit_code(&self) -> u8 {
        self.code
    }

    pub fn print(&self) {
        if self.located {
            say!("{}", self.message);
        } else {
            say!("iolab: error: {}", self.message);
        }
        if let Some(h) = &self.hint {
            say!("  hint: {h}");
        }
    }
}

impl From<iolab_engine::EngineError> for CliError {
    fn from(e: iolab_engine::EngineError) -> CliError {
        let hint = e.hint();
        let mut err = if e.is_bad_input() {
            CliError::usage(&e)
        } else {
            CliError::failed(format!("run failed: {e}"))
        };
        if let Some(h) = hint {
            err = err.with_hint(h);
        }
        err
    }
}
