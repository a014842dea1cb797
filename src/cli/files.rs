//! Output files (`run --trace`, `--diagram`, `--report`), written safely.
//!
//! Writing straight into the target truncates it first, so a run that is interrupted or fails
//! half-way leaves half a file and has already lost the previous one. Instead each output is
//! written to a temporary file beside its target — the same directory, hence the same
//! filesystem, where `rename` replaces a file atomically — and renamed over it only once
//! complete. Whoever reads the target sees the old file or the new one, never a mix; a run that
//! stops early deletes its temporary file (one killed outright leaves a hidden `.NAME.*.tmp`).
//!
//! And a command's outputs must not name its inputs or each other: `run f.toml --trace f.toml`
//! would replace the scenario with its own trace.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// An output being written: into a temporary file until [`Staged::commit`]; dropped
/// uncommitted, the temporary file is removed and the target left as it was.
pub struct Staged {
    file: File,
    /// `None` when the target is written in place (see [`Staged::create`]).
    tmp: Option<PathBuf>,
    dest: PathBuf,
}

impl Staged {
    pub fn create(dest: &Path) -> io::Result<Staged> {
        let in_place = |file| Ok(Staged { file, tmp: None, dest: dest.to_path_buf() });
        match fs::metadata(dest) {
            // Found now rather than when the rename fails, after the whole run.
            Ok(meta) if meta.is_dir() => return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory")),
            // A device or a pipe (`--trace /dev/stdout`) cannot be replaced by a rename, and
            // its directory is seldom writable: it is written in place, as it always was.
            Ok(meta) if !meta.is_file() => return in_place(File::create(dest)?),
            _ => {}
        }
        let name = dest.file_name().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a file name"))?;
        let dir = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        // Unique within the process by the counter, between live processes by the pid; a stale
        // file of a killed run with the same pid is stepped over, never truncated.
        static NEXT: AtomicU32 = AtomicU32::new(0);
        loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let tmp = dir.join(format!(".{}.{}-{n}.tmp", name.to_string_lossy(), std::process::id()));
            match OpenOptions::new().write(true).create_new(true).open(&tmp) {
                Ok(file) => return Ok(Staged { file, tmp: Some(tmp), dest: dest.to_path_buf() }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Another handle on the file, for a writer that outlives this borrow (the trace's).
    pub fn writer(&self) -> io::Result<File> {
        self.file.try_clone()
    }

    /// The target.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    pub fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }

    /// Puts the finished file in place of the target.
    pub fn commit(mut self) -> io::Result<()> {
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        let done = (|| {
            // On disk before it is named: after a power cut the target is the old file or the
            // whole new one, not an empty file under the new name.
            self.file.sync_all()?;
            // A file being replaced keeps its permissions, as it did when written in place.
            if let Ok(meta) = fs::metadata(&self.dest) {
                fs::set_permissions(&tmp, meta.permissions())?;
            }
            fs::rename(&tmp, &self.dest)
        })();
        if done.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        done
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            let _ = fs::remove_file(tmp);
        }
    }
}

/// What a path names, as far as can be told before writing: the canonical path of a file that
/// exists; for one that does not yet, its canonical directory and its name, so `./x` and
/// `sub/../x` are still seen to be the same; failing both, the path as given.
fn identity(path: &Path) -> PathBuf {
    if let Ok(p) = fs::canonicalize(path) {
        return p;
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (fs::canonicalize(dir), path.file_name()) {
        (Ok(dir), Some(name)) => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// Refuses an output (`(flag, path)`) that names one of the `inputs` or an earlier output.
pub fn check_outputs(inputs: &[PathBuf], outputs: &[(&str, &Path)]) -> Result<(), String> {
    let inputs: Vec<PathBuf> = inputs.iter().map(|p| identity(p)).collect();
    for (i, (flag, path)) in outputs.iter().enumerate() {
        let id = identity(path);
        if inputs.contains(&id) {
            return Err(format!("{flag} {}: that is a scenario being read; write to another file", path.display()));
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| identity(p) == id) {
            return Err(format!("{flag} {}: {other} writes there too; give each output its own file", path.display()));
        }
    }
    Ok(())
}
