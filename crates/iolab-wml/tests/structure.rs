//! The tree built from real workloads has the expected shape, not just "no error":
//! counts, names, operations, resolved values and spans, checked against filebench's own
//! workload files (`$IOLAB_FILEBENCH_CORPUS`, see iolab-testkit).

use iolab_wml::{
    find_attr, load_file, Attr, BinOp, CommandKind, Env, Expr, FilesetKind, Parsed, Span,
    StaticValue, TextPart, ValueKind, WarningKind,
};

/// The corpus file `name`, parsed; `None` when the corpus is not here (the test does not run).
fn load(name: &str) -> Option<(Parsed, Env)> {
    let path = iolab_testkit::filebench_corpus()?.join(name);
    let (parsed, _) = load_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let env = Env::new(&parsed);
    Some((parsed, env))
}

/// The resolved value of attribute `name`.
fn val(env: &Env, attrs: &[Attr], name: &str) -> StaticValue {
    let a = find_attr(attrs, name).unwrap_or_else(|| panic!("no attribute `{name}`"));
    env.resolve(a.value.as_ref().expect("attribute has a value"))
}

fn int(env: &Env, attrs: &[Attr], name: &str) -> i64 {
    match val(env, attrs, name) {
        StaticValue::Int(n) => n,
        other => panic!("`{name}` is {other:?}"),
    }
}

fn string(env: &Env, attrs: &[Attr], name: &str) -> String {
    match val(env, attrs, name) {
        StaticValue::Str(s) => s,
        other => panic!("`{name}` is {other:?}"),
    }
}

#[test]
fn varmail() {
    let Some((p, env)) = load("varmail.f") else {
        return;
    };
    let filesets: Vec<_> = p.filesets().collect();
    assert_eq!(filesets.len(), 1);
    let fs = filesets[0];
    assert_eq!(fs.kind, FilesetKind::Fileset);
    assert_eq!(string(&env, &fs.attrs, "name"), "bigfileset");
    assert_eq!(string(&env, &fs.attrs, "path"), "/tmp");
    assert_eq!(int(&env, &fs.attrs, "entries"), 1000);
    assert_eq!(int(&env, &fs.attrs, "dirwidth"), 1_000_000);
    assert_eq!(int(&env, &fs.attrs, "prealloc"), 80);
    assert_eq!(val(&env, &fs.attrs, "size"), StaticValue::Random);

    let procs: Vec<_> = p.processes().collect();
    assert_eq!(procs.len(), 1);
    assert_eq!(string(&env, &procs[0].attrs, "name"), "filereader");
    assert_eq!(int(&env, &procs[0].attrs, "instances"), 1);
    assert_eq!(procs[0].threads.len(), 1);
    let t = &procs[0].threads[0];
    assert_eq!(string(&env, &t.attrs, "name"), "filereaderthread");
    assert_eq!(int(&env, &t.attrs, "instances"), 16);
    assert_eq!(int(&env, &t.attrs, "memsize"), 10 << 20);
    let ops: Vec<&str> = t.flowops.iter().map(|f| f.op.as_str()).collect();
    assert_eq!(
        ops,
        [
            "deletefile",
            "createfile",
            "appendfilerand",
            "fsync",
            "closefile",
            "openfile",
            "readwholefile",
            "appendfilerand",
            "fsync",
            "closefile",
            "openfile",
            "readwholefile",
            "closefile"
        ]
    );
    let create = &t.flowops[1];
    assert_eq!(string(&env, &create.attrs, "name"), "createfile2");
    assert_eq!(string(&env, &create.attrs, "filesetname"), "bigfileset");
    assert_eq!(int(&env, &create.attrs, "fd"), 1);
    assert_eq!(int(&env, &t.flowops[6].attrs, "iosize"), 1 << 20);
    assert_eq!(int(&env, &t.flowops[2].attrs, "iosize"), 16 << 10);

    let run = p.commands.last().unwrap();
    let CommandKind::Run(Some(secs)) = &run.kind else {
        panic!("last command is {:?}", run.kind)
    };
    assert_eq!(env.resolve(secs), StaticValue::Int(60));
    let CommandKind::Echo(text) = &p.commands[p.commands.len() - 2].kind else {
        panic!("echo before run")
    };
    assert_eq!(
        text.as_literal().as_deref(),
        Some("Varmail Version 3.0 personality successfully loaded")
    );

    // The cvar behind `size`.
    let CommandKind::Set(s) = &p.commands[3].kind else {
        panic!()
    };
    assert_eq!(s.name, "filesize");
    let ValueKind::Cvar(c) = &s.value.kind else {
        panic!("{:?}", s.value.kind)
    };
    assert_eq!(string(&env, &c.attrs, "type"), "cvar-gamma");
    assert_eq!(string(&env, &c.attrs, "parameters"), "mean:16384;gamma:1.5");
}

