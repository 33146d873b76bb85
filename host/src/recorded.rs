//! For tests: a real API server's answers, kept in `tests/data/kube-api`.

use serde_json::Value;

/// The events of a recorded watch, `tests/data/kube-api/{name}`: its
/// type and object, one per line.
pub(crate) fn watch_events(name: &str) -> Vec<(String, Value)> {
    let path = format!(
        "{}/../tests/data/kube-api/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            (
                event["type"].as_str().unwrap().to_string(),
                event["object"].clone(),
            )
        })
        .collect()
}
