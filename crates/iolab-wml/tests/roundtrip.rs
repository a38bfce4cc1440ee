//! Round trips through the printer (`iolab_wml::to_wml`): a tree printed and parsed again is
//! the same tree (spans aside), and a workload printed and parsed again lowers to the same
//! engine workload. Three sources of trees: random trees from the grammar, random valid
//! workloads, and every `.f` file of the repository (and filebench's corpus when present).

use std::path::{Path, PathBuf};

use iolab_wml::*;
use proptest::prelude::*;

// ---- comparing trees without their spans ----

fn clear_value(v: &mut Value) {
    v.span = Span::default();
    match &mut v.kind {
        ValueKind::Text(t) => clear_text(t),
        ValueKind::Randvar(RandvarDef { attrs }) | ValueKind::Cvar(CvarDef { attrs }) => {
            clear_attrs(attrs)
        }
        ValueKind::Expr(e) => clear_expr(e),
        ValueKind::Table(rows) => {
            for r in rows {
                r.span = Span::default();
                for v in [&mut r.percent, &mut r.low, &mut r.high] {
                    clear_value(v);
                }
            }
        }
        _ => {}
    }
}

fn clear_text(t: &mut Text) {
    for p in &mut t.parts {
        if let TextPart::Var { span, .. } = p {
            *span = Span::default();
        }
    }
}

fn clear_expr(e: &mut Expr) {
    match e {
        Expr::Operand(v) => clear_value(v),
        Expr::Binary { span, lhs, rhs, .. } => {
            *span = Span::default();
            clear_expr(lhs);
            clear_expr(rhs);
        }
    }
}

fn clear_attrs(attrs: &mut [Attr]) {
    for a in attrs {
        a.span = Span::default();
        if let Some(v) = &mut a.value {
            clear_value(v);
        }
    }
}

fn clear_locals(locals: &mut [LocalVar]) {
    for l in locals {
        l.span = Span::default();
        if let Some(v) = &mut l.value {
            clear_value(v);
        }
    }
}

fn clear_flowops(ops: &mut [FlowopUse]) {
    for f in ops {
        f.span = Span::default();
        f.op_span = Span::default();
        clear_attrs(&mut f.attrs);
        clear_locals(&mut f.locals);
    }
}

/// The commands of a tree with every span set to the default.
fn without_spans(parsed: &Parsed) -> Vec<Command> {
    let mut commands = parsed.commands.clone();
    for c in &mut commands {
        c.span = Span::default();
        match &mut c.kind {
            CommandKind::Set(s) => {
                s.name_span = Span::default();
                clear_value(&mut s.value);
            }
            CommandKind::DefineFileset(d) => {
                d.span = Span::default();
                clear_attrs(&mut d.attrs);
            }
            CommandKind::DefineProcess(p) => {
                p.span = Span::default();
                clear_attrs(&mut p.attrs);
                for t in &mut p.threads {
                    t.span = Span::default();
                    clear_attrs(&mut t.attrs);
                    clear_flowops(&mut t.flowops);
                }
            }
            CommandKind::DefineComposite(d) => {
                d.span = Span::default();
                clear_attrs(&mut d.attrs);
                clear_locals(&mut d.locals);
                clear_flowops(&mut d.flowops);
            }
            CommandKind::Run(Some(v)) | CommandKind::Sleep(v) | CommandKind::Debug(v) => {
                clear_value(v)
            }
            CommandKind::Psrun { period, seconds } => {
                for v in [period, seconds].into_iter().flatten() {
                    clear_value(v);
                }
            }
            CommandKind::Echo(t) | CommandKind::System(t) => clear_text(t),
            CommandKind::Eventgen(a)
            | CommandKind::EnableMulti(a)
            | CommandKind::DoMultiSync(a) => clear_attrs(a),
            _ => {}
        }
    }
    commands
}

/// Prints `parsed`, parses the text again and checks that the tree is the same and that
/// printing is stable; returns the printed text.
fn assert_reparses(parsed: &Parsed) -> String {
    let text = to_wml(parsed);
    let again = parse_str(&parsed.file, &text)
        .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n--- text:\n{text}"));
    assert_eq!(
        without_spans(&again),
        without_spans(parsed),
        "printed text parses to another tree\n--- text:\n{text}"
    );
    assert_eq!(to_wml(&again), text, "printing is not stable");
    text
}

