//! Lesson pages: one Markdown page per catalogue scenario, generated from a real run of it.
//!
//! A catalogue file opens with a comment in a fixed shape — `# Question: …?`, then
//! `# Lesson: …` (the answer in a sentence or two), then paragraphs explaining why, naming the
//! code they describe. The page puts the question first, the commands to run, what the run
//! shows (its verdicts with convergence times, and its sequence diagram), the why, and the
//! classes and methods the comment names. The first use of each glossary term links to
//! `docs/glossary.md` (`view::glossary`), and a "Versions" section says which releases the
//! timings hold for (`view::versions`). Nothing on a page is written by hand: change the
//! scenario or the model, and `UPDATE_LESSONS=1 cargo test --test it lessons::` rewrites the pages
//! (the test fails while a committed page differs from what a run produces).

use crate::sim::clock::SimTime;
use crate::sim::expect::{Verdict, When};
use crate::sim::runner::{run, RunOptions, RunReport};
use crate::sim::scenario::{parse, Scenario};
use crate::sim::trace::TraceOptions;
use crate::view::glossary::{link_first_uses, terms_for};
use crate::view::mermaid::DiagramView;
use crate::view::versions::{section, Features};
use crate::view::Window;
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::path::Path;
use std::rc::Rc;

/// The opening comment of a catalogue scenario, taken apart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    pub question: String,
    pub lesson: String,
    /// The explanation, one string per paragraph (Markdown, as written in the comment).
    pub why: Vec<String>,
    /// A `Versions: …` paragraph, if the comment has one: what only this lesson knows about other
    /// RocketMQ / Nacos versions. It goes to the page's "Versions" section, not to "Why".
    pub versions: Option<String>,
}

/// Reads the opening comment: every `#` line before the first other line, up to a `# ----`
/// rule (after which 01-crash keeps its key reference, which is not part of the lesson).
pub fn opening(source: &str) -> Result<Opening, String> {
    let lines: Vec<&str> = source
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.strip_prefix("# ").unwrap_or(l.trim_start_matches('#')))
        .take_while(|l| !l.starts_with("----"))
        .collect();
    let mut paragraphs: Vec<Vec<&str>> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in lines {
        if line.trim().is_empty() {
            paragraphs.extend((!current.is_empty()).then(|| std::mem::take(&mut current)));
        } else {
            current.push(line);
        }
    }
    paragraphs.extend((!current.is_empty()).then_some(current));
    let mut first = paragraphs.first().cloned().unwrap_or_default().into_iter();
    let question: Vec<&str> = first.by_ref().take_while(|l| !l.starts_with("Lesson:")).collect();
    let lesson_at = paragraphs.first().and_then(|p| p.iter().position(|l| l.starts_with("Lesson:")));
    let question = question.join(" ");
    let (Some(q), Some(at)) = (question.strip_prefix("Question:").map(str::trim), lesson_at) else {
        return Err("the opening comment must start with `# Question: …?` followed by `# Lesson: …`".into());
    };
    let lesson = paragraphs[0][at..].join(" ");
    let lesson = lesson.strip_prefix("Lesson:").unwrap_or(&lesson).trim().to_string();
    let mut why: Vec<String> = paragraphs[1..].iter().map(|p| p.join("\n")).collect();
    // A `Sweep:` line asks for the "Across phases" section (`lesson_sweep`); it is not prose.
    why.retain(|p| !p.starts_with("Sweep:"));
    let versions = why.iter().position(|p| p.starts_with("Versions:")).map(|at| why.remove(at));
    let versions = versions.map(|v| v.trim_start_matches("Versions:").trim().replace('\n', " "));
    Ok(Opening { question: q.to_string(), lesson, why, versions })
}

