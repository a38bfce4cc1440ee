//! Reading an experiment file into an [`ExperimentPlan`]: parse (TOML into a spanned tree),
//! validate (every section, every configuration), resolve (the plan and its JSON record).
//!
//! Errors are collected rather than returned at the first, but a mistake that would make
//! later checks meaningless stops them: with a broken factor or placeholder the configurations
//! are not built, so one mistake gives one error.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use iolab_stats::{Level, StatsError, StoppingRule};
use iolab_sut::target::{Target, TmpfsSize};
use serde_json::{json, Value as Json};

use crate::kind::{self, Kind, LoadContext};
use crate::plan::error::{one, ExperimentError, ExperimentErrors, Source};
use crate::plan::factors::{self, Factor, Rule, MAX_CONFIGS};
use crate::plan::read::Ctx;
use crate::plan::tree::{self, Entry, Node, Table};
use crate::plan::{subst, sut};
use crate::plan::{ConfigPlan, ExperimentPlan, Order, Procedure, Repetitions, Stage, DEFAULT_SEED};

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "factors",
    "exclude",
    "sut",
    "workload",
    "repetitions",
    "procedure",
    "then",
];
const REPETITION_KEYS: &[&str] = &["min", "max", "target", "metric", "time_budget"];
const PROCEDURE_KEYS: &[&str] = &[
    "order",
    "fresh_fs",
    "warmup",
    "drop_caches",
    "save_block_trace",
    "trace_syscalls",
];

/// Reads, validates and resolves the experiment file at `path`.
pub fn load(path: &Path) -> Result<ExperimentPlan, ExperimentErrors> {
    match std::fs::read(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => load_str(path, &text),
            Err(e) => Err(one(ExperimentError::new(
                path,
                0,
                0,
                format!(
                    "not UTF-8 text (byte {}), as TOML must be",
                    e.utf8_error().valid_up_to()
                ),
            ))),
        },
        Err(e) => Err(one(ExperimentError::new(
            path,
            0,
            0,
            format!("cannot read the experiment file: {e}"),
        ))),
    }
}

/// Like [`load`], with the text given. `source_name` names the file in errors, and workload
/// and directory paths are resolved against its directory.
pub fn load_str(source_name: &Path, text: &str) -> Result<ExperimentPlan, ExperimentErrors> {
    let src = Source::new(source_name, text);
    let root = match tree::parse(text) {
        Ok(r) => r,
        Err(e) => {
            return Err(one(src
                .error(&e.span, format!("invalid TOML: {}", e.message))
                .hint("see docs/experiments.md for the file's format")));
        }
    };
    let base = match source_name.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Absolute, so that the resolved paths (and the stored spec that `--resume` compares) do
    // not depend on the directory iolab was started from.
    let base = base.canonicalize().unwrap_or(base);
    let mut cx = Ctx::new(&src);
    let plan = build(&mut cx, &root, &base, None).and_then(|mut plan| {
        plan.then = stages(&mut cx, &root, &base, &plan)?;
        plan.text = Some(Arc::from(text));
        Some(plan)
    });
    match (
        ExperimentErrors::from_vec(cx.diag.errors, source_name),
        plan,
    ) {
        (Some(errors), _) => Err(errors),
        (None, Some(plan)) => Ok(plan),
        // Every path that gives up records why; this only guards against a slip in that.
        (None, None) => Err(one(src.error(
            &(0..0),
            "internal error: the experiment was rejected without a reason",
        ))),
    }
}

/// What a `[[then]]` stage may refer to: the stage before it.
struct StageCx<'a> {
    /// 1 for the first `[[then]]` table.
    index: usize,
    /// The stage before: the experiment itself or the previous `[[then]]` table.
    previous: &'a Stage,
    /// What `${previous.trace}` stands for: the real trace, or a stand-in while the file is
    /// checked before anything has run.
    trace: String,
}

/// The name `${previous.…}` placeholders use.
const PREVIOUS: &str = "previous";

/// Checks every `[[then]]` table as an experiment of its own, with a stand-in for what the
/// stage before it leaves (its block trace), so that a mistake in the last stage is found
/// before the first one runs.
fn stages(cx: &mut Ctx, root: &Node, base: &Path, first: &ExperimentPlan) -> Option<Vec<Stage>> {
    let Some(entry) = root.value.as_table().and_then(|t| t.get("then")) else {
        return Some(Vec::new());
    };
    let nodes = match &entry.node.value {
        tree::Value::Array(a) if a.iter().all(|n| n.value.as_table().is_some()) => a,
        other => {
            cx.error_hint(
                &entry.node.span,
                format!(
                    "`then` must be an array of tables, not {}",
                    other.type_name()
                ),
                "write each stage as [[then]] followed by its keys, like an experiment's",
            );
            return None;
        }
    };
    let mut out: Vec<Stage> = Vec::with_capacity(nodes.len());
    let mut previous = Stage::of(first);
    for (i, node) in nodes.iter().enumerate() {
        let scx = StageCx {
            index: i + 1,
            previous: &previous,
            trace: stand_in(i + 1),
        };
        let plan = build(cx, node, base, Some(&scx))?;
        let stage = Stage {
            uses_previous_trace: plan.uses_previous_trace,
            ..Stage::of(&plan)
        };
        out.push(stage.clone());
        previous = stage;
    }
    Some(out)
}

