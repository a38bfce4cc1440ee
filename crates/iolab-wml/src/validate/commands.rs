//! The commands section: what runs (`run`, `psrun`), what the prelude does (`sleep`, `echo`,
//! `system`, `eventgen`), what iolab ignores with a warning, and what is never reached.

use crate::ast::*;
use crate::env::StaticValue;
use crate::error::{ErrorKind, WarningKind};
use crate::schema;

use super::context::Ctx;
use super::values::describe;

/// Warns about the commands after the first `run`, `psrun` or `quit`: filebench stops there.
pub(super) fn never_executed(cx: &mut Ctx<'_>) {
    let p = cx.p;
    let live = p.live_commands();
    if let (Some(end), Some(after)) = (live.last(), p.commands.get(live.len())) {
        cx.warn(
            WarningKind::Suspicious,
            after.span,
            format!(
                "never executed: filebench stops reading the file at the `{}` on line {}",
                end.kind.keyword(),
                end.span.line
            ),
        );
    }
}

/// Checks a command that defines nothing: those of the other sections are theirs.
pub(super) fn visit(cx: &mut Ctx<'_>, c: &Command) {
    match &c.kind {
        CommandKind::SetNoUseStats => cx.warn(
            WarningKind::Ignored,
            c.span,
            "`set mode nousestats` has no effect in iolab",
        ),
        // A bare `run` is filebench's 60 s; `run 0` would measure nothing.
        CommandKind::Run(n) => {
            if let Some(n) = n {
                count(cx, n, "`run`", 1);
            }
        }
        CommandKind::Psrun { period, seconds } => {
            if let Some(p) = period {
                count(cx, p, "the `psrun` period", i64::MIN);
            }
            if let Some(s) = seconds {
                count(cx, s, "`psrun`", 1);
            }
        }
        CommandKind::Sleep(n) => count(cx, n, "`sleep`", 0),
        CommandKind::Debug(n) => count(cx, n, "`debug`", 0),
        CommandKind::Echo(t) | CommandKind::System(t) => text_vars(cx, t),
        CommandKind::Eventgen(attrs) => cx.attrs(attrs, schema::EVENTGEN_ATTRS, "`eventgen`", None),
        CommandKind::EnableMulti(attrs) => {
            cx.attrs(attrs, schema::MULTI_ATTRS, "`enable multi`", None);
            cx.warn(
                WarningKind::Ignored,
                c.span,
                "filebench's multi-client synchronisation is not supported; ignored",
            );
        }
        CommandKind::DoMultiSync(attrs) => {
            cx.attrs(attrs, schema::MULTISYNC_ATTRS, "`domultisync`", None);
            cx.warn(
                WarningKind::Ignored,
                c.span,
                "filebench's multi-client synchronisation is not supported; ignored",
            );
        }
        CommandKind::Set(_)
        | CommandKind::DefineFileset(_)
        | CommandKind::DefineComposite(_)
        | CommandKind::DefineProcess(_)
        | CommandKind::SetMode(_)
        | CommandKind::CreateFiles
        | CommandKind::EnableLathist
        | CommandKind::List(_)
        | CommandKind::Version
        | CommandKind::Quit
        | CommandKind::Ignored(_) => {}
    }
}

/// Variables in echo/system strings: filebench prints unknown ones literally, so warn.
fn text_vars(cx: &mut Ctx<'_>, t: &Text) {
    for p in &t.parts {
        if let TextPart::Var { name, span } = p {
            if !cx.known_vars.contains(name) {
                cx.warn(
                    WarningKind::Suspicious,
                    *span,
                    format!("`${name}` is not set; it is printed as is"),
                );
            }
        }
    }
}

/// A whole-number command argument (`run`, `sleep`, `debug`).
fn count(cx: &mut Ctx<'_>, v: &Value, what: &str, min: i64) {
    if !cx.value_refs(v, None) {
        return;
    }
    match cx.resolve(v, None) {
        StaticValue::Int(n) if n < min => {
            // Only the run time has a positive minimum.
            let (need, hint) = if min > 0 {
                (
                    format!("a run time of at least {min} s"),
                    Some("a run of 0 s measures nothing; a bare `run` runs 60 s".to_string()),
                )
            } else {
                ("a number that is not negative".to_string(), None)
            };
            cx.error(
                ErrorKind::OutOfRange,
                v.span,
                &n.to_string(),
                format!("{what} needs {need}, found {n}"),
            )
            .hint = hint;
        }
        StaticValue::Int(_) | StaticValue::Unknown => {}
        other => {
            cx.error(
                ErrorKind::InvalidValue,
                v.span,
                &other.describe(),
                format!("{what} needs a whole number, found {}", describe(v, &other)),
            );
        }
    }
}
