//! Options declared once: a workload kind's table of [`OptionDef`]s gives its command-line
//! flags (`--NAME VALUE`, underscores as dashes), its `[workload] KIND = { NAME = VALUE }`
//! keys and the rows of its docs (tests keep those in step). Each option says how its value
//! is written ([`OptionKind`]) and how a parsed value goes into the kind's spec (`apply`).

use std::path::Path;
use std::time::Duration;

/// How an option's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// One of these names.
    Choice(&'static [&'static str]),
    /// A size: `4k`, `64m`, or a number of bytes.
    Size,
    /// A whole number in `min..=max`.
    Count { min: u64, max: u64 },
    /// A duration of at least [`MIN_DURATION`]: `500ms`, `30s`, `2m`.
    Duration,
    /// On or off: a bare `--NAME` (or `--NAME false`) on the command line, `true`/`false` in
    /// a file.
    Flag,
    /// Some of these names, comma-separated (aliases are other spellings, e.g. numbers); the
    /// value is a bit set over the names' positions, so a spec reads them in this order.
    Set {
        names: &'static [&'static str],
        /// What one name stands for, in messages: `test`.
        what: &'static str,
    },
    /// A file's path, as given (spaces included); in an experiment file a string, relative to
    /// the file's directory.
    Path,
    /// Text whose meaning is the kind's to check when it validates its spec (a path, a
    /// policy with parameters, a device model); in a file a string, or an integer taken as
    /// its digits.
    Text,
}

/// A parsed option value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionValue {
    Name(&'static str),
    Bytes(u64),
    Count(u64),
    Duration(Duration),
    Flag(bool),
    /// Bit `i` set: `names[i]` was given.
    Set(u64),
    /// A path ([`intern_path`]ed).
    Path(&'static Path),
    /// The text as given ([`intern`]ed).
    Text(&'static str),
}

impl OptionValue {
    /// The [`OptionValue::Set`] of the names at these positions.
    pub fn set_of(positions: impl IntoIterator<Item = usize>) -> OptionValue {
        OptionValue::Set(
            positions
                .into_iter()
                .filter(|&i| i < 64)
                .fold(0, |bits, i| bits | 1 << i),
        )
    }

    /// The name of a [`OptionValue::Name`] (empty otherwise).
    pub fn name(self) -> &'static str {
        match self {
            OptionValue::Name(n) => n,
            _ => "",
        }
    }

    /// The text of a [`OptionValue::Text`] (empty otherwise).
    pub fn text(self) -> &'static str {
        match self {
            OptionValue::Text(t) => t,
            _ => "",
        }
    }

    /// A [`OptionValue::Count`] as a `u32`, saturating (0 otherwise).
    pub fn count_u32(self) -> u32 {
        match self {
            OptionValue::Count(n) => u32::try_from(n).unwrap_or(u32::MAX),
            _ => 0,
        }
    }

    /// The number of a [`OptionValue::Count`] (0 otherwise).
    pub fn count(self) -> u64 {
        match self {
            OptionValue::Count(n) => n,
            _ => 0,
        }
    }

    /// The bytes of a [`OptionValue::Bytes`] (0 otherwise).
    pub fn bytes(self) -> u64 {
        match self {
            OptionValue::Bytes(n) => n,
            _ => 0,
        }
    }

    /// Whether a [`OptionValue::Flag`] is on (false otherwise).
    pub fn flag(self) -> bool {
        matches!(self, OptionValue::Flag(true))
    }

    /// The path of a [`OptionValue::Path`] (`None` otherwise).
    pub fn path(self) -> Option<&'static Path> {
        match self {
            OptionValue::Path(p) => Some(p),
            _ => None,
        }
    }

    /// The positions of the names a [`OptionValue::Set`] holds, in order (none otherwise).
    pub fn set_members(self) -> impl Iterator<Item = usize> {
        let bits = match self {
            OptionValue::Set(b) => b,
            _ => 0,
        };
        (0..64).filter(move |i| bits & (1 << i) != 0)
    }
}