/// The classes, methods and settings the text names, in order of first mention:
/// `Class#method` references, CamelCase class names, and camelCase member names. A class named
/// with a method (`RouteInfoManager#onChannelDestroy`) is not listed again on its own.
pub fn source_names(text: &str) -> Vec<String> {
    let word = |c: char| c.is_ascii_alphanumeric() || c == '#' || c == '_';
    let mut found: Vec<String> = Vec::new();
    for token in text.split(|c: char| !word(c)) {
        let token = token.trim_matches('#');
        let (head, method) = token.split_once('#').unwrap_or((token, ""));
        let upper = head.chars().filter(char::is_ascii_uppercase).count();
        let lower = head.chars().any(|c| c.is_ascii_lowercase());
        let alnum = head.chars().all(|c| c.is_ascii_alphanumeric());
        let first_upper = head.starts_with(|c: char| c.is_ascii_uppercase());
        let named = if !method.is_empty() {
            first_upper && alnum && method.starts_with(|c: char| c.is_ascii_lowercase())
        } else {
            // CamelCase classes (`BatchUnregistrationService`) and camelCase members
            // (`scanNotActiveBroker`); short or all-caps words (`RocketMQ`, `SIGTERM`) are not code.
            alnum && lower && head.len() >= 8 && upper >= if first_upper { 2 } else { 1 } && !head.ends_with("MQ")
        };
        if named && !found.iter().any(|f| f == token) {
            found.push(token.to_string());
        }
    }
    let with_method: Vec<String> = found.iter().filter_map(|f| f.split_once('#')).map(|(c, _)| c.to_string()).collect();
    let methods: Vec<String> = found.iter().filter_map(|f| f.split_once('#')).map(|(_, m)| m.to_string()).collect();
    found.retain(|f| f.contains('#') || (!with_method.contains(f) && !methods.contains(f)));
    found
}

/// `during 7.000s..20.001s`, `by 25.001s (from 20.001s)`, `at 61.000s`.
fn when_text(when: &When) -> String {
    match when {
        When::At(t) => format!("at {t}"),
        When::By { from, deadline } => format!("by {deadline} (from {from})"),
        When::During { from, until } => format!("during {from}..{until}"),
    }
}

