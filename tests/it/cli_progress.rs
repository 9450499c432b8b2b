//! `attn-tutor progress` and `progress --reset` tell the truth: they list or clear a progress
//! file they can read (through a symbolic link, the file it names), and when they cannot, they
//! exit non-zero naming the file and why, leaving the file as it was.

use crate::common;
use common::*;

use std::path::Path;

use tempfile::TempDir;

const SOME_PROGRESS: &str = "format = 1\n\n[lessons.cat-sat-mat]\nlast_step = \"softmax\"\n";

/// `progress ARGS` with the data folder in `data_home`: (exit code, stdout, stderr).
fn progress(data_home: &Path, args: &[&str]) -> (i32, String, String) {
    let dir = TempDir::new().unwrap();
    let output = attn_tutor(&dir)
        .env("XDG_DATA_HOME", data_home)
        .arg("progress")
        .args(args)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_refused(code: i32, stdout: &str, stderr: &str, file: &Path) {
    assert_ne!(code, 0, "reset claimed success: {stdout}");
    assert!(!stdout.contains("Cleared"), "stdout: {stdout}");
    assert!(
        stderr.contains("error:") && stderr.contains(&file.display().to_string()),
        "the error names the file: {stderr}"
    );
    assert!(
        stderr.contains("nothing was reset"),
        "says nothing happened: {stderr}"
    );
}

#[test]
fn reset_clears_a_readable_progress_file() {
    let home = TempDir::new().unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, SOME_PROGRESS).unwrap();
    let (code, stdout, _) = progress(home.path(), &["--reset"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Cleared the practice of every lesson"));
    assert!(
        !std::fs::read_to_string(&file)
            .unwrap()
            .contains("cat-sat-mat")
    );
}

#[test]
fn reset_of_a_progress_file_that_cannot_be_read_fails_naming_it() {
    // A link to itself cannot be read by anyone, root included.
    let home = TempDir::new().unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("progress.toml", &file).unwrap();
    let (code, stdout, stderr) = progress(home.path(), &["--reset"]);
    assert_refused(code, &stdout, &stderr, &file);
    assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());
}

#[test]
fn reset_of_a_progress_file_without_read_permission_fails_naming_it() {
    use std::os::unix::fs::PermissionsExt;
    let home = TempDir::new().unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, SOME_PROGRESS).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&file).is_ok() {
        eprintln!("skipped: this user reads files without read permission (root)");
        return;
    }
    let (code, stdout, stderr) = progress(home.path(), &["--reset"]);
    assert_refused(code, &stdout, &stderr, &file);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), SOME_PROGRESS);
}

#[test]
fn reset_when_the_data_folder_is_a_file_fails_naming_the_progress_file() {
    let home = TempDir::new().unwrap();
    std::fs::write(home.path().join("attn-tutor"), "not a folder").unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    let (code, stdout, stderr) = progress(home.path(), &["--reset"]);
    assert_refused(code, &stdout, &stderr, &file);
}

#[test]
fn reset_of_one_lesson_in_an_unreadable_file_fails_too() {
    let home = TempDir::new().unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("progress.toml", &file).unwrap();
    let (code, stdout, stderr) = progress(home.path(), &["--reset", "cat-sat-mat"]);
    assert_refused(code, &stdout, &stderr, &file);
}

#[test]
fn listing_a_progress_file_that_cannot_be_read_fails_naming_it() {
    let home = TempDir::new().unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("progress.toml", &file).unwrap();
    for args in [&[][..], &["cat-sat-mat"]] {
        let (code, stdout, stderr) = progress(home.path(), args);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert!(!stdout.contains("No practice kept"), "{args:?}: {stdout}");
        assert!(
            stderr.contains("error: cannot tell what practice is kept in")
                && stderr.contains(&file.display().to_string())
                && stderr.contains("it cannot be read"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn reset_through_a_symbolic_link_clears_the_file_it_names_and_keeps_the_link() {
    let home = TempDir::new().unwrap();
    let kept = TempDir::new().unwrap();
    let target = kept.path().join("my-progress.toml");
    std::fs::write(&target, SOME_PROGRESS).unwrap();
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let (code, stdout, stderr) = progress(home.path(), &["--reset"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("Cleared the practice of every lesson"));
    assert!(
        std::fs::symlink_metadata(&file).unwrap().is_symlink(),
        "the link was replaced by a file"
    );
    let left = std::fs::read_to_string(&target).unwrap();
    assert!(
        !left.contains("cat-sat-mat"),
        "the file it names kept:\n{left}"
    );
    let (_, stdout, _) = progress(home.path(), &[]);
    assert!(stdout.contains("No practice kept yet"), "{stdout}");
}

#[test]
fn reset_with_nothing_kept_writes_no_file_even_where_a_dangling_link_points() {
    let home = TempDir::new().unwrap();
    let elsewhere = TempDir::new().unwrap();
    let target = elsewhere.path().join("not-yet.toml");
    let file = home.path().join("attn-tutor/progress.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&target, &file).unwrap();
    let (code, stdout, stderr) = progress(home.path(), &["--reset"]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("nothing to clear"), "{stdout}");
    assert!(
        !target.exists(),
        "a reset made a file where the link points"
    );
    assert!(std::fs::symlink_metadata(&file).unwrap().is_symlink());

    // No data folder at all: nothing is made either.
    let empty = TempDir::new().unwrap();
    let (code, stdout, _) = progress(empty.path(), &["--reset"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("nothing to clear"), "{stdout}");
    assert!(!empty.path().join("attn-tutor").exists());
}
