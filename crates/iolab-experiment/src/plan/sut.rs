//! The `[sut]` section of one configuration: deserialized into [`SutSpec`] and validated by
//! iolab-sut itself ([`SutSpec::validate_here`]: every independent mistake, tunables looked up
//! on this machine), with its errors (which name a field path, and whether the key or the
//! value is wrong) located in the file; then the target checks that need a read-only look at
//! the machine, reported along with them.

use std::path::{Path, PathBuf};

use iolab_sut::size::parse_size;
use iolab_sut::spec::TargetSpec;
use iolab_sut::{At, SpecError, SutPlan, SutSpec};

use crate::plan::read::Ctx;
use crate::plan::tree::{find, Node, Seg, Value};
use iolab_util::suggest;

/// Deserializes and validates a substituted `[sut]` table. Relative directory paths
/// (`target.path`, `target.image_dir`) are resolved against `base`, the experiment file's
/// directory, as workload paths are. Every independent mistake is reported, each at its key
/// or value: those iolab-sut finds (including, read-only, tunables this machine does not have
/// or values it would refuse) and those of [`check_machine`].
pub(crate) fn resolve(cx: &mut Ctx, sut: &Node, base: &Path) -> Option<(SutSpec, SutPlan)> {
    let mut spec: SutSpec = match serde_path_to_error::deserialize(sut.to_json()) {
        Ok(s) => s,
        Err(e) => {
            serde_error(cx, sut, &e);
            return None;
        }
    };
    resolve_paths(&mut spec, base);
    let before = cx.errors();
    let plan = spec.validate_here().map_err(|errors| {
        for e in errors {
            spec_error(cx, sut, e);
        }
    });
    check_machine(cx, sut, &spec);
    match plan {
        Ok(plan) if cx.errors() == before => Some((spec, plan)),
        _ => None,
    }
}

/// Locates one of iolab-sut's mistakes by its field path, at the key or the value.
fn spec_error(cx: &mut Ctx, sut: &Node, e: SpecError) {
    let found = find(sut, &field_path(&e.field));
    let at = match (e.at, found.key_span) {
        (At::Key, Some(k)) => k,
        _ => found.point(),
    }
    .clone();
    let (message, hint) = match e.hint {
        Some(h) => (e.message, Some(h)),
        None => split_hint(&e.message),
    };
    let e = cx
        .src
        .error(&at, format!("`sut.{}`: {message}", e.field))
        .hint_opt(hint);
    cx.push(e);
}

fn resolve_paths(spec: &mut SutSpec, base: &Path) {
    let rebase = |p: &mut PathBuf| {
        if p.is_relative() && !p.as_os_str().is_empty() {
            *p = base.join(&*p);
        }
    };
    match &mut spec.target {
        TargetSpec::Directory { path } => rebase(path),
        TargetSpec::LoopImage {
            image_dir: Some(d), ..
        } => rebase(d),
        _ => {}
    }
}

/// A VM needs qemu and a kernel this machine has: looked for when the file is read, so a
/// missing one is bad input (exit 2) before anything is made.
fn check_vm(cx: &mut Ctx, sut: &Node, spec: &SutSpec) {
    let Some(env) = spec.environment.as_ref().filter(|e| e.kind == "vm") else {
        return;
    };
    let at = |key: &str| {
        let f = find(sut, &[Seg::Key("environment".into()), Seg::Key(key.into())]);
        f.key_span.unwrap_or_else(|| f.point()).clone()
    };
    if let Err(e) = iolab_vm::kernel::find(env.kernel.as_deref()) {
        let key = if env.kernel.is_some() {
            "kernel"
        } else {
            "kind"
        };
        cx.error_hint(
            &at(key),
            format!("`sut.environment.kernel`: {e}"),
            e.hint().unwrap_or(iolab_vm::KERNEL_HINT),
        );
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("qemu-system-x86_64").is_file()));
    if !on_path {
        cx.error_hint(
            &at("kind"),
            "`sut.environment`: a VM needs qemu-system-x86_64, which is not installed",
            iolab_vm::QEMU_HINT,
        );
    }
}