/// The lowered workload as JSON (the engine's model has no `PartialEq`; its serialised form
/// is everything the engine is given, `at` locations aside).
fn lowered(parsed: &Parsed) -> Result<serde_json::Value, String> {
    validate(parsed).map_err(|e| e.to_string())?;
    let w = lower(parsed, &LowerOptions::default()).map_err(|e| e.to_string())?;
    Ok(serde_json::to_value(&w).expect("a workload serialises"))
}

/// `cases` cases, failures reported with their minimal input rather than kept in a file.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

// ---- random trees from the grammar ----

fn span() -> Span {
    Span::default()
}

fn val(kind: ValueKind) -> Value {
    Value { span: span(), kind }
}

fn var_name() -> impl Strategy<Value = String> {
    "[a-z][a-zA-Z0-9_]{1,6}"
}

/// A bare word as a value: never `true`/`false` (those are booleans).
fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z][a-z0-9/._:;-]{0,8}",
        "/[a-z][a-z0-9/._-]{0,6}",
        Just("mean:16384;gamma:1.5".to_string()),
        Just("cvar-gamma".to_string()),
    ]
    .prop_filter("a boolean", |w| w != "true" && w != "false")
}

fn text() -> impl Strategy<Value = Text> {
    let part = prop_oneof![
        "[a-zA-Z0-9 $\\\\\"\n\t{}#é\u{1b}-]{1,8}".prop_map(TextPart::Lit),
        var_name().prop_map(|name| TextPart::Var { name, span: span() }),
    ];
    prop::collection::vec(part, 0..4).prop_map(|parts| {
        // As the lexer builds them: adjacent literals merged, an empty string one empty literal.
        let mut out: Vec<TextPart> = Vec::new();
        for p in parts {
            match (out.last_mut(), p) {
                (Some(TextPart::Lit(a)), TextPart::Lit(b)) => a.push_str(&b),
                (_, p) => out.push(p),
            }
        }
        if out.is_empty() {
            out.push(TextPart::Lit(String::new()));
        }
        Text { parts: out }
    })
}

fn int() -> impl Strategy<Value = i64> {
    prop_oneof![-1000i64..100_000, -i64::MAX..=i64::MAX]
}

fn float() -> impl Strategy<Value = f64> {
    prop_oneof![
        (0u32..10_000, 1u32..1000).prop_map(|(a, b)| a as f64 + 1.0 / b as f64),
        -1e300f64..1e300,
        Just(2.0),
        Just(-0.5),
    ]
}

/// A number or a variable: what `run`, `sleep` and arithmetic take.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        int().prop_map(|n| val(ValueKind::Int(n))),
        float().prop_map(|x| val(ValueKind::Float(x))),
        var_name().prop_map(|v| val(ValueKind::Var(v))),
    ]
}

/// A value after `attr=`.
fn plain_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        number(),
        any::<bool>().prop_map(|b| val(ValueKind::Bool(b))),
        word().prop_map(|w| val(ValueKind::Str(w))),
        text().prop_map(|t| val(ValueKind::Text(t))),
    ]
}

const ATTR_NAMES: &[&str] = &[
    "name",
    "path",
    "entries",
    "size",
    "filesize",
    "filename",
    "filesetname",
    "iosize",
    "prealloc",
    "random",
    "dsync",
    "instances",
    "value",
    "fd",
    "workingset",
    "dirwidth",
    "memsize",
    "rate",
    "type",
    "min",
    "round",
    "mean",
    "gamma",
    "parameters",
    "master",
    "client",
];

fn attr_with(value: BoxedStrategy<Value>) -> impl Strategy<Value = Attr> {
    (
        prop::sample::select(ATTR_NAMES),
        prop::option::weighted(0.8, value),
    )
        .prop_map(|(written, value)| Attr {
            name: match written {
                "filename" => "filesetname",
                "filesize" => "size",
                w => w,
            }
            .to_string(),
            written: written.to_string(),
            span: span(),
            value,
        })
}

fn attrs() -> impl Strategy<Value = Vec<Attr>> {
    prop::collection::vec(attr_with(plain_value().boxed()), 0..4)
}

fn locals() -> impl Strategy<Value = Vec<LocalVar>> {
    prop::collection::vec(
        (var_name(), prop::option::of(plain_value())).prop_map(|(name, value)| LocalVar {
            name,
            span: span(),
            value,
        }),
        0..3,
    )
}

fn flowop() -> impl Strategy<Value = FlowopUse> {
    (
        prop::sample::select(&["read", "write", "openfile", "fsync", "mycomposite"][..]),
        attrs(),
        locals(),
    )
        .prop_map(|(op, attrs, locals)| FlowopUse {
            span: span(),
            op: op.to_string(),
            op_span: span(),
            attrs,
            locals,
        })
}

