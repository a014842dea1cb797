//! `routesim lesson FILE`: the lesson page of a catalogue scenario, generated from a run of it
//! and printed as Markdown (the pages under `docs/lessons/` are this output).

use super::output::output_failed;
use super::{FAILED, HELD, INVALID};
use crate::view::lesson::lesson as generate;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct LessonArgs {
    /// The scenario, whose opening comment starts with `# Question:` and `# Lesson:`.
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

pub fn lesson(args: LessonArgs) -> u8 {
    // Relative paths stay relative: they are what the page shows in its commands and links.
    let path = args.file.to_string_lossy().replace('\\', "/");
    match generate(&path, Path::new("")) {
        Ok(l) => {
            let code = if l.held { HELD } else { FAILED };
            let mut out = std::io::stdout().lock();
            match out.write_all(l.page.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => code,
                Err(e) => output_failed(&e, code),
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            INVALID
        }
    }
}