/// Read-only checks of the target against the machine: a directory target must exist; a loop
/// image must fit in its image directory when that exists (iolab-sut checks the same before
/// creating it, but finding out at load time spares a half-run experiment). On the spec, so
/// that they are reported along with iolab-sut's own findings.
fn check_machine(cx: &mut Ctx, sut: &Node, spec: &SutSpec) {
    check_vm(cx, sut, spec);
    let at = |key: &str| {
        find(sut, &[Seg::Key("target".into()), Seg::Key(key.into())])
            .point()
            .clone()
    };
    match &spec.target {
        TargetSpec::Directory { path } if !path.is_dir() => {
            let what = if path.exists() {
                "is not a directory"
            } else {
                "does not exist"
            };
            cx.error_hint(
                &at("path"),
                format!("`sut.target.path`: {} {what}", path.display()),
                "a directory target is used as it is: create it first, or use a tmpfs or \
                 loop_image target (relative paths start at the experiment file's directory)",
            );
        }
        TargetSpec::LoopImage {
            size,
            image_dir: Some(dir),
            ..
        } if dir.is_dir() => {
            if let (Ok(size), Some(free)) = (parse_size(size), free_bytes(dir)) {
                if free < size {
                    cx.error_hint(
                        &at("size"),
                        format!(
                            "`sut.target.size`: the image needs up to {} MiB but {} has only \
                             {} MiB free",
                            size >> 20,
                            dir.display(),
                            free >> 20
                        ),
                        "choose a smaller size or another image_dir",
                    );
                }
            }
        }
        _ => {}
    }
}

/// Space available to unprivileged users on the filesystem holding `dir`, as iolab-sut
/// computes it before creating an image.
fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: a zeroed statvfs is a valid out-parameter.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated string and `st` a valid out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Locates a serde error: the path serde_path_to_error tracked (which stops at internally
/// tagged enums such as `target`), refined by the key or value the message names.
fn serde_error(cx: &mut Ctx, sut: &Node, e: &serde_path_to_error::Error<serde_json::Error>) {
    let path: Vec<Seg> = e
        .path()
        .iter()
        .filter_map(|s| match s {
            serde_path_to_error::Segment::Map { key } => Some(Seg::Key(key.clone())),
            serde_path_to_error::Segment::Seq { index } => Some(Seg::Index(*index)),
            _ => None,
        })
        .collect();
    let inner = e.inner().to_string();
    let found = find(sut, &path);
    let mut at = found.point().clone();
    let mut hint = None;
    let mut where_ = dotted(&path);
    if let (Some(name), Some(t)) = (
        quoted(&inner, "unknown field `"),
        found.node.value.as_table(),
    ) {
        if let Some(entry) = t.get(name) {
            at = entry.key_span.clone();
            where_ = crate::plan::read::join(&where_, name);
        }
        // serde's message lists the expected fields; a close one is worth a hint line.
        hint = expected(&inner)
            .and_then(|list| suggest::did_you_mean(name, list.iter().map(String::as_str)));
    } else if let (Some(name), Some(t)) = (
        quoted(&inner, "unknown variant `"),
        found.node.value.as_table(),
    ) {
        if let Some(entry) = t
            .entries
            .iter()
            .find(|e| matches!(&e.node.value, Value::String(s) if s == name))
        {
            at = entry.node.span.clone();
            where_ = crate::plan::read::join(&where_, &entry.key);
        }
    } else if let (Some(desc), Some(t)) = (
        inner
            .strip_prefix("invalid type: ")
            .and_then(|r| r.split(", expected").next()),
        found.node.value.as_table(),
    ) {
        // Inside an internally tagged enum the path stops at the enum; the value serde
        // describes tells which key it was.
        if let Some(entry) = t.entries.iter().find(|e| unexpected(&e.node.value) == desc) {
            at = entry.node.span.clone();
            where_ = crate::plan::read::join(&where_, &entry.key);
        }
    }
    let message = inner
        .split(" at line ")
        .next()
        .unwrap_or(&inner)
        .to_string();
    let e = cx
        .src
        .error(&at, format!("`{where_}`: {message}"))
        .hint_opt(hint);
    cx.push(e);
}

/// How serde describes a value in "invalid type" errors (`serde::de::Unexpected`).
fn unexpected(v: &Value) -> String {
    match v {
        Value::String(s) | Value::Datetime(s) => format!("string {s:?}"),
        Value::Integer(i) => format!("integer `{i}`"),
        Value::Float(f) => serde::de::Unexpected::Float(*f).to_string(),
        Value::Boolean(b) => format!("boolean `{b}`"),
        Value::Array(_) => "sequence".into(),
        Value::Table(_) => "map".into(),
    }
}

/// `sut.a.b[0]` for messages.
fn dotted(path: &[Seg]) -> String {
    let mut s = String::from("sut");
    for seg in path {
        match seg {
            Seg::Key(k) => s = crate::plan::read::join(&s, k),
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The word in backticks after `prefix` in `text`.
fn quoted<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    rest.split('`').next()
}

/// The backticked names after "expected" in a serde message.
fn expected(text: &str) -> Option<Vec<String>> {
    let rest = &text[text.find("expected")?..];
    let names: Vec<String> = rest
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// iolab-sut's field paths: `target.size`, `tunables."vm.dirty_ratio"`.
fn field_path(field: &str) -> Vec<Seg> {
    let mut segs = Vec::new();
    let mut chars = field.chars().peekable();
    let mut cur = String::new();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => cur.extend(chars.next()),
                        '"' => break,
                        c => cur.push(c),
                    }
                }
            }
            '.' => segs.push(Seg::Key(std::mem::take(&mut cur))),
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        segs.push(Seg::Key(cur));
    }
    segs
}

