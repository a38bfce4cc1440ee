//! Checks of a lowered workload against its source: mistakes that the engine would otherwise
//! find only mid-run, reported instead at the flowop that makes them, with file:line:column.
//!
//! Each thread's loop is walked twice (the second pass starts with the fds the first left
//! open, as the thread's next loop does), expanding composite flowops, assuming every file
//! pick succeeds:
//!
//! - an `openfile` or `createfile` on an fd that is still open (filebench's "fd already open";
//!   a thread without `closefile` fails on its second loop);
//! - a random `read`/`write`/`aiowrite` whose `iosize` does not fit its working set (the
//!   flowop's `workingset`, or the size of the file open in its fd), when both are constants.
//!
//! The walk mirrors the engine's per-fd rules (`iolab-engine`'s worker): I/O flowops open a
//! file of their fileset into a closed fd on first use, `closefile` and `deletefile fd=N`
//! close it.

use std::collections::{HashMap, HashSet};

use iolab_workload::model::{FlowopKind, FlowopSpec, Workload};
use iolab_workload::rv::Rv;

use crate::ast::{find_attr, CommandKind, CompositeDef, FlowopUse, Parsed, Span};
use crate::error::{ErrorKind, WmlError, WmlErrors};

/// What to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Checks {
    /// Only what no command-line option can change (fds).
    Fds,
    /// Fds and I/O sizes against file sizes: call after the sizes are final (`--size-scale`).
    All,
}

/// Checks `w`, lowered from `parsed`, for mistakes that would otherwise stop the run midway:
/// an fd opened while still open, a random I/O larger than its working set. Call it on the
/// workload as it will run, after any change to its sizes (`--size-scale`); [`crate::lower`]
/// already checks the fds.
pub fn check(parsed: &Parsed, w: &Workload) -> Result<(), WmlErrors> {
    check_with(parsed, w, Checks::All)
}

pub(crate) fn check_with(parsed: &Parsed, w: &Workload, checks: Checks) -> Result<(), WmlErrors> {
    let composites: HashMap<String, &CompositeDef> = parsed
        .composites()
        .filter_map(|c| {
            let name = find_attr(&c.attrs, "name")?
                .value
                .as_ref()?
                .as_literal_str()?;
            Some((name, c))
        })
        .collect();
    let mut walker = Walker {
        file: &parsed.file,
        w,
        composites,
        checks,
        slots: HashMap::new(),
        pass: 0,
        reported: HashSet::new(),
        errors: Vec::new(),
    };
    let ast_processes = parsed.live_commands().iter().filter_map(|c| match &c.kind {
        CommandKind::DefineProcess(p) => Some(p),
        _ => None,
    });
    for (ast_p, p) in ast_processes.zip(&w.processes) {
        for (ast_t, t) in ast_p.threads.iter().zip(&p.threads) {
            walker.slots.clear();
            // A thread that finishes by count may never reach its second loop.
            let passes = if t.flowops.iter().any(finishes) { 1 } else { 2 };
            for pass in 0..passes {
                walker.pass = pass;
                for (a, f) in ast_t.flowops.iter().zip(&t.flowops) {
                    walker.flowop(a, f, 0);
                }
            }
        }
    }
    let mut errors = fileset_sizes(parsed, w);
    errors.append(&mut walker.errors);
    match WmlErrors::from_vec(errors) {
        Some(errors) => Err(errors),
        None => Ok(()),
    }
}

