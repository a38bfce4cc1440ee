//! What to run: the command line, its working directory, its environment and where its
//! output goes.

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::error::Error;

/// Where the command's stdout or stderr goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Output {
    /// Where iolab's own goes (the terminal, usually).
    #[default]
    Inherit,
    /// Nowhere (/dev/null).
    Null,
    /// A file, created or truncated. stdout and stderr may name the same file: both then
    /// write, interleaved as the command writes them, through one open file.
    File(PathBuf),
}

/// One command to run: argv (the program first, found through $PATH as a shell would),
/// optional working directory, environment changes, and where stdout and stderr go.
/// stdin is iolab's own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    argv: Vec<OsString>,
    cwd: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    env_clear: bool,
    stdout: Output,
    stderr: Output,
    own_group: bool,
}

impl Job {
    /// The command line: the program, then its arguments.
    pub fn new<I, S>(argv: I) -> Job
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Job {
            argv: argv.into_iter().map(Into::into).collect(),
            cwd: None,
            env: Vec::new(),
            env_clear: false,
            stdout: Output::Inherit,
            stderr: Output::Inherit,
            own_group: false,
        }
    }

    /// Run it in `dir` (checked to be a directory before anything starts).
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Job {
        self.cwd = Some(dir.into());
        self
    }

    /// Set one environment variable (on top of iolab's environment, unless
    /// [`env_clear`](Job::env_clear)).
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Job {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Start from an empty environment: only the variables given with [`env`](Job::env).
    pub fn env_clear(mut self) -> Job {
        self.env_clear = true;
        self
    }

    pub fn stdout(mut self, to: Output) -> Job {
        self.stdout = to;
        self
    }

    pub fn stderr(mut self, to: Output) -> Job {
        self.stderr = to;
        self
    }

    /// Run the command in a process group of its own. The terminal's Ctrl-C then no longer
    /// reaches it (only iolab decides when it stops), and [`OnStop::Terminate`] signals the
    /// whole group — the worker processes a benchmark tool forks too.
    ///
    /// [`OnStop::Terminate`]: crate::OnStop::Terminate
    pub fn own_process_group(mut self) -> Job {
        self.own_group = true;
        self
    }

    pub fn argv(&self) -> &[OsString] {
        &self.argv
    }

    pub(crate) fn has_own_group(&self) -> bool {
        self.own_group
    }

    /// The program as messages show it.
    pub fn program(&self) -> String {
        self.argv
            .first()
            .map_or_else(String::new, |p| p.to_string_lossy().into_owned())
    }

    /// Checks everything that can be checked before anything starts, opens the output
    /// files and builds the command to spawn.
    pub(crate) fn prepare<E>(&self) -> Result<Command, Error<E>> {
        let Some((program, args)) = self.argv.split_first() else {
            return Err(Error::NoCommand);
        };
        let mut cmd = Command::new(program);
        cmd.args(args);
        if let Some(dir) = &self.cwd {
            // Checked here: a missing directory would otherwise fail the spawn with the
            // same ENOENT as a missing program.
            match std::fs::metadata(dir) {
                Ok(m) if m.is_dir() => {}
                Ok(_) => {
                    return Err(Error::Cwd {
                        path: dir.clone(),
                        source: std::io::Error::from_raw_os_error(libc::ENOTDIR),
                    })
                }
                Err(source) => {
                    return Err(Error::Cwd {
                        path: dir.clone(),
                        source,
                    })
                }
            }
            cmd.current_dir(dir);
        }
        if self.env_clear {
            cmd.env_clear();
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str())));
        let out = open(&self.stdout, "stdout")?;
        let err = match (&self.stdout, &self.stderr, &out) {
            (Output::File(a), Output::File(b), Some(f)) if a == b => {
                Some(f.try_clone().map_err(|source| Error::Capture {
                    path: b.clone(),
                    stream: "stderr",
                    source,
                })?)
            }
            _ => open(&self.stderr, "stderr")?,
        };
        cmd.stdout(stdio(&self.stdout, out));
        cmd.stderr(stdio(&self.stderr, err));
        if self.own_group {
            cmd.process_group(0);
        }
        // The command runs as it would from a terminal: the signals that stop it (Ctrl-C,
        // Ctrl-\, the supervisor's SIGTERM, a hang-up) act on it even when iolab was started
        // with them ignored, as a background job of a non-interactive shell is (SIGINT and
        // SIGQUIT), and an ignored disposition would pass through exec to the command.
        // SAFETY: only signal(2), which is async-signal-safe, runs between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                for sig in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                    if libc::signal(sig, libc::SIG_DFL) == libc::SIG_ERR {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        Ok(cmd)
    }
}

fn open<E>(to: &Output, stream: &'static str) -> Result<Option<File>, Error<E>> {
    match to {
        Output::File(p) => File::create(p).map(Some).map_err(|source| Error::Capture {
            path: p.clone(),
            stream,
            source,
        }),
        _ => Ok(None),
    }
}

fn stdio(to: &Output, file: Option<File>) -> Stdio {
    match (to, file) {
        (_, Some(f)) => Stdio::from(f),
        (Output::Null, None) => Stdio::null(),
        _ => Stdio::inherit(),
    }
}
