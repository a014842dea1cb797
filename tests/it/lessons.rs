//! `docs/lessons/` is generated from real runs of the catalogue, and must stay so: this test
//! regenerates every page and fails while a committed page differs from what a run produces
//! (a model change that moves a convergence time shows up here as a stale lesson).
//!
//! `UPDATE_LESSONS=1 cargo test --test it lessons::` rewrites the pages instead of comparing.

use routesim::view::glossary::{slug, TERMS};
use routesim::view::lesson::{index, lesson, Lesson};
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every catalogue scenario, as the path a page shows (`scenarios/nacos/01-crash.toml`).
fn catalogue() -> Vec<String> {
    let mut files = Vec::new();
    for family in ["rocketmq", "nacos"] {
        let dir = root().join("scenarios").join(family);
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let name = entry.expect("readable entry").file_name().to_string_lossy().into_owned();
            if name.ends_with(".toml") {
                files.push(format!("scenarios/{family}/{name}"));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_lesson_page_is_what_its_scenario_produces() {
    let update = std::env::var_os("UPDATE_LESSONS").is_some();
    let lessons: Vec<Lesson> =
        catalogue().iter().map(|path| lesson(path, root()).unwrap_or_else(|e| panic!("{e}"))).collect();
    let mut pages: Vec<(PathBuf, String)> = lessons
        .iter()
        .map(|l| {
            assert!(l.held, "{}: a lesson's scenario must pass", l.path);
            (root().join("docs/lessons").join(l.page_path()), l.page.clone())
        })
        .collect();
    pages.push((root().join("docs/lessons/README.md"), index(&lessons)));
    let mut stale = Vec::new();
    for (file, page) in pages {
        if update {
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, page).unwrap();
        } else if std::fs::read_to_string(&file).ok().as_deref() != Some(page.as_str()) {
            stale.push(file.strip_prefix(root()).unwrap().display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "stale lesson pages (run `UPDATE_LESSONS=1 cargo test --test it lessons::` and review the diff): {stale:?}"
    );
}

#[test]
fn every_page_names_the_source_it_teaches_its_versions_and_links_its_scenario() {
    for path in catalogue() {
        let l = lesson(&path, root()).unwrap_or_else(|e| panic!("{e}"));
        assert!(l.page.contains("## In the source"), "{path}: the opening comment names no Nacos or RocketMQ code");
        assert!(l.page.contains("```mermaid\nsequenceDiagram"), "{path}: the page has no sequence diagram");
        // Every page says which versions its timings hold for.
        let versions = l.page.split("## Versions\n").nth(1).unwrap_or_else(|| panic!("{path}: no Versions section"));
        let system = if path.contains("/nacos/") { "Nacos 1.x HTTP client" } else { "RocketMQ 5.0.0–5.3.3" };
        assert!(versions.contains(system), "{path}: the Versions section does not name {system}");
        // Follow the page's links from where the page lives, as a reader's browser would.
        let page = root().join("docs/lessons").join(l.page_path());
        let scenario = root().join(&path).canonicalize().unwrap();
        let targets = resolved_links(&page, &l.page);
        assert!(targets.contains(&scenario), "{path}: no link of its page leads to the scenario: {targets:?}");
    }
}

/// Every term the pages link has its entry in `docs/glossary.md`: a heading whose GitHub anchor is
/// the term's. (A link to a missing anchor would still lead to the file, so the link test alone
/// would not catch it.)
#[test]
fn every_linked_term_has_a_glossary_entry() {
    let glossary = std::fs::read_to_string(root().join("docs/glossary.md")).expect("docs/glossary.md");
    let anchors: Vec<String> =
        glossary.lines().filter_map(|l| l.strip_prefix("### ").or_else(|| l.strip_prefix("## "))).map(slug).collect();
    let missing: Vec<&str> = TERMS.iter().map(|t| t.anchor).filter(|a| !anchors.iter().any(|h| h == a)).collect();
    assert!(missing.is_empty(), "glossary anchors with no heading in docs/glossary.md: {missing:?}");
}

/// A page links a term at its first use and only there: lesson rocketmq/01's explanation names
/// scanNotActiveBroker several times; the first is a link to its glossary entry, the rest are not.
#[test]
fn a_lesson_page_links_the_first_use_of_a_term_to_the_glossary() {
    let l = lesson("scenarios/rocketmq/01-kill-vs-silent.toml", root()).unwrap_or_else(|e| panic!("{e}"));
    let why = l.page.split("## Why").nth(1).expect("a Why section");
    let link = "(../../glossary.md#scannotactivebroker)";
    let first = why.find("scanNotActiveBroker").expect("the explanation names scanNotActiveBroker");
    let linked = why.find(link).expect("scanNotActiveBroker is linked");
    assert!(linked > first && linked - first <= "scanNotActiveBroker`]".len(), "the link is not at the first use");
    assert_eq!(l.page.matches(link).count(), 1, "only the first use is linked");
    // The diagram is left as it was: no link inside it.
    let diagram = l.page.split("```mermaid").nth(1).and_then(|d| d.split("```").next()).unwrap();
    assert!(!diagram.contains("glossary.md"), "a link inside the diagram");
}

/// Every relative link in every committed page, the index included, leads to a file that exists.
#[test]
fn no_lesson_link_is_broken() {
    let mut pages = vec![root().join("docs/lessons/README.md")];
    for family in ["rocketmq", "nacos"] {
        for entry in std::fs::read_dir(root().join("docs/lessons").join(family)).unwrap() {
            pages.push(entry.unwrap().path());
        }
    }
    let mut links = 0;
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        links += resolved_links(&page, &text).len();
    }
    assert!(links > 2 * catalogue().len(), "only {links} links found: is the link syntax still `](...)`?");
}

/// The files a page's relative Markdown links (`](target)`) lead to; panics on one that leads
/// nowhere. Web links and in-page anchors are left out.
fn resolved_links(page: &Path, text: &str) -> Vec<PathBuf> {
    let dir = page.parent().unwrap();
    let mut out = Vec::new();
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        let Some(end) = rest.find(')') else { continue };
        let target = rest[..end].split('#').next().unwrap();
        if target.is_empty() || target.contains("://") || target.contains(char::is_whitespace) {
            continue;
        }
        let file = dir.join(target);
        let found =
            file.canonicalize().unwrap_or_else(|_| panic!("{}: link to {target} leads nowhere", page.display()));
        out.push(found);
    }
    out
}

/// A lesson whose timing depends on phase shows its distribution: over a 30 s window of power-off
/// times, a silent broker leaves the route 90-125 s after the failure (the scan: last
/// registration + 120 s, strictly, on a 5 s grid; or the idle close, 120 s after its last 5 s
/// poll) — never sooner, never later, and spread across that range, not stuck at one value.
#[test]
fn a_phase_dependent_lesson_shows_its_distribution_across_phases() {
    let l = lesson("scenarios/rocketmq/01-kill-vs-silent.toml", root()).unwrap();
    let section = l.page.split("## Across phases\n").nth(1).expect("an Across phases section");
    let row = section.lines().find(|r| r.starts_with("| the silent broker expires")).expect("the expiry row");
    let secs: Vec<f64> =
        row.split('|').filter_map(|c| c.trim().strip_suffix('s')).filter_map(|c| c.parse().ok()).collect();
    let [min, p50, p90, max] = secs[..] else { panic!("min, p50, p90, max: {row}") };
    assert!(row.contains("| 300 of 300 |"), "{row}");
    assert!((90.0..=125.0).contains(&min) && (90.0..=125.0).contains(&max), "{row}");
    assert!(min < p50 && p50 <= p90 && p90 <= max && max - min > 15.0, "spread over the phases: {row}");
    assert!(section.contains("```text\n"), "a histogram");
}

/// `routesim lesson` on a file outside the catalogue prints a page for a reader beside it: every
/// link leads somewhere from the directory the page is saved in (the scenario as given, routesim's
/// docs in its own checkout), where it used to climb out of a `docs/lessons/` it is not in.
#[test]
fn a_lesson_for_a_file_outside_the_catalogue_links_only_to_what_exists() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mine.toml");
    std::fs::copy(root().join("scenarios/rocketmq/01-kill-vs-silent.toml"), &file).unwrap();
    let l = lesson(file.to_str().unwrap(), Path::new("")).unwrap_or_else(|e| panic!("{e}"));
    let page = dir.path().join("mine.md");
    let targets = resolved_links(&page, &l.page);
    assert!(targets.contains(&file.canonicalize().unwrap()), "the page links its scenario: {targets:?}");
    assert!(targets.iter().any(|t| t.ends_with("docs/glossary.md")), "and the glossary: {targets:?}");
}