/// Filesets too large to lay out (more entries than the engine indexes, or an index larger
/// than the memory this process may have), located at their `entries`: refused here, before
/// anything is allocated, rather than aborting the run when the allocation fails.
fn fileset_sizes(parsed: &Parsed, w: &Workload) -> Vec<WmlError> {
    let mut errors = Vec::new();
    for spec in &w.filesets {
        let too_many = spec.entries > u64::from(u32::MAX) - 1 && !spec.single_file;
        let message = if too_many {
            format!(
                "fileset `{}`: {} entries; iolab lays out at most {} (filebench: 1048576)",
                spec.name,
                spec.entries,
                u32::MAX - 1
            )
        } else {
            match iolab_engine::fileset::check_memory(spec) {
                Ok(()) => continue,
                Err(e) => e.to_string(),
            }
        };
        let def = parsed.filesets().find(|d| {
            find_attr(&d.attrs, "name")
                .and_then(|a| a.value.as_ref()?.as_literal_str())
                .is_some_and(|n| n == spec.name)
        });
        let at = def.and_then(|d| {
            find_attr(&d.attrs, "entries").or_else(|| find_attr(&d.attrs, "leafdirs"))
        });
        let span = at.map_or_else(|| def.map_or(Span::default(), |d| d.span), |a| a.span);
        let vars: Vec<String> = def
            .map(|d| d.size_variables())
            .unwrap_or_default()
            .into_iter()
            .filter(|(attr, _)| *attr == "entries")
            .flat_map(|(_, vars)| vars)
            .collect();
        let hint = match vars.first() {
            Some(v) => format!("use fewer entries: `--set {v}=…`"),
            None => "use fewer entries".to_string(),
        };
        errors.push(
            WmlError::new(
                ErrorKind::OutOfRange,
                &parsed.file,
                span,
                at.map_or("define", |a| a.written.as_str()),
                message,
            )
            .with_hint(hint),
        );
    }
    errors
}

/// The workload starts no thread at all (no process, or `instances=0` on every process or
/// every thread), which the engine refuses: an error located where that is decided — the
/// first `instances=0`, else the `run` command — with what to add. `None` when a thread runs.
pub fn no_threads(parsed: &Parsed, w: &Workload) -> Option<WmlError> {
    let runs = w
        .processes
        .iter()
        .any(|p| p.instances > 0 && p.threads.iter().any(|t| t.instances > 0));
    if runs {
        return None;
    }
    let live = parsed.live_commands();
    let ast_processes = live.iter().filter_map(|c| match &c.kind {
        CommandKind::DefineProcess(p) => Some(p),
        _ => None,
    });
    // Lowering keeps the definitions' order; an `instances` that lowered to 0 is the cause.
    let zero = |attrs: &[crate::ast::Attr], n: u32| {
        (n == 0)
            .then(|| {
                find_attr(attrs, "instances")?
                    .value
                    .as_ref()
                    .map(|v| v.span)
            })
            .flatten()
    };
    let mut first_zero = None;
    for (ast_p, p) in ast_processes.zip(&w.processes) {
        let at = zero(&ast_p.attrs, p.instances).or_else(|| {
            ast_p
                .threads
                .iter()
                .zip(&p.threads)
                .find_map(|(ast_t, t)| zero(&ast_t.attrs, t.instances))
        });
        if at.is_some() {
            first_zero = first_zero.or(at);
        }
    }
    let (kind, span, message, hint) = match first_zero {
        Some(span) => (
            ErrorKind::OutOfRange,
            span,
            "the workload defines no threads that run: every process or thread has \
             `instances=0`",
            "give this one `instances=1` or more",
        ),
        None => (
            ErrorKind::MissingAttribute,
            live.iter()
                .rev()
                .find(|c| matches!(c.kind, CommandKind::Run(_) | CommandKind::Psrun { .. }))
                .or(live.last())
                .map_or(Span::new(1, 1), |c| c.span),
            "the workload defines no threads, so there is nothing to run",
            "define a process with a thread of flowops: \
             `define process name=p { thread name=t { flowop … } }`",
        ),
    };
    Some(WmlError::new(kind, &parsed.file, span, "", message).with_hint(hint))
}

fn finishes(f: &FlowopSpec) -> bool {
    match &f.kind {
        FlowopKind::FinishOnCount | FlowopKind::FinishOnBytes => true,
        FlowopKind::Composite(steps) => steps.iter().any(finishes),
        _ => false,
    }
}

/// Who opened an fd, for messages.
struct Opener {
    name: String,
    span: Span,
    pass: usize,
    fileset: usize,
}

