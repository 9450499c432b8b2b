//! Saves leave nothing behind: the temporary file a save writes first is named for the project
//! (`.NAME.attn-tutor-save.PID.XXXXXX`), and the next save into the same folder removes the ones
//! a killed save left (their writer is gone, or they are old), and nothing else.

use crate::common;

use std::fs::{File, FileTimes};
use std::path::Path;
use std::time::{Duration, SystemTime};

use attn_tutor::lesson::write_file;
use tempfile::TempDir;

const STALE_AGE: Duration = Duration::from_secs(3600);

fn plant(dir: &Path, name: &str, age: Duration) {
    let path = dir.join(name);
    std::fs::write(&path, "half a lesson").unwrap();
    let then = SystemTime::now() - age;
    File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_times(FileTimes::new().set_modified(then).set_accessed(then))
        .unwrap();
}

/// A process id that is not running: a child that has exited and been waited for.
fn finished_pid() -> u32 {
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

#[test]
fn a_failed_save_leaves_nothing_behind() {
    // The target is a folder, so the final rename fails after the temporary was written.
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("lesson.toml")).unwrap();
    assert!(write_file(&dir.path().join("lesson.toml"), "format = 1\n", true).is_err());
    // Nothing is left after a failed save either.
    assert_eq!(common::files_in(dir.path()), ["lesson.toml"]);
}

#[test]
fn a_save_removes_an_old_temporary_of_its_own_pattern() {
    let dir = TempDir::new().unwrap();
    let ours = format!(".lesson.toml.attn-tutor-save.{}.Ab12Cd", std::process::id());
    plant(dir.path(), &ours, STALE_AGE);
    write_file(&dir.path().join("other.toml"), "format = 1\n", false).unwrap();
    assert_eq!(common::files_in(dir.path()), ["other.toml"]);
}

#[test]
fn a_save_removes_a_temporary_whose_writer_is_gone_even_when_recent() {
    let dir = TempDir::new().unwrap();
    let ours = format!(".big.toml.attn-tutor-save.{}.Zz99Yy", finished_pid());
    plant(dir.path(), &ours, Duration::from_secs(5));
    write_file(&dir.path().join("big.toml"), "format = 1\n", true).unwrap();
    assert_eq!(common::files_in(dir.path()), ["big.toml"]);
}

#[test]
fn a_save_leaves_files_not_of_its_pattern_and_a_running_save_alone() {
    let dir = TempDir::new().unwrap();
    // tempfile's own default name, an editor's swap file, a name merely containing our words.
    for name in [
        ".tmpM10NzW",
        ".lesson.toml.swp",
        "attn-tutor-save.toml",
        "notes.txt",
    ] {
        plant(dir.path(), name, STALE_AGE);
    }
    // A temporary of a save still running (this process, a moment ago).
    let running = format!(".lesson.toml.attn-tutor-save.{}.Qq11Ww", std::process::id());
    plant(dir.path(), &running, Duration::from_secs(1));
    // A folder of our pattern is not a temporary file.
    let folder = format!(".x.attn-tutor-save.{}.Aa00Bb", finished_pid());
    std::fs::create_dir(dir.path().join(&folder)).unwrap();
    write_file(&dir.path().join("lesson.toml"), "format = 1\n", true).unwrap();
    let mut expected = vec![
        ".lesson.toml.swp".to_string(),
        ".tmpM10NzW".to_string(),
        folder,
        running,
        "attn-tutor-save.toml".to_string(),
        "lesson.toml".to_string(),
        "notes.txt".to_string(),
    ];
    expected.sort();
    assert_eq!(common::files_in(dir.path()), expected);
}

#[test]
fn the_progress_file_save_cleans_the_data_folder_the_same_way() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("progress.toml");
    let ours = format!(".progress.toml.attn-tutor-save.{}.Pp22Rr", finished_pid());
    plant(dir.path(), &ours, Duration::from_secs(5));
    let (mut store, warning) = attn_tutor::practice::ProgressStore::open(&path);
    assert!(warning.is_none());
    store.visit("cat-sat-mat", attn_tutor::attention::Step::Softmax);
    store.save().unwrap();
    assert_eq!(common::files_in(dir.path()), ["progress.toml"]);
}
