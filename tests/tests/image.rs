//! The container image holds one file, a static `grw` (see `Containerfile`):
//! the binary built for `x86_64-unknown-linux-musl` must need no loader and
//! no library, and serve a recording from a root directory that holds
//! nothing but itself and the recording, as a non-root user.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use grw_e2e::daemon::{as_from_a_shell, bundled_recording, grw_binary};

const TARGET: &str = "x86_64-unknown-linux-musl";

/// The user the image runs as.
const USER: &str = "65532:65532";

/// The static binary, built by Cargo for the musl target (with the
/// `static-check` profile: no optimisation, no debug info, since only
/// what it links matters here, not its speed). The C libraries inside it
/// (OpenSSL, librdkafka, zstd) are compiled the same way: their build
/// scripts ask for `-O2`, and librdkafka's for `-g`, whatever the profile;
/// the flags set here win. That took their build from 424 to 290 s of CPU
/// (BENCHMARKS.md, "what CI costs").
fn static_grw() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = as_from_a_shell(&mut Command::new(cargo))
        .args(["build", "--quiet", "-p", "grw", "--bin", "grw"])
        .args(["--target", TARGET, "--profile", "static-check"])
        .env("CFLAGS", "-O0 -g0")
        .env("CXXFLAGS", "-O0 -g0")
        .current_dir(workspace)
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building grw for {TARGET} failed (tests/setup.sh adds the target and musl-tools)"
    );
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| workspace.join("target"), PathBuf::from);
    target.join(TARGET).join("static-check").join("grw")
}

/// What an ELF executable asks of the system to start: its program
/// interpreter (the dynamic loader), if any, and how many shared libraries
/// its dynamic section names (`DT_NEEDED`).
fn needs(elf: &[u8]) -> (Option<String>, usize) {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    assert_eq!(elf[4], 2, "not a 64-bit ELF file");
    let u16_at = |at: usize| u16::from_le_bytes(elf[at..at + 2].try_into().unwrap()) as usize;
    let u32_at = |at: usize| u32::from_le_bytes(elf[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) as usize;
    let (table, entry_size, entries) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    let mut interpreter = None;
    let mut libraries = 0;
    for header in (0..entries).map(|i| table + i * entry_size) {
        let (offset, size) = (u64_at(header + 8), u64_at(header + 32));
        match u32_at(header) {
            // PT_INTERP: the loader's path, NUL-terminated.
            3 => {
                let path = &elf[offset..offset + size];
                interpreter = Some(String::from_utf8_lossy(path).trim_end_matches('\0').into());
            }
            // PT_DYNAMIC: (tag, value) pairs up to DT_NULL; DT_NEEDED is 1.
            2 => {
                for entry in (offset..offset + size).step_by(16) {
                    match u64_at(entry) {
                        0 => break,
                        1 => libraries += 1,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    (interpreter, libraries)
}

/// A root directory holding only `binary` as `/grw` and the recording.
fn root_with(binary: &Path) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    std::fs::copy(binary, root.path().join("grw")).unwrap();
    std::fs::copy(bundled_recording(), root.path().join("recording.jsonl")).unwrap();
    // The unprivileged user must get past the directory itself.
    Command::new("chmod")
        .args(["755", &root.path().display().to_string()])
        .status()
        .unwrap();
    root
}

/// `/grw ARGS` with `root` as `/`: chroot as the image's user when this
/// runs as root, else in a user namespace of its own.
fn in_root(root: &Path, args: &[&str]) -> Command {
    let root = root.display().to_string();
    let mut command = if is_root() {
        let mut c = Command::new("chroot");
        c.args([&format!("--userspec={USER}"), &root, "/grw"]);
        c
    } else {
        let mut c = Command::new("unshare");
        c.args(["--user", "--map-root-user", "chroot", &root, "/grw"]);
        c
    };
    // Nothing of this environment reaches grw but the PATH (which finds
    // chroot and leads nowhere inside the root).
    command.args(args).env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[tokio::test]
async fn the_static_binary_serves_a_recording_with_no_other_file_present() {
    let binary = static_grw();
    let elf = std::fs::read(&binary).unwrap();
    assert_eq!(needs(&elf), (None, 0), "{} is not static", binary.display());
    // The check tells the two apart: the test binary is linked dynamically.
    let (loader, libraries) = needs(&std::fs::read(grw_binary()).unwrap());
    assert!(loader.is_some_and(|l| l.contains("ld-linux")) && libraries > 0);

    // A dynamically linked grw cannot even start there: the loader is missing.
    let dynamic = root_with(&grw_binary());
    let output = in_root(dynamic.path(), &["--version"]).output().unwrap();
    assert!(
        !output.status.success(),
        "the dynamic grw started with no loader present"
    );

    let root = root_with(&binary);
    let mut files: Vec<String> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["grw", "recording.jsonl"]);
    let mut daemon = in_root(
        root.path(),
        &[
            "--replay",
            "/recording.jsonl",
            "--listen-port",
            "0",
            "--log-type",
            "json",
        ],
    )
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let mut address = None;
    let mut logs = Vec::new();
    for line in BufReader::new(daemon.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        let event: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
        logs.push(line);
        if event["message"] == "API listening" {
            address = event["address"].as_str().map(str::to_string);
            break;
        }
    }
    let Some(address) = address else {
        let _ = daemon.kill();
        panic!(
            "the static grw did not start; it said:\n{}",
            logs.join("\n")
        );
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let get = async |path: &str| {
        let response = client
            .get(format!("http://{address}{path}"))
            .send()
            .await
            .unwrap();
        (response.status().as_u16(), response.text().await.unwrap())
    };
    let ready = get("/readyz").await;
    let (status, pods) = get("/api/v1/namespaces/shop/objects/pods").await;
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert_eq!(ready.0, 200, "{ready:?}");
    assert_eq!(status, 200, "{pods}");
    let pods: serde_json::Value = serde_json::from_str(&pods).unwrap();
    assert!(
        pods["items"]
            .as_array()
            .is_some_and(|items| !items.is_empty()),
        "{pods}"
    );
}
