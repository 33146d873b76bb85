//! Embeds the plugin SDKs and the WIT contract in the `grw` binary, so that
//! `grw plugin new` writes a project that builds with the SDK of this very
//! GRW, wherever the binary runs.

use std::path::{Path, PathBuf};

/// Folders of the repository copied into new plugin projects, and the file
/// names to skip in them.
const EMBEDDED: [&str; 5] = [
    "wit",
    "sdk/src",
    "selector/src",
    "sdk/python/grw_sdk",
    "sdk/js",
];

fn main() {
    let host = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = host.parent().unwrap().to_path_buf();
    let mut files = Vec::new();
    for dir in EMBEDDED {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
        collect(&root, &root.join(dir), &mut files);
    }
    files.sort();
    let mut out = String::from(
        "/// Files of the SDKs and the contract, by path in the repository.\npub static FILES: &[(&str, &[u8])] = &[\n",
    );
    for (relative, absolute) in &files {
        out.push_str(&format!(
            "    ({relative:?}, include_bytes!({:?})),\n",
            absolute.display().to_string()
        ));
    }
    out.push_str("];\n");
    // A slice of the bundled recording for `grw plugin test` in new
    // projects: the events of one namespace.
    let recording = root.join("examples/cluster-recording.jsonl");
    println!("cargo:rerun-if-changed={}", recording.display());
    let sample: String = std::fs::read_to_string(&recording)
        .unwrap_or_default()
        .lines()
        .filter(|line| {
            line.contains(r#""namespace":"payments""#) || line.contains(r#""name":"payments""#)
        })
        .map(|line| format!("{line}\n"))
        .collect();
    let sample_path = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("sample-events.jsonl");
    std::fs::write(&sample_path, sample).unwrap();
    let path = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("embedded_sdk.rs");
    std::fs::write(path, out).unwrap();
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.')
            || name == "__pycache__"
            || name == "node_modules"
            || name == "test"
            || name == "tests"
        {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else if !name.ends_with(".md") {
            let relative = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            files.push((relative, path));
        }
    }
}