/// What `${previous.trace}` stands for in stage `index` before the stage before it has run.
fn stand_in(index: usize) -> String {
    format!("(the block trace of stage {index})")
}

/// Reads stage `index` (1-based: the first `[[then]]`) of the experiment again, now that the
/// stage before it has run: `${previous.trace}` is `trace` (without one, a stand-in that is
/// good for checking the stage, not for running it).
pub fn stage(
    plan: &ExperimentPlan,
    index: usize,
    trace: Option<&Path>,
) -> Result<ExperimentPlan, ExperimentErrors> {
    let (Some(text), Some(_)) = (&plan.text, plan.then.get(index.wrapping_sub(1))) else {
        return Err(one(ExperimentError::new(
            &plan.source,
            0,
            0,
            format!("internal error: the experiment has no stage {index}"),
        )));
    };
    let src = Source::new(&plan.source, text);
    let root = tree::parse(text).map_err(|e| one(src.error(&e.span, e.message)))?;
    let base = plan
        .source
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let base = base.canonicalize().unwrap_or(base);
    let node = root
        .value
        .as_table()
        .and_then(|t| t.get("then"))
        .and_then(|e| match &e.node.value {
            tree::Value::Array(a) => a.get(index - 1),
            _ => None,
        });
    let previous = if index == 1 {
        Stage::of(plan)
    } else {
        plan.then[index - 2].clone()
    };
    let scx = StageCx {
        index,
        previous: &previous,
        trace: trace.map_or_else(|| stand_in(index), |p| p.display().to_string()),
    };
    let mut cx = Ctx::new(&src);
    let built = node.and_then(|n| build(&mut cx, n, &base, Some(&scx)));
    match (
        ExperimentErrors::from_vec(cx.diag.errors, &plan.source),
        built,
    ) {
        (Some(errors), _) => Err(errors),
        (None, Some(mut p)) => {
            p.text = Some(text.clone());
            p.stage_at = Some((index, trace.map(Path::to_path_buf)));
            Ok(p)
        }
        (None, None) => Err(one(src.error(
            &(0..0),
            format!("internal error: stage {index} was rejected without a reason"),
        ))),
    }
}

