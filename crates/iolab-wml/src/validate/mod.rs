//! Checks a parsed file for everything the grammar cannot see: unknown flowops and
//! attributes, references to filesets, flowops and variables that do not exist, values of
//! the wrong type or out of range, and missing required attributes.
//!
//! Only what filebench would execute is checked: commands after the first `run`, `psrun`
//! or `quit` are never reached. Composite flowops are checked once as defined and again at
//! each use with their local variables bound, so that `filesetname=$fs` is checked against
//! the fileset actually passed in.
//!
//! A first pass builds the symbol tables ([`context`]), so that references may point forward
//! as filebench resolves them lazily; then each command goes, in file order, to the visitor
//! of its section: [`variables`] (`set`), [`filesets`] (`define fileset|file`), [`processes`]
//! (`define process`, `define flowop`) and [`commands`] (`run`, `psrun`, the prelude and the
//! ignored ones). They share the context's tables and diagnostics; [`values`] holds the
//! checks they all make (attribute lists, variable references).

mod commands;
mod context;
mod filesets;
mod processes;
mod values;
mod variables;

use crate::ast::*;
use crate::error::{ErrorKind, Warning, WmlErrors};

use context::Ctx;
use filesets::Filesets;
use processes::Processes;
use variables::Variables;

#[cfg(test)]
use {crate::error::WmlError, iolab_workload::model::FlowopKind};

/// Knobs for [`validate_with`].
#[derive(Debug, Clone, Default)]
pub struct ValidateOptions {
    /// Variables the caller will set (e.g. `--set dir=/mnt`), so references to them are not
    /// errors when the file itself does not set them.
    pub predefined: Vec<String>,
}

/// Validates with default options. See [`validate_with`].
pub fn validate(parsed: &Parsed) -> Result<Vec<Warning>, WmlErrors> {
    validate_with(parsed, &ValidateOptions::default())
}

/// Returns all warnings (the parser's and validation's, sorted by location), or every
/// error found.
pub fn validate_with(parsed: &Parsed, opts: &ValidateOptions) -> Result<Vec<Warning>, WmlErrors> {
    let mut cx = Ctx::new(parsed, opts);
    check_commands(&mut cx);
    let Ctx {
        errors,
        mut warnings,
        ..
    } = cx;
    if let Some(errors) = WmlErrors::from_vec(errors) {
        return Err(errors);
    }
    warnings.extend(parsed.warnings.iter().cloned());
    warnings.sort_by(|a, b| (a.span, &a.message).cmp(&(b.span, &b.message)));
    warnings.dedup();
    Ok(warnings)
}

