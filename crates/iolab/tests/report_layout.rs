//! The HTML report at 1400 px in a real browser: headless Chromium lays out the reports of
//! 2, 12 and 182 configurations (iolab_report::testing's seed-like experiments) and says
//! whether anything is wider than its box — the review's summary table was 1568 px in a box
//! of 1068, its p99 and `converged` columns behind a scrollbar.

use std::path::Path;

mod common;

/// Each element wider than its box (`.scroll` wrappers, the page itself), as Chromium laid
/// the report out in a window `width` px wide.
fn overflowing(dir: &Path, html: &str, width: u32) -> String {
    // A probe appended to a copy of the report (which has no script of its own): it writes
    // what overflows into an attribute that --dump-dom shows.
    let probe = r#"<script>var o=[];document.querySelectorAll(".scroll,main,section").forEach(function(e){if(e.scrollWidth>e.clientWidth+1)o.push((e.id||e.className)+" "+e.scrollWidth+">"+e.clientWidth);});if(document.documentElement.scrollWidth>window.innerWidth)o.push("page "+document.documentElement.scrollWidth);document.body.setAttribute("data-overflow",o.join(";"));</script></body>"#;
    let page = dir.join("probe.html");
    std::fs::write(&page, html.replace("</body>", probe)).unwrap();
    let o = iolab_testkit::bounded("chromium", common::HUNG)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            &format!("--window-size={width},2000"),
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .env("HOME", dir)
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&o.stdout);
    let at = dom
        .find("data-overflow=\"")
        .unwrap_or_else(|| panic!("the probe ran: {dom}"));
    let rest = &dom[at + "data-overflow=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

#[test]
fn reports_fit_a_1400_px_page_at_any_size() {
    let dir = tempfile::tempdir().unwrap();
    for n in [2, 12, 182] {
        let data = iolab_report::testing::seed_like(n);
        let (html, _, _) = iolab_report::testing::render_all(&data);
        let over = overflowing(dir.path(), &html, 1400);
        assert!(over.is_empty(), "{n} configurations: {over}");
    }
    // A narrower page stands in for more metric columns (seed 002's nine pushed `converged`
    // behind the summary's scrollbar): the cells break before their "±", not the table.
    let (html, _, _) = iolab_report::testing::render_all(&iolab_report::testing::seed_like(12));
    let over = overflowing(dir.path(), &html, 900);
    assert!(
        !over.contains("scroll"),
        "12 configurations at 900 px: {over}"
    );
}

/// Several reports on one page (the stages of a file): the contents block and every part fit
/// the same 1400 px.
#[test]
fn several_reports_on_one_page_fit_a_1400_px_page() {
    let dir = tempfile::tempdir().unwrap();
    let parts = [
        iolab_report::testing::seed_like(2),
        iolab_report::testing::seed_like(12),
    ];
    let mut html = Vec::new();
    iolab_report::render_html_many(&parts, &mut html).unwrap();
    let html = String::from_utf8(html).unwrap();
    let over = overflowing(dir.path(), &html, 1400);
    assert!(over.is_empty(), "{over}");
}