/// One option of a kind whose spec is `S`, declared once.
#[derive(Debug)]
pub struct OptionDef<S> {
    pub name: &'static str,
    /// Shown in usage lines: `--bs <BS>`.
    pub value_name: &'static str,
    pub kind: OptionKind,
    /// As it would be written; `None`: unset unless given.
    pub default: Option<&'static str>,
    /// Other spellings of a choice: (alias, name).
    pub aliases: &'static [(&'static str, &'static str)],
    pub help: &'static str,
    /// The original tool's flag for the same thing (e.g. `-I` for the tool's O_DIRECT), shown in
    /// help and docs; empty when it has none.
    pub original: &'static str,
    /// Puts a value of this option's kind into a spec.
    pub apply: fn(&mut S, OptionValue),
    /// Takes it out again: the spec's value, as `apply` would put it; `None` for an option
    /// without a default that is not set. Stored specs are written from it.
    pub get: fn(&S) -> Option<OptionValue>,
}

/// The shortest duration an option accepts (and any duration the command line measures
/// over): below a millisecond a run is all thread start-up.
pub const MIN_DURATION: Duration = Duration::from_millis(1);

impl OptionKind {
    /// Parses a value as written on a command line (or a default); `aliases` are other
    /// spellings of a choice.
    pub fn parse(
        self,
        text: &str,
        aliases: &[(&'static str, &'static str)],
    ) -> Result<OptionValue, String> {
        let as_given = text;
        let text = text.trim();
        match self {
            OptionKind::Choice(names) => {
                let text = aliases
                    .iter()
                    .find(|(alias, _)| *alias == text)
                    .map_or(text, |(_, name)| name);
                names
                    .iter()
                    .find(|n| **n == text)
                    .copied()
                    .map(OptionValue::Name)
                    .ok_or_else(|| format!("expected one of {}", names.join(", ")))
            }
            OptionKind::Size => crate::parse_size(text)
                .map(OptionValue::Bytes)
                .map_err(|e| e.to_string()),
            OptionKind::Count { min, max } => match text.parse::<u64>() {
                Ok(n) if (min..=max).contains(&n) => Ok(OptionValue::Count(n)),
                // A maximum that is only the type's limit is not worth saying.
                Ok(n) if n < min && max == u64::from(u32::MAX) => {
                    Err(format!("must be at least {min}"))
                }
                Ok(_) => Err(format!("must be between {min} and {max}")),
                Err(_) => Err(format!("`{text}` is not a whole number (e.g. 4)")),
            },
            OptionKind::Duration => {
                let d = crate::parse_duration(text).map_err(|e| e.to_string())?;
                check_duration(d, text).map(OptionValue::Duration)
            }
            OptionKind::Flag => match text {
                "true" | "yes" | "on" => Ok(OptionValue::Flag(true)),
                "false" | "no" | "off" => Ok(OptionValue::Flag(false)),
                _ => Err(format!("`{text}` is not true or false")),
            },
            OptionKind::Set { names, what } => parse_set(text, names, what, aliases),
            OptionKind::Path => Ok(OptionValue::Path(intern_path(Path::new(as_given)))),
            OptionKind::Text => Ok(OptionValue::Text(intern(text))),
        }
    }
}

/// `value` with a `'static` lifetime, kept once per distinct value: option values stay
/// `Copy` (every table passes them by value), and the texts and paths a process reads — a
/// command line, the keys of its experiment files — are few and repeat across configurations.
fn interned<T: ?Sized + Ord + 'static>(
    kept: &std::sync::Mutex<std::collections::BTreeSet<&'static T>>,
    value: &T,
    leak: impl FnOnce(&T) -> &'static T,
) -> &'static T {
    let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = kept.get(value) {
        return v;
    }
    let v = leak(value);
    kept.insert(v);
    v
}

