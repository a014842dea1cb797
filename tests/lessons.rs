//! `docs/lessons/` is generated from real runs of the catalogue, and must stay so: this test
//! regenerates every page and fails while a committed page differs from what a run produces
//! (a model change that moves a convergence time shows up here as a stale lesson).
//!
//! `UPDATE_LESSONS=1 cargo test --test lessons` rewrites the pages instead of comparing.

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
        "stale lesson pages (run `UPDATE_LESSONS=1 cargo test --test lessons` and review the diff): {stale:?}"
    );
}

#[test]
fn every_page_names_the_source_it_teaches_and_links_its_scenario() {
    for path in catalogue() {
        let l = lesson(&path, root()).unwrap_or_else(|e| panic!("{e}"));
        assert!(l.page.contains("## In the source"), "{path}: the opening comment names no Nacos or RocketMQ code");
        assert!(l.page.contains("```mermaid\nsequenceDiagram"), "{path}: the page has no sequence diagram");
        // Follow the page's links from where the page lives, as a reader's browser would.
        let page = root().join("docs/lessons").join(l.page_path());
        let scenario = root().join(&path).canonicalize().unwrap();
        let targets = resolved_links(&page, &l.page);
        assert!(targets.contains(&scenario), "{path}: no link of its page leads to the scenario: {targets:?}");
    }
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