/// Every live command, in file order, to the visitor of its section.
fn check_commands<'a>(cx: &mut Ctx<'a>) {
    commands::never_executed(cx);
    for (arith_span, msg) in cx.env.errors.clone() {
        cx.error(ErrorKind::InvalidValue, arith_span, "/", msg);
    }
    let mut variables = Variables::new(cx);
    let mut filesets = Filesets::default();
    let mut processes = Processes::default();
    let live: &'a [Command] = cx.p.live_commands();
    for (idx, c) in live.iter().enumerate() {
        match &c.kind {
            CommandKind::Set(s) => variables.visit(cx, s),
            CommandKind::DefineFileset(f) => filesets.visit(cx, f),
            CommandKind::DefineComposite(d) => processes.composite_def(cx, d, idx),
            CommandKind::DefineProcess(p) => processes.process(cx, p, idx),
            _ => commands::visit(cx, c),
        }
    }
    processes.finish(cx);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_str;

    const FILE: &str = "define file name=f1,path=/tmp,size=1m\n";

    fn check(src: &str) -> Result<Vec<Warning>, WmlErrors> {
        validate(&parse_str("t.f", src).unwrap())
    }

    fn warnings(src: &str) -> Vec<String> {
        match check(src) {
            Ok(w) => w.into_iter().map(|w| w.message).collect(),
            Err(e) => panic!("{e}"),
        }
    }

    fn errors(src: &str) -> Vec<WmlError> {
        check(src).expect_err("expected errors").into_vec()
    }

    fn process(body: &str) -> String {
        format!("{FILE}define process name=p {{ thread name=t {{ {body} }} }}\n")
    }

    #[test]
    fn all_errors_are_reported_in_order() {
        let e = errors(&process(
            "flowop read name=r,filesetname=nope,fd=300\n flowop bogus name=b",
        ));
        let msgs: Vec<&str> = e.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert!(msgs[0].contains("unknown fileset `nope`"));
        assert!(msgs[1].contains("`fd` must be between 0 and 127"));
        assert!(msgs[2].contains("unknown flowop `bogus`"));
    }

    #[test]
    fn ignored_and_suspicious_constructs_warn() {
        let w = warnings(
            "set mode nousestats\nenable multi master=a, client=b\n\
             define fileset name=a,path=/tmp,entries=1,cached=true\n\
             run 5\necho \"done\"\n",
        );
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w[0].contains("nousestats"));
        assert!(w[1].contains("multi-client"));
        assert!(w[2].contains("without `dirwidth`"));
        assert!(w[3].contains("`cached`"));
        assert!(w[4].starts_with("never executed"));
    }

    #[test]
    fn predefined_variables_are_known() {
        let p = parse_str("t.f", "define fileset name=a,path=$dir,dirwidth=1").unwrap();
        assert!(validate(&p).is_err());
        let opts = ValidateOptions {
            predefined: vec!["dir".into()],
        };
        assert!(validate_with(&p, &opts).is_ok());
    }

    #[test]
    fn set_reads_only_what_is_set_above_it() {
        let e = errors("set $a = $a\n");
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].kind, ErrorKind::UnknownVariable);
        assert_eq!(e[0].message, "unknown variable `$a`");
        assert_eq!(e[0].span, Span::new(1, 10));
        assert!(e[0].hint.as_deref().unwrap().contains("has no value yet"));
        let e = errors("set $b = $a * 2\nset $a = 4\n");
        assert_eq!(e[0].span, Span::new(1, 10));
        assert!(
            e[0].hint.as_deref().unwrap().contains("first set at 2:5"),
            "{:?}",
            e[0].hint
        );
        // In order, or set by the caller: fine.
        warnings("set $a = 4\nset $b = $a * 2\nset $a = $a + 1\n");
        let p = parse_str("t.f", "set $a = $a + 1\n").unwrap();
        let opts = ValidateOptions {
            predefined: vec!["a".into()],
        };
        assert!(validate_with(&p, &opts).is_ok());
    }

    #[test]
    fn run_needs_a_positive_time() {
        let e = errors("run 0\n");
        assert_eq!(
            e[0].message,
            "`run` needs a run time of at least 1 s, found 0"
        );
        assert_eq!(e[0].span, Span::new(1, 5));
        let e = errors("psrun 10 0\n");
        assert_eq!(
            e[0].message,
            "`psrun` needs a run time of at least 1 s, found 0"
        );
        warnings("run\n");
        warnings("psrun -10\n");
    }

    #[test]
    fn forward_references_are_fine() {
        // filebench resolves lazily: the fileset and the variable may come later.
        warnings(
            "define process name=p { thread name=t { flowop read name=r,filesetname=late,iosize=$io } }\n\
             define file name=late,path=/tmp\nset $io = 4k\nrun 1\n"
        );
    }

    #[test]
    fn composite_inner_flowops_are_targets() {
        warnings(&format!(
            "{FILE}define flowop name=c {{ flowop block name=wait }}\n\
             define process name=p {{\n\
               thread name=a {{ flowop c name=outer }}\n\
               thread name=b {{ flowop wakeup name=w,target=outer.wait }}\n}}\n"
        ));
    }

    #[test]
    fn composite_must_be_defined_before_use() {
        let e = errors(&format!(
            "{}define flowop name=later {{ flowop hog name=h,value=1 }}\n",
            process("flowop later name=x")
        ));
        assert_eq!(e.len(), 1);
        assert!(e[0]
            .hint
            .as_deref()
            .unwrap()
            .contains("define it before its use"));
    }

    #[test]
    fn composite_use_drops_io_attributes_with_a_warning() {
        let w = warnings(&format!(
            "define flowop name=c {{ flowop hog name=h,value=1 }}\n{}",
            process("flowop c name=x,iosize=4k")
        ));
        assert!(w.iter().any(|m| m.contains("`iosize` is ignored")), "{w:?}");
    }

    #[test]
    fn composite_arguments_are_checked_where_used() {
        // `fd=$slot` is fine as defined; the value 300 passed in is out of range.
        let e = errors(&format!(
            "define flowop name=c, $slot {{ flowop closefile name=cl,fd=$slot }}\n{}",
            process("flowop c name=x, $slot=300")
        ));
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("found 300"));
        assert_eq!(e[0].span, Span::new(1, 59));
        assert_eq!(
            e[0].hint.as_deref(),
            Some("in composite flowop `c` as used at 3:48")
        );
    }

    #[test]
    fn variables_resolve_for_type_checks() {
        let e = errors(&format!(
            "set $mode = fast\n{}",
            process("flowop read name=r,filesetname=f1,random=$mode")
        ));
        assert!(e[0].message.contains("`$mode` (= \"fast\")"), "{}", e[0]);
        warnings(&format!(
            "set $directio = 0\nset $fd = 3\n{}",
            process("flowop read name=r,filesetname=f1,directio=$directio,fd=$fd")
        ));
    }

    #[test]
    fn print_takes_a_string_value() {
        warnings(&process("flowop print name=p,value=hello"));
        let e = errors(&process("flowop hog name=h,value=hello"));
        assert!(e[0].message.contains("expected a number for `value`"));
    }

    #[test]
    fn every_builtin_flowop_is_known_by_its_one_name() {
        for name in FlowopKind::names() {
            let src = process(&format!(
                "flowop {name} name=x,filesetname=f1,target=x,value=1"
            ));
            let e = check(&src).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(!e.contains("unknown flowop"), "{name}: {e}");
            let def = format!("define flowop name={name} {{ flowop hog name=h,value=1 }}\n");
            assert!(
                errors(&def)[0].message.contains("is a built-in flowop"),
                "{name}"
            );
        }
    }

    /// iolab issue 25: `deletefilesync` (no filebench flowop has that name) got no hint.
    #[test]
    fn an_unknown_flowop_always_gets_a_hint() {
        let e = errors(&process("flowop deletefilesync name=d,filesetname=f1"));
        assert_eq!(e[0].message, "unknown flowop `deletefilesync`");
        assert_eq!(
            e[0].hint.as_deref(),
            Some("filebench has no flowop `deletefilesync`; did you mean `deletefile`?")
        );
        let e = errors(&format!(
            "define flowop name=mine {{ flowop hog name=h,value=1 }}\n{}",
            process("flowop frobnicate name=x")
        ));
        let hint = e[0].hint.as_deref().unwrap();
        assert!(hint.starts_with("the flowops are `"), "{hint}");
        assert!(hint.contains("`readwholefile`"), "{hint}");
        assert!(
            hint.ends_with("the composite flowops defined above: `mine`"),
            "{hint}"
        );
        // A misspelling keeps its suggestion.
        let e = errors(&process("flowop readwholfile name=r,filesetname=f1"));
        assert_eq!(e[0].hint.as_deref(), Some("did you mean `readwholefile`?"));
    }

    /// iolab issue 25: the warning came once per flowop of the thread.
    #[test]
    fn an_unknown_fileset_of_a_thread_that_never_starts_is_warned_once() {
        let w = warnings(&format!(
            "{FILE}define process name=p,instances=0 {{ thread name=t {{\n\
               flowop read name=r,filesetname=nope,iosize=1k\n\
               flowop write name=w,filesetname=nope,iosize=1k\n\
               flowop statfile name=s,filesetname=nope\n\
               flowop statfile name=s2,filesetname=other\n}} }}\n"
        ));
        let nope: Vec<&String> = w.iter().filter(|m| m.contains("`nope`")).collect();
        assert_eq!(nope.len(), 1, "{w:?}");
        assert!(
            nope[0].ends_with("(and 2 more at 4:33, 5:36)"),
            "{}",
            nope[0]
        );
        assert_eq!(
            w.iter().filter(|m| m.contains("`other`")).count(),
            1,
            "{w:?}"
        );
    }

    #[test]
    fn repeated_attribute_warns() {
        let w = warnings(&process(
            "flowop read name=r,filesetname=f1,iosize=1k,iosize=2k",
        ));
        assert!(w[0].contains("given twice"), "{w:?}");
    }

    #[test]
    fn finish_without_value_warns() {
        let w = warnings(&process("flowop finishoncount name=f"));
        assert!(w[0].contains("finishes the thread at once"), "{w:?}");
    }

    #[test]
    fn file_takes_fileset_attributes_with_a_warning() {
        let w = warnings("define file name=a,path=/tmp,entries=5\n");
        assert!(w[0].contains("no effect on `define file`"), "{w:?}");
    }

    #[test]
    fn randvar_choices_and_sources() {
        warnings("set $r = randvar(type=uniform, min=1, mean=5, randsrc=urandom, seed=3)\n");
        let e = errors("set $r = randvar(type=gamma, randsrc=dev)\n");
        assert!(e[0].message.contains("unknown `randsrc` `dev`"), "{}", e[0]);
        let e = errors("set $r = randvar(type=uniform, randtable={{100,1,2}})\n");
        assert!(e[0].message.contains("needs `type=tabular`"));
    }

    #[test]
    fn cvar_parameters_must_be_numbers() {
        let e = errors("set $c = cvar(type=cvar-normal, parameters=mean:x;sigma:1)\n");
        assert_eq!(e.len(), 1);
        assert!(e[0].message.contains("needs a number"));
        assert_eq!(e[0].span, Span::new(1, 44));
    }

    #[test]
    fn unknown_echo_variable_is_only_a_warning() {
        let w = warnings("echo \"dir is $dir\"\n");
        assert!(w[0].contains("`$dir` is not set"));
    }

    #[test]
    fn display_of_all_errors() {
        let e = check("define fileset name=a\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.f:1:1: error: `define fileset` needs `path`\n  hint: add `path=…`"
        );
    }
}