fn table() -> impl Strategy<Value = Value> {
    prop::collection::vec((number(), number(), number()), 1..4).prop_map(|rows| {
        val(ValueKind::Table(
            rows.into_iter()
                .map(|(percent, low, high)| TableRow {
                    span: span(),
                    percent,
                    low,
                    high,
                })
                .collect(),
        ))
    })
}

/// Attributes of a `randvar(…)`: never `name` (`define randvar` takes it out), maybe a table.
fn randvar_attrs() -> impl Strategy<Value = Vec<Attr>> {
    (
        prop::collection::vec(attr_with(plain_value().boxed()), 0..4),
        prop::option::of(table()),
    )
        .prop_map(|(mut attrs, table)| {
            attrs.retain(|a| a.name != "name");
            if let Some(t) = table {
                attrs.push(Attr {
                    name: "randtable".into(),
                    written: "randtable".into(),
                    span: span(),
                    value: Some(t),
                });
            }
            attrs
        })
}

fn expr() -> impl Strategy<Value = Expr> {
    let operand = prop_oneof![
        int().prop_map(|n| Expr::Operand(val(ValueKind::Int(n)))),
        var_name().prop_map(|v| Expr::Operand(val(ValueKind::Var(v)))),
    ];
    operand.prop_recursive(3, 8, 2, |inner| {
        (
            prop::sample::select(&[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div][..]),
            inner.clone(),
            inner,
        )
            .prop_map(|(op, lhs, rhs)| Expr::Binary {
                op,
                span: span(),
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            })
    })
}

fn set_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        plain_value(),
        randvar_attrs().prop_map(|attrs| val(ValueKind::Randvar(RandvarDef { attrs }))),
        attrs().prop_map(|attrs| val(ValueKind::Cvar(CvarDef { attrs }))),
        expr().prop_map(|e| val(ValueKind::Expr(Box::new(e)))),
    ]
}

fn command() -> impl Strategy<Value = CommandKind> {
    let set = (var_name(), set_value()).prop_map(|(name, value)| {
        CommandKind::Set(SetVar {
            name,
            name_span: span(),
            value,
            legacy: false,
        })
    });
    let legacy = (var_name(), randvar_attrs()).prop_map(|(name, attrs)| {
        CommandKind::Set(SetVar {
            name,
            name_span: span(),
            value: val(ValueKind::Randvar(RandvarDef { attrs })),
            legacy: true,
        })
    });
    let fileset = (any::<bool>(), attrs()).prop_map(|(file, attrs)| {
        CommandKind::DefineFileset(FilesetDef {
            span: span(),
            kind: if file {
                FilesetKind::File
            } else {
                FilesetKind::Fileset
            },
            attrs,
        })
    });
    let thread =
        (attrs(), prop::collection::vec(flowop(), 0..4)).prop_map(|(attrs, flowops)| ThreadDef {
            span: span(),
            attrs,
            flowops,
        });
    let process = (attrs(), prop::collection::vec(thread, 0..3)).prop_map(|(attrs, threads)| {
        CommandKind::DefineProcess(ProcessDef {
            span: span(),
            attrs,
            threads,
        })
    });
    let composite = (attrs(), locals(), prop::collection::vec(flowop(), 0..3)).prop_map(
        |(attrs, locals, flowops)| {
            CommandKind::DefineComposite(CompositeDef {
                span: span(),
                attrs,
                locals,
                flowops,
            })
        },
    );
    let psrun = prop_oneof![
        Just((None, None)),
        number().prop_map(|p| (Some(p), None)),
        (number(), number()).prop_map(|(p, s)| (Some(p), Some(s))),
    ]
    .prop_map(|(period, seconds)| CommandKind::Psrun { period, seconds });
    let ignored = prop_oneof![
        (
            prop::sample::select(&["stats", "vars", "log", "fsflush", "warmup"][..]),
            "([a-z]{1,5}( [a-z][a-z0-9]{0,4}){0,2})?"
        )
            .prop_map(|(k, args)| (k.to_string(), args)),
        prop::sample::select(&["process", "processes", "thread"][..])
            .prop_map(|a| ("create".to_string(), a.to_string())),
    ]
    .prop_map(|(keyword, args)| CommandKind::Ignored(IgnoredCommand { keyword, args }));
    let simple = prop::sample::select(vec![
        CommandKind::SetMode(QuitMode::Timeout),
        CommandKind::SetMode(QuitMode::AllDone),
        CommandKind::SetMode(QuitMode::FirstDone),
        CommandKind::SetNoUseStats,
        CommandKind::CreateFiles,
        CommandKind::EnableLathist,
        CommandKind::List(None),
        CommandKind::List(Some("fileset".into())),
        CommandKind::List(Some("flowop".into())),
        CommandKind::Version,
    ]);
    prop_oneof![
        4 => set,
        1 => legacy,
        3 => fileset,
        3 => process,
        1 => composite,
        2 => simple,
        1 => prop::option::of(number()).prop_map(CommandKind::Run),
        1 => psrun,
        1 => number().prop_map(CommandKind::Sleep),
        1 => number().prop_map(CommandKind::Debug),
        1 => text().prop_map(CommandKind::Echo),
        1 => text().prop_map(CommandKind::System),
        1 => attrs().prop_map(CommandKind::Eventgen),
        1 => attrs().prop_map(CommandKind::EnableMulti),
        1 => attrs().prop_map(CommandKind::DoMultiSync),
        1 => ignored,
    ]
}