/// iolab-sut writes advice into the message ("…; did you mean `ext4`?"); it reads better
/// as a hint line.
fn split_hint(message: &str) -> (String, Option<String>) {
    match message.split_once("; did you mean") {
        Some((m, h)) => (m.to_string(), Some(format!("did you mean{h}"))),
        None => (message.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::error::Source;
    use crate::plan::tree;

    fn resolve_text(text: &str) -> Result<(SutSpec, SutPlan), Vec<String>> {
        let src = Source::new(Path::new("t.toml"), text);
        let root = tree::parse(text).ok().unwrap();
        let sut = &root.value.as_table().unwrap().get("sut").unwrap().node;
        let mut cx = Ctx::new(&src);
        match resolve(&mut cx, sut, Path::new("/base")) {
            Some(r) if cx.errors() == 0 => Ok(r),
            _ => Err(cx.diag.errors.iter().map(|e| e.to_string()).collect()),
        }
    }

    #[test]
    fn field_paths() {
        assert_eq!(
            field_path("tunables.\"vm.dirty_ratio\""),
            [
                Seg::Key("tunables".into()),
                Seg::Key("vm.dirty_ratio".into())
            ]
        );
        assert_eq!(
            field_path("target.size"),
            [Seg::Key("target".into()), Seg::Key("size".into())]
        );
    }

    #[test]
    fn valid_sut() {
        let (spec, plan) = resolve_text(
            "[sut]\ntarget = { kind = \"loop_image\", size = \"1G\", image_dir = \"img\" }\n\
             fs = { kind = \"ext4\", mount_options = \"data=journal\" }\n",
        )
        .unwrap();
        match spec.target {
            TargetSpec::LoopImage { image_dir, .. } => {
                assert_eq!(image_dir.unwrap(), Path::new("/base/img"))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(plan.fs.unwrap().mount.get("data"), Some("journal"));
    }

    #[test]
    fn serde_errors_are_located() {
        let e = resolve_text("[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\", colour = 1 }\n")
            .unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:41: `sut.target.colour`: unknown field `colour`"),
            "{e:?}"
        );
        let e = resolve_text("[sut]\ntarget = { kind = \"tmfps\", size = \"1G\" }\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:19: `sut.target.kind`: unknown variant `tmfps`"),
            "{e:?}"
        );
        let e = resolve_text("[sut]\ntarget = { kind = \"tmpfs\" }\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:1: `sut.target`: missing field `size`"),
            "{e:?}"
        );
        let e = resolve_text("[sut]\ntarget = { kind = \"tmpfs\", size = 5 }\n").unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:35: `sut.target.size`: invalid type"),
            "{e:?}"
        );
    }

    #[test]
    fn validate_errors_are_located() {
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"loop_image\", size = \"1G\" }\nfs = { kind = \"ext5\" }\n",
        )
        .unwrap_err();
        assert_eq!(
            e,
            ["t.toml:3:15: `sut.fs.kind`: unknown filesystem \"ext5\"\n  hint: did you mean `ext4`?"]
        );
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n[sut.tunables]\n\"queue/scheduler\" = \"none\"\n",
        )
        .unwrap_err();
        // The name is the problem here: pointed at by its key.
        assert!(
            e[0].starts_with("t.toml:4:1: `sut.tunables.\"queue/scheduler\"`"),
            "{e:?}"
        );
    }

    #[test]
    fn every_sut_mistake_is_located_at_once() {
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"loop_image\", size = \"8m\" }\n\
             fs = { kind = \"xfs\" }\ncache_limit = \"1m\"\n\
             tunables = { \"vm..x\" = 1, \"vm.dirty_ratio\" = \"\" }\n",
        )
        .unwrap_err();
        // In the order found (the experiment's error list is sorted by place afterwards).
        let at: Vec<&str> = e.iter().map(|e| e.split(": ").next().unwrap()).collect();
        assert_eq!(
            at,
            [
                "t.toml:2:40",
                "t.toml:2:40",
                "t.toml:5:14",
                "t.toml:5:46",
                "t.toml:4:15"
            ],
            "{e:#?}"
        );
        assert!(
            e[0].contains("a loop image must be at least 16 MiB"),
            "{e:?}"
        );
        assert!(e[1].contains("xfs needs at least 300 MiB"), "{e:?}");
        assert!(e[2].contains("is not a tunable name"), "{e:?}");
        assert!(e[3].contains("one non-empty line"), "{e:?}");
        assert!(e[4].contains("too small"), "{e:?}");
    }

    #[test]
    fn machine_checks_join_the_spec_mistakes() {
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"directory\", path = \"/nonexistent-iolab\" }\n\
             cache_limit = \"1m\"\n",
        )
        .unwrap_err();
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e.iter().any(|e| e.contains("does not exist")), "{e:?}");
        assert!(e.iter().any(|e| e.contains("too small")), "{e:?}");
    }

    #[test]
    fn tunables_this_machine_lacks_are_located_at_their_key_with_a_hint() {
        if !Path::new("/proc/sys/vm/dirty_ratio").is_file() {
            return iolab_testkit::not_run("no /proc/sys here");
        }
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n\
             tunables = { \"vm.dirty_ratoi\" = 3, \"vm.dirty_ratio\" = \"abc\" }\n",
        )
        .unwrap_err();
        // Tunables are checked in name order: `vm.dirty_ratio` first.
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(
            e[1],
            "t.toml:3:14: `sut.tunables.\"vm.dirty_ratoi\"`: no such tunable on this kernel \
             (/proc/sys/vm/dirty_ratoi)\n  hint: did you mean `vm.dirty_ratio`?"
        );
        assert!(
            e[0].starts_with(
                "t.toml:3:55: `sut.tunables.\"vm.dirty_ratio\"`: vm.dirty_ratio takes an integer"
            ),
            "{e:?}"
        );
        assert!(e[0].contains("\n  hint: write a whole number"), "{e:?}");
    }

    #[test]
    fn missing_directory() {
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"directory\", path = \"/nonexistent-iolab\" }\n",
        )
        .unwrap_err();
        assert!(
            e[0].starts_with("t.toml:2:39: `sut.target.path`: /nonexistent-iolab does not exist"),
            "{e:?}"
        );
    }

    #[test]
    fn image_larger_than_free_space() {
        let e = resolve_text(
            "[sut]\ntarget = { kind = \"loop_image\", size = \"1000000T\", image_dir = \"/tmp\" }\nfs = { kind = \"ext4\" }\n",
        )
        .unwrap_err();
        assert!(e[0].contains("MiB free"), "{e:?}");
    }
}
