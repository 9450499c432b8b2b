//! The largest lesson within the limits (256 tokens, 256 × 1024 embeddings, three 1024 × 1024
//! weights, 8 decimals) is shown in every format within 150 MB. `show --format json` used to
//! peak at 355 MB and `show` at 224 MB, building their 125 MB of output in memory.
//!
//! The peak is read from the child's /proc status (VmHWM) while it runs and writes: a sample
//! per chunk of output and every 20 ms before the first, so a peak reached while building the
//! output (as before) is seen. scripts/memory.sh measures the exact figures for the README.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const LIMIT_KIB: u64 = 150 * 1024;

fn peak_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `show` of the largest lesson in `format`; returns the bytes written and the peak seen.
fn show(format: &str) -> (usize, u64) {
    run("largest.toml", &["show", "--format", format])
}

/// Runs the command (`args` with the fixture's path after the first) on a fixture; returns
/// the bytes written and the peak seen.
fn run(fixture: &str, args: &[&str]) -> (usize, u64) {
    let lesson = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(fixture);
    let mut child = Command::new(env!("CARGO_BIN_EXE_attn-tutor"))
        .arg(args[0])
        .arg(&lesson)
        .args(&args[1..])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let peak = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (peak, done) = (Arc::clone(&peak), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                if let Some(kib) = peak_kib(pid) {
                    peak.fetch_max(kib, Ordering::Relaxed);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let mut stdout = child.stdout.take().unwrap();
    let mut buffer = vec![0; 1 << 16];
    let mut written = 0;
    loop {
        let read = stdout.read(&mut buffer).unwrap();
        if read == 0 {
            break;
        }
        written += read;
        if let Some(kib) = peak_kib(pid) {
            peak.fetch_max(kib, Ordering::Relaxed);
        }
    }
    assert!(child.wait().unwrap().success());
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    (written, peak.load(Ordering::Relaxed))
}

#[test]
fn the_largest_lesson_shows_as_json_within_150_mb() {
    let (written, peak) = show("json");
    assert!(written > 100_000_000, "the whole output: {written} bytes");
    assert!(peak > 0, "the peak was sampled");
    assert!(peak <= LIMIT_KIB, "peak {} MB", peak / 1024);
}

#[test]
fn the_largest_lesson_shows_as_text_within_150_mb() {
    let (written, peak) = show("text");
    assert!(written > 10_000_000, "the whole output: {written} bytes");
    assert!(peak > 0, "the peak was sampled");
    assert!(peak <= LIMIT_KIB, "peak {} MB", peak / 1024);
}

/// The largest generation lesson (256 tokens, d_model 1024, 16 heads over 16 K/V groups, W_o)
/// holds one engine in `check`: 97 MB, where a second one, made for a backward pass the lesson
/// does not have, took it to 150 MB.
#[test]
fn the_largest_generation_lesson_checks_within_150_mb() {
    // Issue 29's goal. It peaked at 97 MB with the system's allocator; mimalloc, which gives a
    // classroom's memory back when students leave, holds some 20 MB more here.
    let (written, peak) = run("decode-largest.toml", &["check"]);
    assert!(written > 0, "the report");
    assert!(peak > 0, "the peak was sampled");
    assert!(peak <= LIMIT_KIB, "peak {} MB", peak / 1024);
}

/// The allocator asks the kernel for no transparent huge pages: with them, every run of a small
/// `show` had the kernel zero three 2 MiB pages, a sixth of its whole process, and the large
/// lesson's peak was 18 MB instead of 11. A region given MADV_HUGEPAGE is marked `hg` among its
/// VmFlags in /proc/PID/smaps, read while the child waits on the full pipe.
#[test]
fn the_allocator_asks_the_kernel_for_no_huge_pages() {
    let lesson = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/largest.toml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_attn-tutor"))
        .arg("show")
        .arg(&lesson)
        .args(["--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("attn-tutor starts");
    // Its first byte: the allocator has set up its arena; the rest cannot all be written.
    let mut first = [0u8; 1];
    let read = child.stdout.as_mut().expect("piped").read_exact(&mut first);
    let smaps = std::fs::read_to_string(format!("/proc/{}/smaps", child.id()));
    let _ = child.kill();
    let _ = child.wait();
    read.expect("the JSON begins");
    let smaps = smaps.expect("the child's /proc/PID/smaps");
    let flags: Vec<&str> = smaps
        .lines()
        .filter(|line| line.starts_with("VmFlags:"))
        .collect();
    assert!(flags.len() > 10, "the child's regions are listed");
    let huge = flags
        .iter()
        .filter(|line| line.split_whitespace().any(|flag| flag == "hg"))
        .count();
    assert_eq!(huge, 0, "regions marked for huge pages");
}