struct Walker<'a> {
    file: &'a str,
    w: &'a Workload,
    composites: HashMap<String, &'a CompositeDef>,
    checks: Checks,
    /// Open fds of the thread being walked.
    slots: HashMap<u8, Opener>,
    pass: usize,
    /// (span, fd-or-size) already reported: once per flowop definition is enough.
    reported: HashSet<(Span, bool)>,
    errors: Vec<WmlError>,
}

impl Walker<'_> {
    fn flowop(&mut self, a: &FlowopUse, f: &FlowopSpec, depth: usize) {
        // Two iterations show everything a loop of the same steps would.
        let iters = f.iters.clamp(1, 2);
        if let FlowopKind::Composite(steps) = &f.kind {
            let Some(def) = self.composites.get(a.op.as_str()).copied() else {
                return;
            };
            if depth > 16 {
                return;
            }
            for _ in 0..iters {
                for (sa, sf) in def.flowops.iter().zip(steps) {
                    self.flowop(sa, sf, depth + 1);
                }
            }
            return;
        }
        for _ in 0..iters {
            self.step(a, f);
        }
    }

    fn step(&mut self, a: &FlowopUse, f: &FlowopSpec) {
        let slot = f.fd.unwrap_or(0);
        match f.kind {
            FlowopKind::OpenFile | FlowopKind::CreateFile => {
                if let Some(prev) = self.slots.get(&slot) {
                    self.already_open(a, f, slot, prev.name.clone(), prev.span, prev.pass);
                }
                if let Some(fs) = f.fileset {
                    self.open(f, a.span, slot, fs);
                }
            }
            FlowopKind::CloseFile => {
                self.slots.remove(&slot);
            }
            FlowopKind::DeleteFile if f.fd.is_some_and(|fd| fd > 0) => {
                self.slots.remove(&slot);
            }
            _ if f.kind.is_io() => {
                if !self.slots.contains_key(&slot) {
                    match f.fileset {
                        Some(fs) => self.open(f, a.span, slot, fs),
                        // Its opener ran dry: the engine counts a miss.
                        None => return,
                    }
                }
                let random = f.random || matches!(f.kind, FlowopKind::AioWrite);
                let sized = matches!(
                    f.kind,
                    FlowopKind::Read | FlowopKind::Write | FlowopKind::AioWrite
                );
                if random && sized && self.checks == Checks::All {
                    let fs = self.slots[&slot].fileset;
                    self.iosize_fits(a, f, fs);
                }
            }
            _ => {}
        }
    }

    fn open(&mut self, f: &FlowopSpec, span: Span, slot: u8, fileset: usize) {
        self.slots.insert(
            slot,
            Opener {
                name: f.name.clone(),
                span,
                pass: self.pass,
                fileset,
            },
        );
    }

    fn report(&mut self, span: Span, size: bool, err: WmlError) {
        if self.reported.insert((span, size)) {
            self.errors.push(err);
        }
    }

    fn already_open(
        &mut self,
        a: &FlowopUse,
        f: &FlowopSpec,
        slot: u8,
        opener: String,
        opener_span: Span,
        opened_in: usize,
    ) {
        let by = if opener_span == a.span && opened_in < self.pass {
            "by this flowop, on the thread's previous loop".to_string()
        } else if opener_span == a.span {
            "by this flowop, earlier in the same loop".to_string()
        } else if opened_in < self.pass {
            format!("by `{opener}` at {opener_span}, on the thread's previous loop")
        } else {
            format!("by `{opener}` at {opener_span}")
        };
        let shared = if f.fd.is_none() {
            " (flowops without `fd=` share fd 0)"
        } else {
            ""
        };
        let err = WmlError::new(
            ErrorKind::InvalidValue,
            self.file,
            a.span,
            a.op.clone(),
            format!(
                "flowop `{}`: fd {slot} is already open ({by})",
                f.name
            ),
        )
        .with_hint(format!(
            "close it first with `flowop closefile` on fd {slot}{shared}, or open into another `fd=`"
        ));
        self.report(a.span, false, err);
    }

    fn iosize_fits(&mut self, a: &FlowopUse, f: &FlowopSpec, fileset: usize) {
        let Some(iosize) = f.iosize.as_const() else {
            return;
        };
        let fs = &self.w.filesets[fileset];
        let (wss, what) = match f.workingset.as_const() {
            Some(ws) if ws > 0 => (ws, "its `workingset`".to_string()),
            Some(_) => match fs.size {
                Rv::Const(size) => (size, format!("the size of the files of `{}`", fs.name)),
                _ => return,
            },
            None => return,
        };
        let kind = f.kind.name();
        let (msg, hint) = if iosize == 0 {
            (
                format!("flowop `{}`: a random {kind} needs an `iosize`", f.name),
                "add `iosize=…` (e.g. `iosize=8k`)".to_string(),
            )
        } else if iosize > wss {
            (
                format!(
                    "flowop `{}`: iosize {iosize} does not fit the working set of {wss} bytes ({what})",
                    f.name
                ),
                format!(
                    "random I/O picks iosize-aligned offsets within the working set: \
                     use an iosize of at most {wss}, or larger files"
                ),
            )
        } else {
            return;
        };
        let err = WmlError::new(ErrorKind::OutOfRange, self.file, a.span, a.op.clone(), msg)
            .with_hint(hint);
        self.report(a.span, true, err);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{lower, parse_str, LowerOptions};

    /// Lowers `src` and runs every check: the errors as displayed.
    fn errors(src: &str) -> Vec<String> {
        let p = parse_str("t.f", src).unwrap();
        let w = match lower(&p, &LowerOptions::default()) {
            Ok(w) => w,
            Err(e) => return e.iter().map(|e| e.to_string()).collect(),
        };
        match check(&p, &w) {
            Ok(()) => Vec::new(),
            Err(e) => e.iter().map(|e| e.to_string()).collect(),
        }
    }

    const FS: &str = "define fileset name=fs,path=/tmp/x,entries=4,dirwidth=4,size=4k,prealloc\n";

    /// iolab issue 25: "defines no threads" came from the engine, without a location or a hint.
    #[test]
    fn a_workload_without_threads_is_located() {
        let none = |src: &str| {
            let p = parse_str("t.f", src).unwrap();
            no_threads(&p, &lower(&p, &LowerOptions::default()).unwrap()).map(|e| e.to_string())
        };
        assert_eq!(
            none(&format!("{FS}run 1\n")).unwrap(),
            "t.f:2:1: error: the workload defines no threads, so there is nothing to run\n  \
             hint: define a process with a thread of flowops: \
             `define process name=p { thread name=t { flowop … } }`"
        );
        let src = format!(
            "{FS}set $n = 0\ndefine process name=p,instances=$n {{ thread name=t {{ flowop hog name=h }} }}\n\
             define process name=q {{ thread name=t,instances=0 {{ flowop hog name=h }} }}\nrun 1\n"
        );
        let e = none(&src).unwrap();
        assert!(
            e.starts_with("t.f:3:33: error: the workload defines no threads that run"),
            "{e}"
        );
        assert!(
            e.ends_with("hint: give this one `instances=1` or more"),
            "{e}"
        );
        assert_eq!(none(&thread("flowop hog name=h")), None);
    }

    fn thread(body: &str) -> String {
        format!("{FS}define process name=p {{\n thread name=t {{\n{body}\n }}\n}}\nrun 1\n")
    }

    #[test]
    fn openfile_without_closefile_fails_on_the_second_loop() {
        let e = errors(&thread(
            "  flowop openfile name=o,filesetname=fs\n  flowop read name=r,iosize=4k",
        ));
        assert_eq!(
            e,
            vec![
                "t.f:4:3: error: flowop `o`: fd 0 is already open (by this flowop, on the \
                 thread's previous loop)\n  hint: close it first with `flowop closefile` on fd \
                 0 (flowops without `fd=` share fd 0), or open into another `fd=`"
            ]
        );
    }

    #[test]
    fn an_io_flowop_opens_the_fd_it_uses() {
        let e = errors(&thread(
            "  flowop read name=r,filesetname=fs,iosize=4k,fd=3\n  \
             flowop openfile name=o,filesetname=fs,fd=3\n  flowop closefile name=c,fd=3",
        ));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("t.f:5:3: error: flowop `o`: fd 3 is already open (by `r` at 4:3)")
        );
    }

    #[test]
    fn open_and_close_in_each_loop_is_fine() {
        let ok = thread(
            "  flowop openfile name=o,filesetname=fs,fd=1\n  flowop read name=r,fd=1,iosize=4k,random\n  \
             flowop closefile name=c,fd=1\n  flowop createfile name=cr,filesetname=fs\n  \
             flowop deletefile name=d,fd=0\n  flowop closefile name=c0",
        );
        assert_eq!(errors(&ok), Vec::<String>::new());
        // deletefile with fd>0 closes the fd it deletes.
        let ok =
            thread("  flowop openfile name=o,filesetname=fs,fd=2\n  flowop deletefile name=d,fd=2");
        assert_eq!(errors(&ok), Vec::<String>::new());
    }

    #[test]
    fn iters_and_composites_repeat_their_steps() {
        let e = errors(&thread("  flowop openfile name=o,filesetname=fs,iters=2"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains("(by this flowop, earlier in the same loop)"),
            "{e:?}"
        );
        let src = format!(
            "{FS}define flowop name=c {{\n flowop openfile name=inner,filesetname=fs,fd=5\n}}\n\
             define process name=p {{ thread name=t {{ flowop c name=use }} }}\nrun 1\n"
        );
        let e = errors(&src);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("t.f:3:2: error: flowop `inner`: fd 5"),
            "{e:?}"
        );
    }

    #[test]
    fn a_thread_that_finishes_after_one_loop_is_not_blamed() {
        let ok = thread(
            "  flowop openfile name=o,filesetname=fs\n  flowop finishoncount name=f,value=1",
        );
        assert_eq!(errors(&ok), Vec::<String>::new());
    }

    #[test]
    fn random_iosize_must_fit_the_working_set() {
        let e = errors(&thread(
            "  flowop read name=r,filesetname=fs,iosize=1m,random\n  flowop closefile name=c",
        ));
        assert_eq!(
            e,
            vec![
                "t.f:4:3: error: flowop `r`: iosize 1048576 does not fit the working set of 4096 \
                 bytes (the size of the files of `fs`)\n  hint: random I/O picks iosize-aligned \
                 offsets within the working set: use an iosize of at most 4096, or larger files"
            ]
        );
        let e = errors(&thread(
            "  flowop write name=w,filesetname=fs,iosize=8k,workingset=4k,random\n  \
             flowop closefile name=c",
        ));
        assert!(e[0].contains("(its `workingset`)"), "{e:?}");
        // Sequential I/O and a fitting size are fine; so is a random size (checked per op).
        let ok = thread(
            "  flowop read name=r,filesetname=fs,iosize=1m\n  \
             flowop write name=w,filesetname=fs,iosize=4k,random\n  flowop closefile name=c",
        );
        assert_eq!(errors(&ok), Vec::<String>::new());
    }

    #[test]
    fn the_working_set_is_the_file_open_in_the_fd() {
        let src = format!(
            "{FS}define file name=big,path=/tmp/x,size=1m,prealloc\n\
             define process name=p {{ thread name=t {{\n\
             flowop openfile name=o,filesetname=big,fd=1\n\
             flowop read name=r,filesetname=fs,fd=1,iosize=64k,random\n\
             flowop closefile name=c,fd=1\n}} }}\nrun 1\n"
        );
        assert_eq!(errors(&src), Vec::<String>::new());
    }

    #[test]
    fn lowering_checks_fds_but_not_sizes() {
        // Sizes may still change (--size-scale): only `check` compares them.
        let p = parse_str(
            "t.f",
            &thread(
                "  flowop read name=r,filesetname=fs,iosize=1m,random\n  flowop closefile name=c",
            ),
        )
        .unwrap();
        assert!(lower(&p, &LowerOptions::default()).is_ok());
        let p = parse_str("t.f", &thread("  flowop openfile name=o,filesetname=fs")).unwrap();
        let e = lower(&p, &LowerOptions::default()).unwrap_err();
        assert!(e.first().message.contains("already open"), "{e}");
    }
}