/// The lesson as a sentence on its own: comments often continue "Lesson: a crashed …". A
/// leading code name (`wipeWritePerm is …`) keeps its spelling.
fn sentence(s: &str) -> String {
    let first_word = s.split(' ').next().unwrap_or("");
    if first_word.chars().skip(1).any(|c| c.is_ascii_uppercase()) {
        return s.to_string();
    }
    let mut chars = s.chars();
    chars.next().map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

/// Text safe in a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// Runs the scenario at `path` (spelled as the page should show it, relative to the repository
/// root) and returns its lesson page.
pub fn lesson(path: &str, root: &Path) -> Result<Lesson, String> {
    let source = std::fs::read_to_string(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
    let opening = opening(&source).map_err(|e| format!("{path}: {e}"))?;
    let scenario = parse(Path::new(path), &source).map_err(|e| e.to_string())?;
    // The diagram is drawn as the run goes: a lesson is a short run, but a file given to
    // `routesim lesson` may not be, and its events are never all held.
    let view = Rc::new(RefCell::new(DiagramView::new(&scenario, Window::whole())));
    let trace = TraceOptions { watchers: vec![Box::new(view.clone())], ..Default::default() };
    let report = run(&scenario, RunOptions { trace, ..Default::default() });
    let diagram = Rc::try_unwrap(view).ok().expect("the run has let go of its handle").into_inner().finish();
    let diagram = diagram.map(|d| d.text);
    let diagram =
        diagram.map_err(|e| format!("{path}: {e} (a lesson page shows the whole run: shorten its duration)"))?;
    let phases = super::lesson_sweep::section(path, &source)?;
    let page = page(path, &opening, &scenario, &report, &diagram, phases.as_deref());
    Ok(Lesson { path: path.to_string(), title: scenario.name.clone(), opening, page, held: report.all_held() })
}

/// One generated page and what the index needs of it.
pub struct Lesson {
    /// The scenario file, relative to the repository root.
    pub path: String,
    pub title: String,
    pub opening: Opening,
    pub page: String,
    /// Every expectation held on this run.
    pub held: bool,
}

impl Lesson {
    /// Where the page lives under `docs/lessons/`: `nacos/01-crash.md`.
    pub fn page_path(&self) -> String {
        page_path(&self.path)
    }
}

/// `scenarios/nacos/01-crash.toml` → `nacos/01-crash.md`: the scenario's folder and name.
pub fn page_path(scenario: &str) -> String {
    let p = Path::new(scenario);
    let family = p.parent().and_then(|d| d.file_name()).map_or(String::new(), |d| d.to_string_lossy().into());
    let stem = p.file_stem().map_or(String::new(), |s| s.to_string_lossy().into_owned());
    if family.is_empty() || family == "scenarios" {
        format!("{stem}.md")
    } else {
        format!("{family}/{stem}.md")
    }
}

/// Where a page's links lead: the repository root (for the scenario), `docs/`, and the lessons'
/// index, each as the page's links spell them.
struct Links {
    root: String,
    docs: String,
    index: String,
}

/// A catalogue page lives at `docs/lessons/<family>/<name>.md` and climbs back from there. Any
/// other file's page is printed for a reader beside it: its scenario link is the path as given,
/// and routesim's own docs are those of the checkout this binary was built from.
fn links(path: &str, depth: usize) -> Links {
    if path.starts_with("scenarios/") {
        let up = |n: usize| "../".repeat(n);
        return Links { root: up(2 + depth), docs: up(1 + depth), index: format!("{}README.md", up(depth)) };
    }
    let docs = format!("{}/docs/", env!("CARGO_MANIFEST_DIR"));
    Links { root: String::new(), index: format!("{docs}lessons/README.md"), docs }
}

/// `docs/` as `path`'s page links to it (see [`links`]).
pub(crate) fn docs_link(path: &str) -> String {
    links(path, page_path(path).matches('/').count()).docs
}

/// The page of one run.
/// `phases`: the "Across phases" section, for a scenario that asks for a sweep.
pub fn page(path: &str, o: &Opening, s: &Scenario, r: &RunReport, diagram: &str, phases: Option<&str>) -> String {
    let stem = Path::new(path).file_stem().map_or("run".into(), |x| x.to_string_lossy().into_owned());
    // The page is docs/lessons/<page_path>: links climb back to the repository root from there.
    let depth = page_path(path).matches('/').count();
    let Links { root, docs, index } = links(path, depth);
    // The first use of each glossary term in the prose (question, answer, why) links to its entry.
    // The catalogue's folder, or for another file what it models.
    let family = match page_path(path).split_once('/') {
        Some((f, _)) if path.starts_with("scenarios/") => f.to_string(),
        _ if !s.brokers.is_empty() || !s.namesrvs.is_empty() => "rocketmq".to_string(),
        _ => "nacos".to_string(),
    };
    let (terms, mut seen) = (terms_for(&family), BTreeSet::new());
    let mut linked = |text: &str| link_first_uses(text, &terms, &format!("{docs}glossary.md"), &mut seen);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<!-- Generated by `routesim lesson {path}` from a real run: edit the scenario, not this page. -->"
    );
    let _ = writeln!(out, "# {}\n", s.name);
    let _ = writeln!(out, "**Question.** {}\n", linked(&o.question));
    let _ = writeln!(out, "**In short.** {}\n", linked(&sentence(&o.lesson)));
    let _ = writeln!(out, "## Run it\n\n```sh");
    let _ = writeln!(out, "routesim run {path} --diagram {stem}.mmd --report {stem}.html");
    match s.timeline.first() {
        Some(first) => {
            let _ = writeln!(out, "routesim explain {path} --at {}", first.at.since(SimTime::ZERO));
        }
        None => {
            let _ = writeln!(out, "routesim explain {path}");
        }
    }
    let _ = writeln!(out, "```\n");
    let _ = writeln!(
        out,
        "The scenario: [`{path}`]({root}{path}). `--report` writes the swimlane timeline; `explain` walks"
    );
    let _ = writeln!(out, "through the key moments from the first fault on, with the tables before and after each.\n");
    let _ = writeln!(out, "## What you see\n");
    let _ = writeln!(out, "Seed {}, {} of virtual time, {} events.\n", r.seed, r.end.since(SimTime::ZERO), r.events);
    let _ = writeln!(out, "| | expectation | checked | result |\n|---|---|---|---|");
    for (exp, v) in &r.verdicts {
        let result = match v {
            Verdict::Held { converged: Some(c) } => format!("held, converged after {c}"),
            Verdict::Held { converged: None } => "held".to_string(),
            Verdict::Failed { at, mismatch } => {
                format!("FAILED at {at}: expected {}; got {}", mismatch.expected, mismatch.got)
            }
        };
        let mark = if v.held() { "✔" } else { "✘" };
        let _ = writeln!(out, "| {mark} | {} | {} | {} |", cell(&exp.name), when_text(&exp.when), cell(&result));
    }
    if let Some(phases) = phases {
        let _ = write!(out, "\n{phases}");
    }
    let _ = writeln!(out, "\nThe run as a sequence diagram (routine traffic folded into loops):\n");
    let _ = writeln!(out, "```mermaid\n{}```\n", diagram);
    let _ = writeln!(out, "## Why\n");
    for p in &o.why {
        let _ = writeln!(out, "{}\n", linked(p));
    }
    let _ = writeln!(out, "## Versions\n");
    let _ = writeln!(out, "{}", section(Features::of(s), o.versions.as_deref(), &format!("{docs}versions.md")));
    let names = source_names(&format!("{}\n{}", o.lesson, o.why.join("\n")));
    if !names.is_empty() {
        let _ = writeln!(out, "## In the source\n");
        let _ = writeln!(out, "What the explanation names, in order:\n");
        for n in names {
            let _ = writeln!(out, "- `{n}`");
        }
        out.push('\n');
    }
    let _ = writeln!(out, "---\n\n[All lessons]({index})");
    out
}

/// `docs/lessons/README.md`: every page, by family, with its question.
pub fn index(lessons: &[Lesson]) -> String {
    let mut out = String::from(
        "<!-- Generated by the lessons test from the catalogue: edit the scenarios, not this page. -->\n\
         # Lessons: route expiry, one question at a time\n\n\
         Each page below is generated from a real run of one catalogue scenario (`scenarios/`): the\n\
         question, the commands to run, what the run shows — its verdicts with convergence times and\n\
         its sequence diagram —, why, and the source methods involved. Regenerate them all with\n\
         `UPDATE_LESSONS=1 cargo test --test it lessons::`; the same test fails while a page is stale.\n\n\
         A page links the first use of each term to the [glossary](../glossary.md), and says which\n\
         RocketMQ or Nacos versions its timings hold for ([versions](../versions.md)).\n",
    );
    let mut family = String::new();
    for l in lessons {
        let page = l.page_path();
        let this = page.split_once('/').map_or("", |(f, _)| f).to_string();
        if this != family {
            let heading = match this.as_str() {
                "rocketmq" => "RocketMQ name servers",
                "nacos" => "Nacos ephemeral instances",
                other => other,
            };
            let _ = writeln!(out, "\n## {heading}\n\n| lesson | question |\n|---|---|");
            family = this;
        }
        let _ = writeln!(out, "| [{}]({page}) | {} |", cell(&l.title), cell(&l.opening.question));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "# Question: Why is it\n# slow?\n# Lesson: because `scanNotActiveBroker` runs\n# every 5 s.\n#\n# RouteInfoManager#onChannelDestroy(channel) and\n# BatchUnregistrationService run.\n#\n# * a list\n#   item\n# ----\n# key = \"reference\"\n\n[scenario]\n";

    #[test]
    fn the_opening_comment_splits_into_question_lesson_and_why() {
        let o = opening(HEAD).unwrap();
        assert_eq!(o.question, "Why is it slow?");
        assert_eq!(o.lesson, "because `scanNotActiveBroker` runs every 5 s.");
        assert_eq!(
            o.why,
            ["RouteInfoManager#onChannelDestroy(channel) and\nBatchUnregistrationService run.", "* a list\n  item"]
        );
    }

    #[test]
    fn a_scenario_without_a_question_is_refused() {
        assert!(opening("# Lesson: x\n[scenario]\n").is_err());
        assert!(opening("# Question: x?\n[scenario]\n").is_err(), "a question needs its lesson");
    }

    #[test]
    fn source_names_are_classes_and_methods_in_order_without_repeats() {
        let names = source_names(
            "RouteInfoManager#onChannelDestroy(channel) then RouteInfoManager and onChannelDestroy again; \
             BatchUnregistrationService applies unRegisterBroker. RocketMQ on SIGTERM, a Broker, docs/en/Concept.md",
        );
        assert_eq!(names, ["RouteInfoManager#onChannelDestroy", "BatchUnregistrationService", "unRegisterBroker"]);
    }
}