#[test]
fn compflow_demo_composites_and_locals() {
    let Some((p, env)) = load("compflow_demo.f") else {
        return;
    };
    assert_eq!(p.filesets().count(), 3);
    let comps: Vec<_> = p.composites().collect();
    assert_eq!(comps.len(), 2);
    assert_eq!(string(&env, &comps[0].attrs, "name"), "readwrite");
    let locals: Vec<&str> = comps[0].locals.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(locals, ["fileset"]);
    assert_eq!(comps[0].flowops.len(), 6);
    let dowork = comps[1];
    let locals: Vec<&str> = dowork.locals.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(locals, ["filesetnm", "rwiters"]);
    // `flowop readwrite name=rw1, iters=$rwiters, $fileset=$filesetnm`
    let rw = &dowork.flowops[3];
    assert_eq!(rw.op, "readwrite");
    assert_eq!(rw.locals.len(), 1);
    assert_eq!(rw.locals[0].name, "fileset");
    assert_eq!(
        rw.locals[0].value.as_ref().unwrap().kind,
        ValueKind::Var("filesetnm".into())
    );
    let iters = find_attr(&rw.attrs, "iters").unwrap();
    assert_eq!(
        iters.value.as_ref().unwrap().kind,
        ValueKind::Var("rwiters".into())
    );

    let procs: Vec<_> = p.processes().collect();
    assert_eq!(procs.len(), 1);
    assert_eq!(procs[0].threads.len(), 3);
    let args: Vec<(i64, String)> = procs[0]
        .threads
        .iter()
        .map(|t| {
            let f = &t.flowops[0];
            assert_eq!(f.op, "dowork");
            let get = |n: &str| {
                let l = f.locals.iter().find(|l| l.name == n).unwrap();
                env.resolve(l.value.as_ref().unwrap())
            };
            let StaticValue::Int(iters) = get("rwiters") else {
                panic!()
            };
            let StaticValue::Str(fs) = get("filesetnm") else {
                panic!()
            };
            (iters, fs)
        })
        .collect();
    assert_eq!(
        args,
        [
            (5, "bigfileset".to_string()),
            (4, "u2fileset".to_string()),
            (3, "u3fileset".to_string())
        ]
    );
    assert!(!p.commands.iter().any(|c| c.kind.ends_script()), "no run");
}

#[test]
fn networkfs_legacy_randvars_and_arithmetic() {
    let Some((p, env)) = load("networkfs.f") else {
        return;
    };
    let randvars: Vec<_> = p
        .commands
        .iter()
        .filter_map(|c| match &c.kind {
            CommandKind::Set(s) if s.legacy => Some(s),
            _ => None,
        })
        .collect();
    let names: Vec<&str> = randvars.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["wrtiosize", "rdiosize", "filesize", "fileidx"]);
    let ValueKind::Randvar(r) = &randvars[0].value.kind else {
        panic!()
    };
    assert_eq!(string(&env, &r.attrs, "type"), "tabular");
    assert_eq!(int(&env, &r.attrs, "round"), 1024);
    let rows = r.table().unwrap();
    let pct: Vec<StaticValue> = rows.iter().map(|r| env.resolve(&r.percent)).collect();
    assert_eq!(pct, [0, 50, 14, 14, 12, 10].map(StaticValue::Int).to_vec());
    assert_eq!(env.resolve(&rows[5].high), StaticValue::Int(135 << 10));
    assert_eq!(env.get("filesize"), Some(&StaticValue::Random));

    // `set $totalfiles=$nfiles * $eventrate`, evaluated eagerly.
    let CommandKind::Set(total) = &p.commands[7].kind else {
        panic!()
    };
    assert_eq!(total.name, "totalfiles");
    let ValueKind::Expr(e) = &total.value.kind else {
        panic!()
    };
    assert!(matches!(**e, Expr::Binary { op: BinOp::Mul, .. }));
    assert_eq!(env.get("totalfiles"), Some(&StaticValue::Int(100_000)));
    let fs = p.filesets().next().unwrap();
    assert_eq!(int(&env, &fs.attrs, "entries"), 100_000);
    assert_eq!(p.composites().count(), 3);
    assert!(iolab_wml::validate(&p)
        .unwrap()
        .iter()
        .any(|w| w.kind == WarningKind::Legacy && w.message.contains("arithmetic")));
}

#[test]
fn netsfs_master_dialect_randvars() {
    let Some((p, env)) = load("netsfs.f") else {
        return;
    };
    let warnings = iolab_wml::validate(&p).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let CommandKind::Set(s) = &p.commands[8].kind else {
        panic!()
    };
    assert_eq!(s.name, "rdiosize");
    assert!(!s.legacy);
    let ValueKind::Randvar(r) = &s.value.kind else {
        panic!()
    };
    let rows = r.table().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(env.resolve(&rows[0].low), StaticValue::Int(8192));
    assert_eq!(env.get("fileidx"), Some(&StaticValue::Random));
    let CommandKind::Eventgen(attrs) = &p.commands[6].kind else {
        panic!()
    };
    assert_eq!(int(&env, attrs, "rate"), 10);
}