proptest! {
    #![proptest_config(config(512))]

    /// Any tree the grammar allows prints to text that parses back to it.
    #[test]
    fn random_trees_print_and_parse_back(kinds in prop::collection::vec(command(), 0..12)) {
        let text = kinds.iter().map(|k| format!("{k}\n")).collect::<String>();
        let parsed = parse_str("gen.f", &text)
            .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n--- text:\n{text}"));
        let expected: Vec<Command> = kinds
            .into_iter()
            .map(|kind| Command { span: span(), kind })
            .collect();
        prop_assert_eq!(without_spans(&parsed), expected);
        prop_assert_eq!(to_wml(&parsed), text);
    }
}

// ---- random valid workloads ----

/// One flowop line of a generated thread (`i` makes its name unique).
fn flowop_line(kind: u8, i: usize, random: bool, composite: bool) -> String {
    let r = if random { ", random" } else { "" };
    match kind % 7 {
        0 => format!("flowop read name=read{i}, filesetname=data, iosize=$iosize{r}"),
        1 => format!("flowop write name=write{i}, filename=one, iosize=4k{r}, dsync"),
        2 => format!(
            "flowop openfile name=open{i}, filesetname=data, fd=1\n    \
             flowop readwholefile name=whole{i}, fd=1, iosize=$iosize\n    \
             flowop closefile name=close{i}, fd=1"
        ),
        3 => format!("flowop statfile name=stat{i}, filesetname=data"),
        4 => format!("flowop appendfilerand name=append{i}, filesetname=data, iosize=$appendsize"),
        5 if composite => format!("flowop pair name=pair{i}, $io=2k"),
        _ => format!(
            "flowop createfile name=create{i}, filesetname=data, fd=2\n    \
                      flowop closefile name=closec{i}, fd=2\n    \
                      flowop deletefile name=delete{i}, filesetname=data"
        ),
    }
}