fn build(
    cx: &mut Ctx,
    root: &Node,
    base: &Path,
    stage: Option<&StageCx>,
) -> Option<ExperimentPlan> {
    let t = root.value.as_table()?;
    match stage {
        None => cx.unknown_keys(t, TOP_KEYS, ""),
        Some(s) => {
            if let Some(e) = t.get("then") {
                cx.error_hint(
                    &e.key_span,
                    "a [[then]] stage cannot have stages of its own",
                    "write every stage as a [[then]] table at the top level; they run in order",
                );
            }
            let keys: Vec<&str> = TOP_KEYS.iter().copied().filter(|k| *k != "then").collect();
            cx.unknown_keys(t, &keys, &format!("then[{}]", s.index));
        }
    }
    let name = t
        .get("name")
        .and_then(|e| cx.string(e, "name"))
        .map(str::to_string)
        .unwrap_or_else(|| {
            let stem = cx
                .src
                .path
                .file_stem()
                .map_or("experiment".into(), |s| s.to_string_lossy().into_owned());
            match stage {
                None => stem,
                Some(s) => format!("{stem} (stage {})", s.index + 1),
            }
        });
    let description = t
        .get("description")
        .and_then(|e| cx.string(e, "description"))
        .map(str::to_string);
    let seed = t
        .get("seed")
        .map_or(Some(DEFAULT_SEED as i64), |e| {
            cx.integer(e, "seed", 0, i64::MAX)
        })
        .map(|s| s as u64);

    let matrix_errors = cx.errors();
    let factors = match t.get("factors") {
        None => Some(Vec::new()),
        Some(e) => factors::read_factors(cx, e),
    };
    let rules = match (t.get("exclude"), &factors) {
        (None, _) => Some(Vec::new()),
        (Some(e), Some(f)) => factors::read_exclude(cx, e, f),
        (Some(_), None) => None,
    };
    let kind = kind::select(cx, t.get("workload"));
    // A kind that does no I/O in a directory may leave [sut] out: its runs get the
    // experiment file's directory as it is.
    let implicit_sut = implicit_sut();
    let sut = match (t.get("sut"), kind) {
        (None, Some(k)) if !k.needs_target() => Some(&implicit_sut),
        (given, _) => sut_section(cx, given),
    };
    let workload_node = t.get("workload").map(|e| &e.node);
    let builtins = stage.map_or_else(Vec::new, |s| previous_factor(cx, t, s, factors.as_deref()));
    let mut uses_previous_trace = false;
    if let Some(f) = &factors {
        let used = check_placeholders(cx, f, &builtins, [sut.map(|e| &e.node), workload_node]);
        if let (Some(s), true) = (stage, used.first() == Some(&true)) {
            uses_previous_trace = true;
            previous_trace_possible(cx, t, s);
        }
    }
    let combos = match (&factors, &rules) {
        (Some(f), Some(r)) => combos(cx, t, f, r),
        _ => None,
    };
    let matrix_ok = cx.errors() == matrix_errors;

    let repetitions = repetitions(cx, t.get("repetitions"), kind);
    let procedure = procedure(cx, t.get("procedure"), kind);

    let (mut configs, mut config_json) =
        match (matrix_ok, &factors, combos, sut, kind, workload_node) {
            (true, Some(f), Some(combos), Some(sut), Some(kind), Some(w)) => {
                resolve_configs(cx, f, &builtins, &combos, &sut.node, w, kind, base)?
            }
            _ => return None,
        };
    pin_alike(&mut configs, &mut config_json);
    keep_in_rootfs(&mut configs, base);
    if cx.errors() > 0 {
        return None;
    }
    let (mut repetitions, procedure, seed) = (repetitions?, procedure?, seed?);
    // A workload whose runs count no operations names the metric to watch instead (every
    // configuration runs the same tool, so the first one's says it for all).
    let named = t
        .get("repetitions")
        .and_then(|e| e.node.value.as_table())
        .is_some_and(|r| r.get("metric").is_some());
    if let (false, Some(m)) = (
        named,
        configs.first().and_then(|c| c.workload.stop_metric()),
    ) {
        repetitions.metric = m.to_string();
    }
    let factors = factors?;
    let mut resolved = json!({
        "name": name,
        "description": description,
        "source": cx.src.path.canonicalize().unwrap_or_else(|_| cx.src.path.clone()).display().to_string(),
        "seed": seed,
        "factors": factors.iter().map(|f| json!({
            "name": f.name,
            "levels": f.levels.iter().map(|l| l.node.to_json()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "exclude": t.get("exclude").map_or(json!([]), |e| e.node.to_json()),
        "repetitions": repetitions.to_json(),
        "procedure": procedure.to_json(),
        "sut": sut.map(|e| e.node.to_json()),
        "workload": workload_node.map(Node::to_json),
        "configs": config_json,
    });
    if let (Some(s), Json::Object(o)) = (stage, &mut resolved) {
        o.insert("stage".into(), json!(s.index + 1));
    }
    Some(ExperimentPlan {
        name,
        source: cx.src.path.clone(),
        seed,
        configs,
        repetitions,
        procedure,
        resolved,
        then: Vec::new(),
        text: None,
        stage_at: None,
        uses_previous_trace,
    })
}

/// The built-in factor of a stage: `previous`, one level, a table whose fields are what the
/// stage before leaves (`${previous.trace}`). It substitutes like a factor but labels nothing.
fn previous_factor(
    cx: &mut Ctx,
    t: &Table,
    s: &StageCx,
    factors: Option<&[Factor]>,
) -> Vec<Factor> {
    if let Some(f) = factors.into_iter().flatten().find(|f| f.name == PREVIOUS) {
        cx.error_hint(
            &f.key_span,
            format!("`{PREVIOUS}` is a reserved name in a [[then]] stage"),
            "it refers to the stage before (${previous.trace}); rename the factor",
        );
    }
    let span = t.get("workload").map_or(0..0, |e| e.key_span.clone());
    let text = |v: &str| Node {
        span: span.clone(),
        value: tree::Value::String(v.into()),
    };
    let node = Node {
        span: span.clone(),
        value: tree::Value::Table(Table {
            entries: vec![Entry {
                key: "trace".into(),
                key_span: span.clone(),
                node: text(&s.trace),
            }],
        }),
    };
    vec![Factor {
        name: PREVIOUS.into(),
        key_span: span,
        levels: vec![factors::Level {
            name: PREVIOUS.into(),
            node,
        }],
        tables: true,
    }]
}

/// `${previous.trace}` needs a stage before that saves one block trace.
fn previous_trace_possible(cx: &mut Ctx, t: &Table, s: &StageCx) {
    let at = t.get("workload").map_or(0..0, |e| e.key_span.clone());
    let before = if s.index == 1 {
        "the experiment".to_string()
    } else {
        format!("stage {}", s.index)
    };
    if !s.previous.saves_trace {
        cx.error_hint(
            &at,
            format!(
                "`${{previous.trace}}` in stage {} needs {before} to save block traces",
                s.index + 1
            ),
            "set [procedure] save_block_trace = true in the stage before",
        );
    } else if s.previous.configs != 1 {
        cx.error_hint(
            &at,
            format!(
                "`${{previous.trace}}` in stage {} is ambiguous: {before} has {} configurations",
                s.index + 1,
                s.previous.configs
            ),
            "give the stage before one configuration (its last ok run's trace is used), or \
             split it into one stage per configuration",
        );
    }
}

/// `[sut] target = { kind = "directory", path = "." }`: the experiment file's directory.
fn implicit_sut() -> Entry {
    let text = |s: &str| Node {
        span: 0..0,
        value: tree::Value::String(s.into()),
    };
    let entry = |key: &str, node: Node| Entry {
        key: key.into(),
        key_span: 0..0,
        node,
    };
    let target = Node {
        span: 0..0,
        value: tree::Value::Table(Table {
            entries: vec![entry("kind", text("directory")), entry("path", text("."))],
        }),
    };
    entry(
        "sut",
        Node {
            span: 0..0,
            value: tree::Value::Table(Table {
                entries: vec![entry("target", target)],
            }),
        },
    )
}

fn sut_section<'a>(cx: &mut Ctx, entry: Option<&'a Entry>) -> Option<&'a Entry> {
    let Some(e) = entry else {
        cx.error_hint(
            &(0..0),
            "the experiment has no [sut] section",
            "add one, e.g. [sut] with target = { kind = \"tmpfs\", size = \"1G\" }",
        );
        return None;
    };
    cx.table(e, "sut").map(|_| e)
}

/// Checks every placeholder of the sections that may have them, then that every factor is
/// used (unless a placeholder was wrong: a misspelt one would make its factor look unused).
///
/// `builtins` (a stage's `previous`) may be used but need not be; returns which of them were.
fn check_placeholders<'a>(
    cx: &mut Ctx,
    factors: &[Factor],
    builtins: &[Factor],
    sections: impl IntoIterator<Item = Option<&'a Node>>,
) -> Vec<bool> {
    let before = cx.errors();
    let all: Vec<Factor> = factors.iter().chain(builtins).cloned().collect();
    let mut used = vec![false; all.len()];
    for node in sections.into_iter().flatten() {
        subst::check(cx, node, &all, &mut used);
    }
    let builtins_used = used.split_off(factors.len());
    if cx.errors() > before {
        return builtins_used;
    }
    for (f, used) in factors.iter().zip(used) {
        if !used {
            cx.error_hint(
                &f.key_span,
                format!(
                    "factor `{}` is used nowhere in [sut] or [workload], so its configurations \
                     would be identical",
                    f.name
                ),
                format!(
                    "refer to it as ${{{}}}{} in [sut] or [workload], or remove it",
                    f.name,
                    if f.tables { " or ${…field}" } else { "" }
                ),
            );
        }
    }
    builtins_used
}

/// The configurations to run; errors if there are too many or none.
fn combos(cx: &mut Ctx, t: &Table, f: &[Factor], r: &[Rule]) -> Option<Vec<Vec<usize>>> {
    let full = factors::full_size(f);
    if full > MAX_CONFIGS {
        let at = t.get("factors").map_or(0..0, |e| e.key_span.clone());
        cx.error_hint(
            &at,
            format!("the factors span {full} configurations; at most {MAX_CONFIGS} are allowed"),
            "use fewer factors or levels, or split the experiment",
        );
        return None;
    }
    let combos = factors::matrix(f, r);
    if combos.is_empty() {
        let at = t.get("exclude").map_or(0..0, |e| e.key_span.clone());
        cx.error_hint(
            &at,
            format!("every one of the {full} configurations is excluded"),
            "an exclusion rule leaves out the configurations that have all of its levels; \
             remove or narrow a rule",
        );
        return None;
    }
    Some(combos)
}

/// Substitutes, reads and checks each configuration. An error that every configuration has
/// is reported once; one that only some have names them.
#[allow(clippy::too_many_arguments)]
fn resolve_configs(
    cx: &mut Ctx,
    factors: &[Factor],
    builtins: &[Factor],
    combos: &[Vec<usize>],
    sut_node: &Node,
    workload_node: &Node,
    kind: &dyn Kind,
    base: &Path,
) -> Option<(Vec<ConfigPlan>, Vec<Json>)> {
    let mut configs = Vec::new();
    let mut json = Vec::new();
    let mut errors: Vec<(ExperimentError, Vec<usize>)> = Vec::new();
    let labels: Vec<String> = combos.iter().map(|c| factors::label(factors, c)).collect();
    // Built-ins substitute like factors of one level; labels and stored values leave them out.
    let all: Vec<Factor> = factors.iter().chain(builtins).cloned().collect();
    for (i, combo) in combos.iter().enumerate() {
        let mut ccx = Ctx::new(cx.src);
        let full: Vec<usize> = combo
            .iter()
            .copied()
            .chain(builtins.iter().map(|_| 0))
            .collect();
        let sut_sub = subst::substitute(sut_node, &all, &full);
        let sut = sut::resolve(&mut ccx, &sut_sub, base);
        let target_bytes = sut.as_ref().and_then(|(_, p)| match &p.target {
            Target::Tmpfs(t) => match t.size {
                TmpfsSize::Bytes(b) => Some(b),
                TmpfsSize::PercentOfRam(_) => None,
            },
            Target::LoopImage(l) => Some(l.size),
            _ => None,
        });
        let cache_limit = sut.as_ref().and_then(|(_, p)| p.cache_limit);
        let w_sub = subst::substitute(workload_node, &all, &full);
        let remountable = sut
            .as_ref()
            .map(|(_, p)| matches!(p.target, Target::LoopImage(_) | Target::BlockDevice(_)));
        let memory_fs = sut.as_ref().and_then(|(_, p)| match p.target {
            Target::Tmpfs(_) => Some(true),
            Target::LoopImage(_) | Target::BlockDevice(_) => Some(false),
            Target::Directory(_) => None,
        });
        let at = LoadContext {
            base,
            target_bytes,
            remountable,
            memory_fs,
            cache_limit,
        };
        let workload = kind::resolve(&mut ccx, &w_sub, kind, &at);
        for e in ccx.diag.errors {
            match errors.iter_mut().find(|(g, _)| *g == e) {
                Some((_, cfgs)) => cfgs.push(i),
                None => errors.push((e, vec![i])),
            }
        }
        if let (Some((sut_spec, sut)), Some(workload)) = (sut, workload) {
            let mut w_json = w_sub.to_json();
            if let Json::Object(o) = &mut w_json {
                o.extend(workload.describe());
            }
            json.push(json!({
                "label": labels[i],
                "factors": factors::values(factors, combo),
                "sut": serde_json::to_value(&sut_spec).unwrap_or(Json::Null),
                "workload": w_json,
            }));
            configs.push(ConfigPlan {
                label: labels[i].clone(),
                factors: factors::values(factors, combo),
                sut_spec,
                sut,
                workload,
            });
        }
    }
    let n = combos.len();
    for (mut e, cfgs) in errors {
        if cfgs.len() < n {
            e.message.push_str(&which_configs(&cfgs, &labels));
        }
        cx.push(e);
    }
    (configs.len() == n).then_some((configs, json))
}

/// ` (configuration `a=1`)`, ` (configurations `a=1`, `a=2` and 3 more)`.
/// Environments compared with each other run on the same CPUs: when any configuration runs
/// in a container or a VM, every configuration that names no `environment.cpuset` gets the
/// one CPU set the others name, or, when they name none, every online CPU but the first
/// (which stays with iolab's runner and the rest of the machine). CPU placement alone moved a
/// fio job by 28% on the development VM. The set given is recorded in the stored
/// configuration as `sut.environment_cpuset`.
fn pin_alike(configs: &mut [ConfigPlan], json: &mut [Json]) {
    if configs.iter().all(|c| c.sut.environment.is_host()) {
        return;
    }
    let mut named: Vec<&Vec<u32>> = configs
        .iter()
        .filter_map(|c| c.sut.environment.cpuset.as_ref())
        .collect();
    named.dedup();
    let default = match named.as_slice() {
        [one] => (*one).clone(),
        _ => match iolab_sys::cpus::online() {
            Ok(cpus) if cpus.len() > 1 => cpus[1..].to_vec(),
            Ok(cpus) => cpus,
            Err(_) => return,
        },
    };
    for (c, j) in configs.iter_mut().zip(json) {
        if c.sut.environment.cpuset.is_none() {
            c.sut.environment.cpuset = Some(default.clone());
            if let Some(ctr) = &mut c.sut.container {
                ctr.cpuset = Some(default.clone());
            }
            if let Some(sut) = j.get_mut("sut").and_then(Json::as_object_mut) {
                sut.insert(
                    "environment_cpuset".into(),
                    json!(iolab_sys::cpus::format_cpu_list(&default)),
                );
            }
        }
    }
}

/// A container with its own root filesystem still runs iolab's worker, which reads the
/// experiment file: the binary's directory and the file's are bind-mounted into it.
fn keep_in_rootfs(configs: &mut [ConfigPlan], base: &Path) {
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    for c in configs {
        if let Some(ctr) = c.sut.container.as_mut().filter(|k| k.rootfs.is_some()) {
            ctr.keep_paths.extend(exe_dir.clone());
            ctr.keep_paths.push(base.to_path_buf());
        }
    }
}

fn which_configs(cfgs: &[usize], labels: &[String]) -> String {
    const SHOWN: usize = 2;
    let names: Vec<String> = cfgs
        .iter()
        .take(SHOWN)
        .map(|&i| format!("`{}`", labels[i]))
        .collect();
    let more = cfgs.len().saturating_sub(SHOWN);
    match (cfgs.len(), more) {
        (1, _) => format!(" (configuration {})", names[0]),
        (_, 0) => format!(" (configurations {})", names.join(" and ")),
        _ => format!(" (configurations {} and {more} more)", names.join(", ")),
    }
}

fn repetitions(
    cx: &mut Ctx,
    entry: Option<&Entry>,
    kind: Option<&dyn Kind>,
) -> Option<Repetitions> {
    let defaults = StoppingRule::default();
    let Some(entry) = entry else {
        return Some(Repetitions {
            rule: defaults,
            metric: kind::default_metric(kind).into(),
            time_budget: None,
        });
    };
    let before = cx.errors();
    let t = cx.table(entry, "repetitions")?;
    cx.unknown_keys(t, REPETITION_KEYS, "repetitions");
    let min = t.get("min").map_or(Some(defaults.min as i64), |e| {
        cx.integer(e, "repetitions.min", 1, i64::MAX)
    });
    let max = t.get("max").map_or(Some(defaults.max as i64), |e| {
        cx.integer(e, "repetitions.max", 1, i64::MAX)
    });
    let target = t.get("target").map_or(Some(defaults.target), |e| {
        let v = cx.number(e, "repetitions.target")?;
        if v > 0.0 && v < 1.0 {
            Some(v)
        } else {
            cx.error_hint(
                &e.node.span,
                format!("`repetitions.target` must be between 0 and 1 (exclusive), not {v}"),
                "it is the half-width of the 95% confidence interval relative to the mean, \
                 e.g. 0.05 for ±5%",
            );
            None
        }
    });
    let names = kind::stopping_metrics(kind);
    let metric = t
        .get("metric")
        .map_or(Some(kind::default_metric(kind)), |e| {
            cx.choice(e, "repetitions.metric", &names)
        });
    let time_budget = t
        .get("time_budget")
        .map(|e| cx.duration(e, "repetitions.time_budget"));
    let (min, max, target, metric) = (min?, max?, target?, metric?);
    // `max = 1`: one run per configuration, on purpose; no interval, no stopping rule.
    if max == 1 && (min == 1 || t.get("min").is_none()) {
        if cx.errors() > before {
            return None;
        }
        return Some(Repetitions {
            metric: metric.to_string(),
            ..Repetitions::once()
        });
    }
    let rule = match StoppingRule::new(min as u64, max as u64, target, Level::P95) {
        Ok(r) => r,
        Err(StatsError::InvalidParameter { name, reason }) => {
            // A default max below a given min: point at min, which is what was written.
            let (at, hint) = match (t.get(name), t.get("min")) {
                (Some(e), _) if name == "min" => (
                    e.node.span.clone(),
                    Some(
                        "or min = max = 1: one run per configuration, without a stopping rule"
                            .into(),
                    ),
                ),
                (Some(e), _) => (e.node.span.clone(), None),
                (None, Some(m)) => (
                    m.node.span.clone(),
                    Some(format!("max defaults to {}; set it too", defaults.max)),
                ),
                (None, None) => (entry.key_span.clone(), None),
            };
            let e = cx
                .src
                .error(&at, format!("`repetitions.{name}` {reason}"))
                .hint_opt(hint);
            cx.push(e);
            return None;
        }
        Err(other) => {
            cx.error(&entry.key_span, format!("`repetitions`: {other}"));
            return None;
        }
    };
    if cx.errors() > before {
        return None;
    }
    Some(Repetitions {
        rule,
        metric: metric.to_string(),
        time_budget: time_budget.flatten(),
    })
}

fn procedure(cx: &mut Ctx, entry: Option<&Entry>, kind: Option<&dyn Kind>) -> Option<Procedure> {
    let mut p = Procedure::default();
    // Dropping the page cache (and the root it needs) only matters to runs that do I/O.
    if kind.is_some_and(|k| !k.needs_target()) {
        p.drop_caches = false;
    }
    let Some(entry) = entry else {
        return Some(p);
    };
    let before = cx.errors();
    let t = cx.table(entry, "procedure")?;
    cx.unknown_keys(t, PROCEDURE_KEYS, "procedure");
    if let Some(o) = t
        .get("order")
        .and_then(|e| cx.choice(e, "procedure.order", &["random", "sequential"]))
    {
        p.order = if o == "random" {
            Order::Random
        } else {
            Order::Sequential
        };
    }
    if let Some(b) = t
        .get("fresh_fs")
        .and_then(|e| cx.boolean(e, "procedure.fresh_fs"))
    {
        p.fresh_fs = b;
    }
    if let Some(w) = t
        .get("warmup")
        .and_then(|e| cx.integer(e, "procedure.warmup", 0, i64::from(u32::MAX)))
    {
        p.warmup = w as u32;
    }
    if let Some(b) = t
        .get("drop_caches")
        .and_then(|e| cx.boolean(e, "procedure.drop_caches"))
    {
        p.drop_caches = b;
    }
    if let Some(b) = t
        .get("save_block_trace")
        .and_then(|e| cx.boolean(e, "procedure.save_block_trace"))
    {
        p.save_block_trace = b;
    }
    if let Some(b) = t
        .get("trace_syscalls")
        .and_then(|e| cx.boolean(e, "procedure.trace_syscalls"))
    {
        p.trace_syscalls = b;
    }
    (cx.errors() == before).then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const SUT: &str = "[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n";
    const MICRO: &str = "[workload]\nmicro = { size = \"1m\" }\n";

    fn plan(text: &str) -> ExperimentPlan {
        load_str(Path::new("/x/e.toml"), text).unwrap_or_else(|e| panic!("{e}"))
    }

    fn errors(text: &str) -> Vec<String> {
        load_str(Path::new("e.toml"), text)
            .expect_err("errors")
            .iter()
            .map(|e| e.to_string())
            .collect()
    }

    #[test]
    fn defaults() {
        let p = plan(&format!("{SUT}{MICRO}"));
        assert_eq!(p.name, "e");
        assert_eq!(p.seed, 1);
        assert_eq!(p.configs.len(), 1);
        assert_eq!(p.configs[0].label, "default");
        assert!(p.configs[0].factors.is_empty());
        assert_eq!(p.repetitions.rule, StoppingRule::default());
        assert_eq!(p.repetitions.metric, crate::plan::DEFAULT_METRIC);
        assert_eq!(p.repetitions.time_budget, None);
        assert_eq!(
            p.procedure,
            Procedure {
                order: Order::Random,
                fresh_fs: true,
                warmup: 0,
                drop_caches: true,
                save_block_trace: false,
                trace_syscalls: false,
            }
        );
        let m =
            &iolab_kind::table::from_stored::<iolab_micro::kind::MicroTable>(p.stored_workload(0))
                .unwrap();
        assert_eq!((m.bs, m.size, m.threads, m.loops), (4096, 1 << 20, 1, 1));
        assert_eq!(p.resolved["repetitions"]["level"], json!(0.95));
        assert_eq!(p.resolved["configs"][0]["label"], json!("default"));
    }

    #[test]
    fn settings_are_read() {
        let p = plan(&format!(
            "name = \"n\"\nseed = 7\n{SUT}{MICRO}[repetitions]\nmin = 5\nmax = 9\ntarget = 0.1\n\
             metric = \"mib_per_s\"\ntime_budget = \"10m\"\n[procedure]\norder = \"sequential\"\n\
             fresh_fs = false\nwarmup = 2\ndrop_caches = false\nsave_block_trace = true\n"
        ));
        assert_eq!((p.name.as_str(), p.seed), ("n", 7));
        assert_eq!((p.repetitions.rule.min, p.repetitions.rule.max), (5, 9));
        assert_eq!(p.repetitions.rule.target, 0.1);
        assert_eq!(p.repetitions.metric, "mib_per_s");
        assert_eq!(p.repetitions.time_budget, Some(Duration::from_secs(600)));
        assert_eq!(p.procedure.order, Order::Sequential);
        assert!(!p.procedure.fresh_fs && !p.procedure.drop_caches);
        assert_eq!(p.procedure.warmup, 2);
        assert!(p.procedure.save_block_trace);
        assert_eq!(p.resolved["procedure"]["save_block_trace"], json!(true));
    }

    #[test]
    fn several_independent_errors_at_once() {
        let e = errors(&format!(
            "seed = \"x\"\n{SUT}{MICRO}[repetitions]\nmetric = \"iops\"\n[procedure]\nwarmup = -1\n"
        ));
        assert_eq!(e.len(), 3, "{e:?}");
        assert!(e[0].starts_with("e.toml:1:8: `seed` must be an integer"));
        assert!(e[1].contains("unknown value \"iops\""));
        assert!(e[2].contains("`procedure.warmup` must be between 0"));
    }

    #[test]
    fn error_in_some_configurations_names_them() {
        let e = errors(
            "[factors]\nbs = [\"4k\", \"3k\", \"5k\"]\n[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n\
             [workload]\nmicro = { bs = \"${bs}\", size = \"64k\" }\n",
        );
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].ends_with("(configuration `bs=3k`)"), "{e:?}");
        assert!(e[1].ends_with("(configuration `bs=5k`)"), "{e:?}");
        assert!(
            e[0].starts_with(
                "e.toml:6:32: `workload.micro.size` 65536 is not a multiple of \
                 `workload.micro.bs` 3072"
            ),
            "{e:?}"
        );
    }

    #[test]
    fn environments_compared_are_pinned_alike() {
        let text = |cpusets: &str| {
            format!(
                r#"
[factors]
env = [{cpusets}]
[sut]
target = {{ kind = "loop_image", size = "64M" }}
fs = {{ kind = "ext4" }}
environment = "${{env}}"
[workload]
micro = {{ access = "read", bs = "4k", size = "1m" }}
"#
            )
        };
        let online = iolab_sys::cpus::online().unwrap();
        let default = if online.len() > 1 {
            online[1..].to_vec()
        } else {
            online.clone()
        };
        let p = plan(&text(
            r#"{ name = "h", kind = "host" }, { name = "c", kind = "container" }"#,
        ));
        for c in &p.configs {
            assert_eq!(
                c.sut.environment.cpuset.as_ref(),
                Some(&default),
                "{}",
                c.label
            );
        }
        assert_eq!(
            p.configs[1].sut.container.as_ref().unwrap().cpuset,
            Some(default)
        );
        assert!(p.resolved["configs"][0]["sut"]["environment_cpuset"].is_string());
        // The one set a configuration names is everyone's.
        let first = online[0];
        let p = plan(&text(&format!(
            r#"{{ name = "h", kind = "host" }}, {{ name = "c", kind = "container", cpuset = "{first}" }}"#
        )));
        for c in &p.configs {
            assert_eq!(c.sut.environment.cpuset, Some(vec![first]), "{}", c.label);
        }
        // Host-only experiments are left as they were: not pinned.
        let p = plan(&text(r#""host""#));
        assert_eq!(p.configs[0].sut.environment.cpuset, None);
    }

    #[test]
    fn a_containers_memory_limit_is_the_memory_that_can_cache_its_files() {
        let p = plan(
            r#"
[sut]
target = { kind = "loop_image", size = "64M" }
fs = { kind = "ext4" }
environment = { kind = "container", memory = "256M" }
[workload]
micro = { access = "read", bs = "4k", size = "1m" }
"#,
        );
        let f = p.pre_run_facts(&p.configs[0]);
        assert_eq!(f.cgroup_cache_limit_bytes, Some(256 << 20));
        let env = f.environment.unwrap();
        assert_eq!(
            (env.kind.as_str(), env.memory_limit_bytes),
            ("container", Some(256 << 20))
        );
    }

    #[test]
    fn which_configs_text() {
        let l: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        assert_eq!(which_configs(&[1], &l), " (configuration `b`)");
        assert_eq!(which_configs(&[0, 2], &l), " (configurations `a` and `c`)");
        assert_eq!(
            which_configs(&[0, 1, 3], &l),
            " (configurations `a`, `b` and 1 more)"
        );
    }

    #[test]
    fn one_run_per_configuration() {
        for reps in ["min = 1\nmax = 1\n", "max = 1\n"] {
            let p = plan(&format!("{SUT}{MICRO}[repetitions]\n{reps}"));
            assert!(p.repetitions.is_single(), "{reps}");
        }
        let e = errors(&format!("{SUT}{MICRO}[repetitions]\nmin = 1\nmax = 5\n"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("`repetitions.min` a confidence interval needs at least 2 runs"));
        assert!(e[0].contains("min = max = 1"), "{e:?}");
    }

    #[test]
    fn min_above_default_max_points_at_min() {
        let e = errors(&format!("{SUT}{MICRO}[repetitions]\nmin = 30\n"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].starts_with("e.toml:6:7: `repetitions.max` must be ≥ min (30), got 20"),
            "{e:?}"
        );
        assert!(e[0].contains("max defaults to 20"));
    }

    /// A first stage that saves its block trace, and a sweep over it.
    const STAGED: &str = "[sut]\ntarget = { kind = \"tmpfs\", size = \"1G\" }\n\
        [workload]\nmicro = { size = \"1m\" }\n[procedure]\nsave_block_trace = true\n\
        [[then]]\nname = \"sweep\"\n[then.factors]\nassoc = [\"2\", \"full\"]\n\
        [then.workload]\ncachesim = { trace = \"${previous.trace}\", size = \"1m\", assoc = \"${assoc}\" }\n";

    #[test]
    fn stages_are_checked_at_load_and_read_again_with_the_trace() {
        // The sweep needs no [sut]: its runs get the file's directory, which must exist.
        let d = std::env::temp_dir();
        let p = load_str(&d.join("e.toml"), STAGED).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.then.len(), 1);
        assert_eq!(p.then[0].name, "sweep");
        assert_eq!(p.then[0].configs, 2);
        assert!(p.then[0].uses_previous_trace && !p.uses_previous_trace);
        assert!(!p.then[0].saves_trace && p.procedure.save_block_trace);
        let s = stage(&p, 1, Some(Path::new("/t/run-7.iolt"))).unwrap();
        assert_eq!(s.name, "sweep");
        assert_eq!(s.resolved["stage"], 2);
        assert!(p.resolved.get("stage").is_none());
        // The built-in `previous` substitutes but does not label.
        let labels: Vec<&str> = s.configs.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["assoc=2", "assoc=full"]);
        for c in &s.resolved["configs"].as_array().unwrap()[..] {
            assert_eq!(c["workload"]["cachesim"]["trace"], "/t/run-7.iolt");
            assert!(c["factors"].get("previous").is_none());
        }
        assert!(stage(&p, 2, None).is_err());
    }

    #[test]
    fn a_mistake_in_a_stage_is_found_before_anything_runs() {
        let e = errors(&STAGED.replace("size = \"1m\", assoc", "size = \"1m\", asoc"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].contains("asoc"), "{e:?}");
        assert!(e[0].starts_with("e.toml:12:"), "{e:?}");
    }

    #[test]
    fn previous_trace_needs_a_stage_before_that_saves_one_trace() {
        let e = errors(&STAGED.replace("save_block_trace = true", "save_block_trace = false"));
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains(
                "`${previous.trace}` in stage 2 needs the experiment to save block traces"
            ),
            "{e:?}"
        );
        let two = STAGED.replace(
            "[workload]\nmicro = { size = \"1m\" }",
            "[factors]\nbs = [\"4k\", \"8k\"]\n[workload]\nmicro = { size = \"1m\", bs = \"${bs}\" }",
        );
        let e = errors(&two);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(
            e[0].contains("is ambiguous: the experiment has 2 configurations"),
            "{e:?}"
        );
        // In the experiment itself there is no stage before.
        let e = errors(&format!(
            "{SUT}[workload]\nmicro = {{ size = \"1m\", file = \"${{previous.trace}}\" }}\n"
        ));
        assert!(e[0].contains("in a [[then]] stage only"), "{e:?}");
        let e = errors(&STAGED.replace("${previous.trace}", "${previous.tracee}"));
        assert!(
            e[0].contains("a stage knows only ${previous.trace}"),
            "{e:?}"
        );
    }

    #[test]
    fn stages_do_not_nest_and_are_tables() {
        let e = errors(&format!("{STAGED}[[then.then]]\nname = \"x\"\n"));
        assert!(
            e.iter()
                .any(|e| e.contains("cannot have stages of its own")),
            "{e:?}"
        );
        let e = errors(&format!("then = 3\n{SUT}{MICRO}"));
        assert!(e[0].contains("`then` must be an array of tables"), "{e:?}");
        let e = errors(&STAGED.replace(
            "[then.factors]\nassoc",
            "[then.factors]\nprevious = [\"a\", \"b\"]\nassoc",
        ));
        assert!(
            e.iter()
                .any(|e| e.contains("`previous` is a reserved name")),
            "{e:?}"
        );
    }
}