#[test]
fn createdelete_swing_spans_and_targets() {
    let Some((p, env)) = load("createdelete-swing.f") else {
        return;
    };
    let procs: Vec<_> = p.processes().collect();
    let names: Vec<String> = procs
        .iter()
        .map(|p| string(&env, &p.attrs, "name"))
        .collect();
    assert_eq!(names, ["crproc", "delproc"]);
    assert!(find_attr(&procs[0].attrs, "instances").is_none());
    let wakeup = &procs[0].threads[0].flowops[1];
    assert_eq!(wakeup.op, "wakeup");
    assert_eq!(wakeup.span, Span::new(83, 3));
    let target = find_attr(&wakeup.attrs, "target").unwrap();
    assert_eq!(target.span, Span::new(84, 10));
    assert_eq!(target.value.as_ref().unwrap().span, Span::new(84, 17));
    assert_eq!(string(&env, &wakeup.attrs, "target"), "delprocblock");
    let fs = p.filesets().next().unwrap();
    assert_eq!(fs.span, Span::new(51, 1));
    assert_eq!(
        find_attr(&fs.attrs, "dirgamma").unwrap().span,
        Span::new(56, 9)
    );
    assert_eq!(int(&env, &fs.attrs, "dirgamma"), 0);
    let comp = p.composites().next().unwrap();
    assert_eq!(comp.flowops.len(), 4);
    let CommandKind::Run(Some(secs)) = &p.commands.last().unwrap().kind else {
        panic!()
    };
    assert_eq!(env.resolve(secs), StaticValue::Int(60));
}

#[test]
fn oltp_processes_and_sync_flowops() {
    let Some((p, env)) = load("oltp.f") else {
        return;
    };
    let procs: Vec<_> = p.processes().collect();
    let shape: Vec<(String, i64, usize)> = procs
        .iter()
        .map(|pr| {
            (
                string(&env, &pr.attrs, "name"),
                int(&env, &pr.attrs, "instances"),
                pr.threads[0].flowops.len(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            ("lgwr".to_string(), 1, 3),
            ("dbwr".to_string(), 10, 4),
            ("shadow".to_string(), 200, 5)
        ]
    );
    let dbwr = &procs[1].threads[0];
    assert!(find_attr(&dbwr.attrs, "useism").unwrap().value.is_none());
    let aio = &dbwr.flowops[0];
    assert_eq!(aio.op, "aiowrite");
    assert_eq!(int(&env, &aio.attrs, "iters"), 100);
    assert_eq!(int(&env, &aio.attrs, "directio"), 0);
    assert!(find_attr(&aio.attrs, "opennext").unwrap().value.is_none());
    let sem = &dbwr.flowops[2];
    assert_eq!(sem.op, "semblock");
    assert_eq!(int(&env, &sem.attrs, "highwater"), 2000);
    let post = &procs[2].threads[0].flowops[3];
    assert_eq!(string(&env, &post.attrs, "target"), "dbwr-block");
    assert!(find_attr(&post.attrs, "blocking").is_some());
}

#[test]
fn tpcso_files_and_debug() {
    let Some((p, env)) = load("tpcso.f") else {
        return;
    };
    let files: Vec<_> = p.filesets().collect();
    assert_eq!(files.len(), 30);
    assert!(files.iter().all(|f| f.kind == FilesetKind::File));
    assert_eq!(string(&env, &files[0].attrs, "name"), "aux.df");
    assert_eq!(int(&env, &files[17].attrs, "size"), 44301 << 20);
    assert!(p.commands.iter().any(
        |c| matches!(&c.kind, CommandKind::Debug(v) if env.resolve(v) == StaticValue::Int(1))
    ));
    // No `run`: the file only defines.
    assert!(!p.commands.iter().any(|c| c.kind.ends_script()));
}

#[test]
fn seqwriterandvartab_leading_zero_percent() {
    let Some((p, env)) = load("filemicro_seqwriterandvartab.f") else {
        return;
    };
    let ValueKind::Randvar(r) = &p
        .commands
        .iter()
        .find_map(|c| match &c.kind {
            CommandKind::Set(s) if s.name == "iosize" => Some(s),
            _ => None,
        })
        .unwrap()
        .value
        .kind
    else {
        panic!()
    };
    let pct: Vec<StaticValue> = r
        .table()
        .unwrap()
        .iter()
        .map(|row| env.resolve(&row.percent))
        .collect();
    assert_eq!(pct, [80, 15, 5].map(StaticValue::Int).to_vec());
}

#[test]
fn cvar_example_and_echo_text() {
    let Some((p, env)) = load("cvar_example.f") else {
        return;
    };
    assert_eq!(env.get("iosize"), Some(&StaticValue::Random));
    let f = p.filesets().next().unwrap();
    assert_eq!(f.kind, FilesetKind::File);
    assert_eq!(int(&env, &f.attrs, "size"), 100 << 20);
    assert!(find_attr(&f.attrs, "prealloc").unwrap().value.is_none());
    let Some((p, _)) = load("webserver.f") else {
        return;
    };
    let echo = p
        .commands
        .iter()
        .find_map(|c| match &c.kind {
            CommandKind::Echo(t) => Some(t),
            _ => None,
        })
        .unwrap();
    assert!(matches!(&echo.parts[..], [TextPart::Lit(s)] if s.starts_with("Web-server")));
}