/// `text` with a `'static` lifetime ([`interned`]).
pub fn intern(text: &str) -> &'static str {
    static TEXTS: std::sync::Mutex<std::collections::BTreeSet<&'static str>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    interned(&TEXTS, text, |t| Box::leak(t.to_owned().into_boxed_str()))
}

/// `path` with a `'static` lifetime ([`interned`]).
pub fn intern_path(path: &Path) -> &'static Path {
    static PATHS: std::sync::Mutex<std::collections::BTreeSet<&'static Path>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    interned(&PATHS, path, |p| {
        Box::leak(p.to_path_buf().into_boxed_path())
    })
}

/// `a, b,c`: the positions of the names (or their aliases) in `names` as a bit set.
fn parse_set(
    text: &str,
    names: &[&'static str],
    what: &str,
    aliases: &[(&'static str, &'static str)],
) -> Result<OptionValue, String> {
    debug_assert!(names.len() <= 64);
    let mut bits = 0u64;
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let name = aliases
            .iter()
            .find(|(alias, _)| *alias == part)
            .map_or(part, |(_, name)| name);
        let Some(i) = names.iter().position(|n| *n == name) else {
            let each: Vec<String> = names
                .iter()
                .map(|n| {
                    let other: Vec<&str> = aliases
                        .iter()
                        .filter(|(_, to)| to == n)
                        .map(|(a, _)| *a)
                        .collect();
                    if other.is_empty() {
                        n.to_string()
                    } else {
                        format!("{n} ({})", other.join(", "))
                    }
                })
                .collect();
            return Err(format!(
                "unknown {what} `{part}`: give one or more of {}, comma-separated",
                each.join(", ")
            ));
        };
        bits |= 1 << i;
    }
    Ok(OptionValue::Set(bits))
}

impl<S> OptionDef<S> {
    /// Parses the option's value as written on a command line (or the default).
    pub fn parse(&self, text: &str) -> Result<OptionValue, String> {
        self.kind.parse(text, self.aliases)
    }

    /// Sets this option in `spec` (`value` must be of the option's kind).
    pub fn apply(&self, spec: &mut S, value: OptionValue) {
        (self.apply)(spec, value)
    }

    /// The help text with its choices.
    pub fn help_text(&self) -> String {
        match self.kind {
            OptionKind::Choice(names) => format!("{}: {}", self.help, names.join(", ")),
            _ => self.help.to_string(),
        }
    }

    /// The help text with the original tool's flag: `… [TOOL -I]`.
    pub fn help_with_original(&self, tool: &str) -> String {
        if self.original.is_empty() {
            self.help_text()
        } else {
            format!("{} [{tool} {}]", self.help_text(), self.original)
        }
    }

    /// The command-line flag without its dashes: the name, underscores written as dashes
    /// (`temp_store` → `--temp-store`).
    pub fn flag(&self) -> String {
        self.name.replace('_', "-")
    }
}