prop_compose! {
    fn workload()(
        nfiles in 1u32..5000,
        iosize in prop::sample::select(&["4k", "8k", "1m", "512", "$iosize_base"][..]),
        size_kind in 0u8..3,
        mean in 1u32..4096,
        prealloc in prop::option::of(0u8..=100),
        dirwidth in 1u32..100,
        composite in any::<bool>(),
        procs in prop::collection::vec(
            (1u32..4, prop::collection::vec(
                (1u32..4, 1u32..64, prop::collection::vec((0u8..7, any::<bool>()), 1..6)),
                1..3)),
            1..3),
        quit in prop::option::of(prop::sample::select(&["timeout", "alldone", "firstdone"][..])),
        run in prop_oneof![(1u32..600).prop_map(|t| format!("run {t}")),
                           Just("run".to_string()),
                           (1u32..600).prop_map(|t| format!("psrun -10 {t}"))],
        message in "[a-z ]{0,10}",
    ) -> String {
        let mut w = String::new();
        w.push_str("set $dir = /tmp/roundtrip\n");
        w.push_str(&format!("set $nfiles = {nfiles}\nset $iosize_base = 16k\n"));
        w.push_str(&format!("set $iosize = {iosize}\nset $appendsize = 1k * 4\n"));
        match size_kind {
            0 => w.push_str(&format!("set $filesize = {mean}k\n")),
            1 => w.push_str(&format!(
                "set $filesize = cvar(type=cvar-gamma, parameters=\"mean:{};gamma:1.5\")\n",
                mean * 1024
            )),
            _ => w.push_str(&format!(
                "set $filesize = randvar(type=gamma, mean={}, gamma=1500)\n",
                mean * 1024
            )),
        }
        let pre = prealloc.map_or(String::new(), |p| format!(", prealloc={p}"));
        w.push_str(&format!(
            "define fileset name=data, path=$dir, entries=$nfiles, size=$filesize, \
             dirwidth={dirwidth}{pre}\n"
        ));
        w.push_str("define file name=one, path=$dir, size=1m, prealloc\n");
        if composite {
            w.push_str("define flowop name=pair, $io=1k {\n  \
                        flowop read name=pread, filesetname=data, iosize=$io\n  \
                        flowop write name=pwrite, filename=one, iosize=$io\n}\n");
        }
        let mut n = 0;
        for (p, (instances, threads)) in procs.iter().enumerate() {
            w.push_str(&format!("define process name=proc{p}, instances={instances} {{\n"));
            for (t, (tinst, mem, ops)) in threads.iter().enumerate() {
                w.push_str(&format!(
                    "  thread name=thread{t}, memsize={mem}m, instances={tinst} {{\n"
                ));
                for (kind, random) in ops {
                    n += 1;
                    w.push_str(&format!("    {}\n", flowop_line(*kind, n, *random, composite)));
                }
                w.push_str("  }\n");
            }
            w.push_str("}\n");
        }
        if let Some(q) = quit {
            w.push_str(&format!("set mode quit {q}\n"));
        }
        w.push_str(&format!("echo \"{message} $nfiles files\"\n{run}\n"));
        w
    }
}

proptest! {
    #![proptest_config(config(128))]

    /// A valid workload printed and parsed again lowers to the same engine workload.
    #[test]
    fn random_workloads_lower_the_same_after_printing(src in workload()) {
        let parsed = parse_str("gen.f", &src).unwrap_or_else(|e| panic!("{e}\n{src}"));
        let before = lowered(&parsed).unwrap_or_else(|e| panic!("{e}\n--- source:\n{src}"));
        let text = assert_reparses(&parsed);
        let again = parse_str("gen.f", &text).unwrap();
        prop_assert_eq!(lowered(&again), Ok(before));
    }
}

// ---- every .f file of the repository ----

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn f_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let p = e.expect("a readable directory entry").path();
        if p.is_dir() && p.file_name().is_some_and(|n| n != "target" && n != ".git") {
            f_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "f") {
            out.push(p);
        }
    }
}

/// Checks one file: if it parses, it reprints to the same tree, and lowers (or fails to)
/// the same way. Returns `None` if it does not parse, else whether it lowered.
fn check_file(path: &Path) -> Option<bool> {
    let parsed = parse_file(path).ok()?;
    let text = assert_reparses(&parsed);
    let again = parse_str(&parsed.file, &text).unwrap();
    match (lowered(&parsed), lowered(&again)) {
        (Ok(a), Ok(b)) => {
            assert_eq!(
                a,
                b,
                "{}: lowers differently after printing",
                path.display()
            );
            Some(true)
        }
        (Err(_), Err(_)) => Some(false),
        (a, b) => panic!(
            "{}: lowering before and after printing disagree:\n{a:?}\n{b:?}",
            path.display()
        ),
    }
}

#[test]
fn every_repository_workload_round_trips() {
    let root = repo_root();
    let mut files = Vec::new();
    for dir in ["workloads", "examples", "crates"] {
        f_files(&root.join(dir), &mut files);
    }
    files.sort();
    let results: Vec<Option<bool>> = files.iter().map(|f| check_file(f)).collect();
    let parsed = results.iter().filter(|r| r.is_some()).count();
    let lowered = results.iter().filter(|r| **r == Some(true)).count();
    // The malformed corpus adds files that parse but fail later; workloads/ all lower.
    assert!(
        parsed >= 20,
        "only {parsed} of {} files parsed",
        files.len()
    );
    assert!(
        lowered >= 9,
        "only {lowered} of {} files lowered",
        files.len()
    );
}

#[test]
fn filebench_corpus_round_trips() {
    let Some(dir) = iolab_testkit::filebench_corpus() else {
        return;
    };
    let mut files = Vec::new();
    f_files(&dir, &mut files);
    for f in &files {
        assert_eq!(check_file(f), Some(true), "{}: does not lower", f.display());
    }
}
