//! One report of several experiments — the stages of one experiment file, or any experiments
//! named together: the file's name, a contents block with a row per experiment (what ran and
//! its answer in a line or two), then each experiment's report as [`crate::render_html`] and
//! [`crate::render_markdown`] draw it alone, one level below the page's title.

use std::fmt::Write as _;
use std::path::Path;

use iolab_store::{ExperimentId, ExperimentStatus, Store};
use serde_json::Value;

use crate::escape::{escape_html as esc, escape_md as md};
use crate::model::ReportData;
use crate::{num, Result};

/// An experiment's stage in its file: its resolved specification's `stage`, 1 without one
/// (the first experiment of a file, and every file without `[[then]]`).
fn stage_of(spec: &Value) -> u64 {
    spec.get("stage").and_then(Value::as_u64).unwrap_or(1)
}

/// What `iolab report` shows without an id: the newest experiment and, when it is stage N ≥ 2
/// of an experiment file, the stages before it from the same `iolab run` — for k = N−1 down
/// to 1, the newest experiment older than the one taken for stage k+1 with the same source
/// and stage k. Experiments of other files in between (another `iolab run` writing to the
/// same database) are passed over, and so are stages a `--resume` reused from an earlier run
/// (they are older, not newer). In stage order; empty without experiments.
pub fn latest_file_run(store: &Store) -> Result<Vec<ExperimentId>> {
    let list = store.list_experiments()?;
    let Some(newest) = list.last() else {
        return Ok(Vec::new());
    };
    let mut stage = stage_of(&store.experiment(newest.id)?.spec);
    let mut run = vec![newest.id];
    for e in list.iter().rev().skip(1) {
        if stage <= 1 {
            break;
        }
        if e.source == newest.source && stage_of(&store.experiment(e.id)?.spec) == stage - 1 {
            run.push(e.id);
            stage -= 1;
        }
    }
    run.reverse();
    Ok(run)
}

/// The page's title: the experiment file's name when they all come from one, else how many
/// experiments there are.
fn title(parts: &[ReportData]) -> String {
    let source = parts.first().map_or("", |p| p.experiment.source.as_str());
    if !source.is_empty() && parts.iter().all(|p| p.experiment.source == source) {
        Path::new(source)
            .file_name()
            .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned())
    } else {
        format!("{} experiments", parts.len())
    }
}

/// One row of the contents.
struct Entry {
    /// The prefix of the part's element ids (and the part's own id, without the dash).
    anchor: String,
    /// `stage 2`, or `experiment 7` when the parts are not the stages of one file.
    part: String,
    name: String,
    workload: String,
    configs: usize,
    runs: u64,
    /// The status, when the experiment did not complete.
    unfinished: Option<&'static str>,
    /// Its answer's first factor's sentences on the stopping metric, or the summary's
    /// headline without an answer.
    answer: Vec<String>,
    /// Factors of its answer not in [`Self::answer`].
    more_factors: usize,
}

/// The element-id prefix of each part: its experiment's id (`e12`), so that a link to a part
/// of the page (`#e12-summary`) keeps working when the page is made again with other parts;
/// an experiment given twice gets its position too.
fn anchors(parts: &[ReportData]) -> Vec<String> {
    parts
        .iter()
        .enumerate()
        .map(|(k, p)| {
            let id = p.experiment.id;
            if parts[..k].iter().any(|q| q.experiment.id == id) {
                format!("e{}p{}", id.0, k + 1)
            } else {
                format!("e{}", id.0)
            }
        })
        .collect()
}

/// Whether the parts are stages of one experiment file (some has a stage number ≥ 2).
fn staged(parts: &[ReportData]) -> bool {
    let source = parts.first().map_or("", |p| p.experiment.source.as_str());
    parts.iter().all(|p| p.experiment.source == source)
        && parts
            .iter()
            .any(|p| p.experiment.spec.get("stage").is_some())
}

fn entries(parts: &[ReportData]) -> Vec<Entry> {
    let staged = staged(parts);
    parts
        .iter()
        .zip(anchors(parts))
        .map(|(p, anchor)| {
            let e = &p.experiment;
            let (answer, more_factors) = crate::answer::lead(p)
                .filter(|(lines, _)| !lines.is_empty())
                .unwrap_or_else(|| (vec![headline(p)], 0));
            Entry {
                anchor,
                part: if staged {
                    format!("stage {} · experiment {}", stage_of(&e.spec), e.id.0)
                } else {
                    format!("experiment {}", e.id.0)
                },
                name: e.name.clone(),
                workload: workload_kind(&e.spec),
                configs: p.configs.len(),
                runs: p.configs.iter().map(|c| c.runs.total()).sum(),
                unfinished: (e.status != ExperimentStatus::Done).then(|| e.status.as_str()),
                answer,
                more_factors,
            }
        })
        .collect()
}