/// An [`OptionDef`] of a spec field named as the option, in one of the shapes most options
/// take, so that a table declares each such row once (a row of another shape is written
/// out): `original` is the tool's flag, `help` the help text.
///
/// - `option_row!(flag FIELD = "DEFAULT", original, help)`: a `bool` with a default;
/// - `option_row!(flag FIELD?, original, help)`: an `Option<bool>`, unset unless given;
/// - `option_row!(size FIELD?, original, help)`: an `Option<u64>` of bytes;
/// - `option_row!(count FIELD? in MIN..=MAX, original, help)`: an `Option<u64>` count.
#[macro_export]
macro_rules! option_row {
    (flag $f:ident = $default:literal, $original:expr, $help:expr) => {
        $crate::option_row!(@row $f, "BOOL", Flag, Some($default), $original, $help,
            |s, v| s.$f = v.flag(),
            |s| Some($crate::option::OptionValue::Flag(s.$f)))
    };
    (flag $f:ident ?, $original:expr, $help:expr) => {
        $crate::option_row!(@row $f, "BOOL", Flag, None, $original, $help,
            |s, v| s.$f = Some(v.flag()),
            |s| s.$f.map($crate::option::OptionValue::Flag))
    };
    (size $f:ident ?, $original:expr, $help:expr) => {
        $crate::option_row!(@row $f, "SIZE", Size, None, $original, $help,
            |s, v| s.$f = Some(v.bytes()),
            |s| s.$f.map($crate::option::OptionValue::Bytes))
    };
    (count $f:ident ? in $min:literal ..= $max:expr, $original:expr, $help:expr) => {
        $crate::option_row!(@row $f, "N", Count { min: $min, max: $max }, None, $original, $help,
            |s, v| s.$f = Some(v.count()),
            |s| s.$f.map($crate::option::OptionValue::Count))
    };
    (@row $f:ident, $value_name:literal, $kind:ident $({ $($k:tt)* })?, $default:expr,
     $original:expr, $help:expr, $apply:expr, $get:expr) => {
        $crate::option::OptionDef {
            name: stringify!($f),
            value_name: $value_name,
            kind: $crate::option::OptionKind::$kind $({ $($k)* })?,
            default: $default,
            aliases: &[],
            help: $help,
            original: $original,
            apply: $apply,
            get: $get,
        }
    };
}

/// Applies the defaults of `options` to `spec` (the defaults are tested to parse).
pub fn apply_defaults<S>(options: &[OptionDef<S>], spec: &mut S) {
    for o in options {
        if let Some(d) = o.default {
            if let Ok(v) = o.parse(d) {
                o.apply(spec, v);
            }
        }
    }
}

/// A duration that is long enough to measure something.
pub fn check_duration(d: Duration, text: &str) -> Result<Duration, String> {
    if d.is_zero() {
        return Err("must be longer than zero".into());
    }
    if d < MIN_DURATION {
        return Err(format!("`{text}` is too short: give at least 1ms"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_counts_parse() {
        assert_eq!(
            OptionKind::Flag.parse("true", &[]),
            Ok(OptionValue::Flag(true))
        );
        assert_eq!(
            OptionKind::Flag.parse("off", &[]),
            Ok(OptionValue::Flag(false))
        );
        assert!(OptionKind::Flag.parse("maybe", &[]).is_err());
        let set = OptionKind::Set {
            names: &["write", "read", "random"],
            what: "test",
        };
        let v = set.parse("2, write,random", &[("0", "write"), ("2", "random")]);
        assert_eq!(v, Ok(OptionValue::Set(0b101)));
        assert_eq!(v.unwrap().set_members().collect::<Vec<_>>(), vec![0, 2]);
        let e = set.parse("read,up", &[("0", "write")]).unwrap_err();
        assert_eq!(
            e,
            "unknown test `up`: give one or more of write (0), read, random, comma-separated"
        );
        let p = OptionKind::Path.parse("lists/a b.list ", &[]).unwrap();
        assert_eq!(p.path(), Some(Path::new("lists/a b.list ")));
        // The same path is kept once.
        let q = OptionKind::Path.parse("lists/a b.list ", &[]).unwrap();
        assert!(std::ptr::eq(p.path().unwrap(), q.path().unwrap()));
        let c = OptionKind::Count { min: 1, max: 11 };
        assert_eq!(c.parse("12", &[]).unwrap_err(), "must be between 1 and 11");
        let a = OptionKind::Text.parse(" lru:m=4 ", &[]).unwrap();
        assert_eq!(a.text(), "lru:m=4");
        // The same text is kept once.
        let b = OptionKind::Text.parse("lru:m=4", &[]).unwrap();
        assert!(std::ptr::eq(a.text(), b.text()));
        let names: &'static [&'static str] = &["wal", "delete"];
        assert_eq!(
            OptionKind::Choice(names).parse("WAL2", &[("WAL2", "wal")]),
            Ok(OptionValue::Name("wal"))
        );
    }
}