/// The workload's kind from the resolved specification's `[workload]` (or its first
/// configuration's), its one key besides `set`: `micro`, `cachesim`, `WML: fileserver` for a
/// filebench workload, `exec: fio` for another tool; `unknown` without one.
fn workload_kind(spec: &Value) -> String {
    let w = spec
        .get("workload")
        .or_else(|| spec.pointer("/configs/0/workload"))
        .and_then(Value::as_object);
    // The kind's key, not one of the options a WML workload takes beside it (`time`, `set`,
    // … — which may sort first): WML's are named; every other kind's value is a table.
    let Some((key, value)) = w.and_then(|w| {
        w.iter()
            .find(|(k, _)| matches!(k.as_str(), "wml" | "builtin"))
            .or_else(|| w.iter().find(|(_, v)| v.is_object()))
            .or_else(|| w.iter().next())
    }) else {
        return "unknown".into();
    };
    // A name that a factor fills in (`${workload.file}`) says nothing: the kind alone then.
    fn literal(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str).filter(|s| !s.contains("${"))
    }
    match key.as_str() {
        "wml" | "builtin" => match literal(Some(value)) {
            Some(name) => format!(
                "WML: {}",
                Path::new(name)
                    .file_name()
                    .map_or(name.into(), |n| n.to_string_lossy())
            ),
            None => "WML".into(),
        },
        "exec" => match literal(value.get("tool")) {
            Some(tool) => format!("exec: {tool}"),
            None => "exec".into(),
        },
        k => k.to_string(),
    }
}

/// Without an answer (no factor of two levels), the summary's headline instead: the stopping
/// metric (or the first with a value) — its mean ± interval for one configuration, its range
/// over the configurations for several.
fn headline(data: &ReportData) -> String {
    let stop = data.experiment.spec["repetitions"]["metric"].as_str();
    let has = |k: usize| data.configs.iter().any(|c| c.metrics[k].mean.is_finite());
    let k = (0..data.headline.len())
        .find(|&k| stop == Some(&*data.headline[k].name) && has(k))
        .or_else(|| (0..data.headline.len()).find(|&k| has(k)));
    let Some(k) = k else {
        return if data.configs.is_empty() {
            "No configurations.".into()
        } else {
            "No ok run has a headline metric.".into()
        };
    };
    let d = &data.headline[k];
    let title = num::title(&d.title, &d.unit);
    let measured: Vec<_> = data
        .configs
        .iter()
        .filter(|c| c.metrics[k].mean.is_finite())
        .collect();
    if let [c] = measured[..] {
        return format!("{title}: {}.", c.metrics[k].ci_text());
    }
    let by_mean = |a: &&&crate::ConfigReport, b: &&&crate::ConfigReport| {
        a.metrics[k].mean.total_cmp(&b.metrics[k].mean)
    };
    let (lo, hi) = (
        measured.iter().min_by(by_mean).expect("two or more"),
        measured.iter().max_by(by_mean).expect("two or more"),
    );
    format!(
        "{title}: from {} ({}) to {} ({}).",
        num::with_unit(lo.metrics[k].mean, &d.unit),
        lo.config.label,
        num::with_unit(hi.metrics[k].mean, &d.unit),
        hi.config.label
    )
}

/// The contents block and each part's own rules: a part's title is an `h2` (as a report's
/// sections are alone), its sections `h3`, theirs `h4`.
const CSS: &str = r#"
header#contents h1{font-size:1.6rem}header#contents p.source{margin:.2rem 0 .6rem}
table.contents td.answer{min-width:18rem;max-width:48rem}table.contents td.label{max-width:26rem}
article.part{border-top:3px solid var(--line);margin-top:2.5rem;padding-top:.25rem}p.kicker{margin:.4rem 0 0;font-size:.85em;text-transform:uppercase;letter-spacing:.04em}
article.part>header>h2{font-size:1.45rem;border:none;margin:.5rem 0;padding:0}
article.part h3{font-size:1.2rem;border-bottom:1px solid var(--line);padding-bottom:.25rem;margin-top:2rem}
article.part h4{font-size:1rem;margin:1.2rem 0 .4rem}p.top{margin:1.5rem 0 0;font-size:.85em}
"#;

/// Renders the reports of `parts` as one HTML page (see the module's comment); the parts'
/// element ids are prefixed with `e<experiment id>-`, so no two collide.
pub fn render_html_many(parts: &[ReportData], out: &mut dyn std::io::Write) -> Result<()> {
    let mut h = String::with_capacity(64 * 1024 * parts.len().max(1));
    let title = title(parts);
    crate::html::head(&mut h, &title, CSS);
    let _ = write!(h, "<header id=\"contents\"><h1>{}</h1>", esc(&title));
    let _ = write!(
        h,
        "<p class=\"muted source\">{}</p>",
        intro(parts, |src| format!("<code>{}</code>", esc(src)))
    );
    h.push_str("<div class=\"scroll\"><table class=\"contents\"><thead><tr><th>part</th><th>workload</th><th>configurations / runs</th><th>answer</th></tr></thead><tbody>");
    let entries = entries(parts);
    for e in &entries {
        let _ = write!(
            h,
            "<tr><td class=\"label\"><a href=\"#{}\">{}</a><div class=\"note\">{}</div></td><td><code>{}</code></td><td class=\"n\">{} / {}{}</td><td class=\"answer\">",
            esc(&e.anchor),
            esc(&e.name),
            esc(&e.part),
            esc(&e.workload),
            e.configs,
            e.runs,
            e.unfinished
                .map(|s| format!("<div class=\"note bad\">{s}</div>"))
                .unwrap_or_default(),
        );
        for line in &e.answer {
            let _ = write!(h, "<div>{}</div>", esc(line));
        }
        if e.more_factors > 0 {
            let _ = write!(h, "<div class=\"note\">{}</div>", esc(&more(e)));
        }
        h.push_str("</td></tr>");
    }
    h.push_str("</tbody></table></div></header>");
    for (p, e) in parts.iter().zip(&entries) {
        let a = &e.anchor;
        let mut body = String::with_capacity(64 * 1024);
        crate::html::body(&mut body, p);
        let _ = write!(
            h,
            "<article class=\"part\" id=\"{}\"><p class=\"muted kicker\">{}</p>",
            esc(a),
            esc(&e.part)
        );
        h.push_str(&nest(&body, &format!("{a}-")));
        h.push_str("<p class=\"top\"><a href=\"#contents\">↑ contents</a></p></article>");
    }
    let ids: Vec<String> = parts
        .iter()
        .map(|p| format!("{} ({})", p.experiment.id, esc(&p.experiment.uuid)))
        .collect();
    let _ = writeln!(
        h,
        "<footer class=\"muted\"><p>Generated by iolab {} from experiments {}.</p></footer></main></body></html>",
        esc(env!("CARGO_PKG_VERSION")),
        ids.join(", ")
    );
    out.write_all(h.as_bytes())?;
    Ok(())
}

/// The other factors of an entry's answer, in words (empty without).
fn more(e: &Entry) -> String {
    match e.more_factors {
        0 => String::new(),
        1 => "(and one other factor: see its Answer)".into(),
        n => format!("(and {n} other factors: see its Answer)"),
    }
}

/// The sentence under the title: what the parts are (`code` writes the file's path).
fn intro(parts: &[ReportData], code: impl Fn(&str) -> String) -> String {
    let source = parts.first().map_or("", |p| p.experiment.source.as_str());
    if staged(parts) {
        format!(
            "{} stages of {}, each reported below as it would be alone.",
            parts.len(),
            code(source)
        )
    } else if !source.is_empty() && parts.iter().all(|p| p.experiment.source == source) {
        format!(
            "{} experiments of {}, each reported below as it would be alone.",
            parts.len(),
            code(source)
        )
    } else {
        format!(
            "{} experiments, each reported below as it would be alone.",
            parts.len()
        )
    }
}

/// Renders the reports of `parts` as one Markdown document: the title, the contents table,
/// then each report with its headings one level lower and an anchor the contents link to.
pub fn render_markdown_many(parts: &[ReportData], out: &mut dyn std::io::Write) -> Result<()> {
    let mut s = String::new();
    let _ = writeln!(s, "# {}\n", md(&title(parts)));
    let _ = writeln!(
        s,
        "{}\n",
        intro(parts, |src| format!("`{}`", src.replace('`', "'")))
    );
    s.push_str("| experiment | part | workload | configurations / runs | answer |\n|---|---|---|---:|---|\n");
    for e in entries(parts) {
        let _ = writeln!(
            s,
            "| [{}](#{}) | {} | {} | {} / {}{} | {} |",
            md(&e.name),
            e.anchor,
            e.part,
            md(&e.workload),
            e.configs,
            e.runs,
            e.unfinished.map(|s| format!(" ({s})")).unwrap_or_default(),
            md([e.answer.join("; "), more(&e)].join(" ").trim_end())
        );
    }
    for (p, a) in parts.iter().zip(anchors(parts)) {
        let _ = writeln!(s, "\n<a id=\"{a}\"></a>\n");
        s.push_str(&nest_markdown(&crate::markdown::markdown(p)));
    }
    out.write_all(s.as_bytes())?;
    Ok(())
}

/// A Markdown report one level down: a `#` more on every heading line.
fn nest_markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let hashes = line.len() - line.trim_start_matches('#').len();
        if (1..6).contains(&hashes) && line[hashes..].starts_with(' ') {
            out.push('#');
        }
        out.push_str(line);
    }
    out
}

/// One experiment's HTML (its header and sections) made a part of a page of several: every
/// element id and every link to one prefixed with `prefix`, every heading one level lower
/// (`h1` → `h2`, …). Plain text rewriting is sound because the report escapes all text: a
/// `"` or `<` in a label or a spec is a character reference, so ` id="` and `<h2` occur only
/// in markup — also in what other crates' sections write.
fn nest(html: &str, prefix: &str) -> String {
    const PATTERNS: [&str; 5] = [" id=\"", "href=\"#", "url(#", "<h", "</h"];
    let mut out = String::with_capacity(html.len() + html.len() / 16);
    // The next occurrence of each pattern, found again only after it is passed: one scan.
    let find = |from: usize, p: &str| html[from..].find(p).map(|i| from + i);
    let mut next: Vec<Option<usize>> = PATTERNS.iter().map(|p| find(0, p)).collect();
    let mut at = 0;
    while let Some((k, i)) = next
        .iter()
        .enumerate()
        .filter_map(|(k, i)| Some((k, (*i)?)))
        .min_by_key(|&(_, i)| i)
    {
        let end = i + PATTERNS[k].len();
        out.push_str(&html[at..end]);
        if k < 3 {
            out.push_str(prefix);
        } else if let Some(d) = html[end..].chars().next().and_then(|c| c.to_digit(10)) {
            // `<h2` and `</h2>`; not `<header`.
            let _ = write!(out, "{}", (d + 1).min(6));
            at = end + 1;
            next[k] = find(at, PATTERNS[k]);
            continue;
        }
        at = end;
        next[k] = find(at, PATTERNS[k]);
    }
    out.push_str(&html[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nest_prefixes_ids_and_links_and_lowers_headings() {
        let html = "<header id=\"experiment\"><h1>x</h1></header><section id=\"a\"><h2>A</h2>\
                    <a href=\"#check-b\">b</a><h3 class=\"c\">t &quot; id=&quot;</h3><h6>z</h6>\
                    <svg><rect fill=\"url(#g)\"/></svg></section>";
        assert_eq!(
            nest(html, "e3-"),
            "<header id=\"e3-experiment\"><h2>x</h2></header><section id=\"e3-a\"><h3>A</h3>\
             <a href=\"#e3-check-b\">b</a><h4 class=\"c\">t &quot; id=&quot;</h4><h6>z</h6>\
             <svg><rect fill=\"url(#e3-g)\"/></svg></section>"
        );
    }

    #[test]
    fn workload_kind_names_the_kind_and_what_it_runs_when_the_file_says() {
        let kind = |w: Value| workload_kind(&serde_json::json!({ "workload": w }));
        assert_eq!(kind(serde_json::json!({"micro": {"bs": "4k"}})), "micro");
        assert_eq!(
            kind(serde_json::json!({"builtin": "fileserver", "set": {"nfiles": 5}})),
            "WML: fileserver"
        );
        assert_eq!(kind(serde_json::json!({"wml": "w/oltp.f"})), "WML: oltp.f");
        assert_eq!(
            kind(serde_json::json!({"time": "3s", "set": {}, "wml": "seed003/copy.f"})),
            "WML: copy.f"
        );
        assert_eq!(
            kind(serde_json::json!({"builtin": "${workload.file}"})),
            "WML"
        );
        assert_eq!(
            kind(serde_json::json!({"exec": {"tool": "fio"}})),
            "exec: fio"
        );
        assert_eq!(kind(serde_json::json!({"exec": {"tool": "${t}"}})), "exec");
        assert_eq!(workload_kind(&serde_json::json!({})), "unknown");
        let per_config = serde_json::json!({"configs": [{"workload": {"iozone": {}}}]});
        assert_eq!(workload_kind(&per_config), "iozone");
    }

    #[test]
    fn nest_markdown_lowers_heading_lines_only() {
        assert_eq!(
            nest_markdown("# T\n\n| #3 | x |\n## S\n#hashtag\n###### deepest\n"),
            "## T\n\n| #3 | x |\n### S\n#hashtag\n###### deepest\n"
        );
    }
}
