//! The config keys the parser accepts, against those `docs/configuration.md`
//! documents: each key documented once, and nothing documented that the
//! parser does not accept.
//!
//! The accepted keys are recorded while a config that has every struct of
//! the file (every list non-empty, every kind of subscription destination)
//! is parsed: [`super::de::ValueDeserializer`] hands [`record`] the path and
//! the member names of each struct it reads. A notifier's `filter` is the
//! one part read another way (as JSON, by [`NotifierFilter`]), so its
//! members come from the list that reader accepts.
//!
//! A new object in the file needs its place in [`every_struct`]: until
//! then its members, once documented, are reported as not accepted.
//!
//! Keys are named by their full path: members joined by `.`, and `[]` after
//! a list whose items are objects (`subscriptions[].webhook.url`).
//!
//! [`NotifierFilter`]: super::compat_body::NotifierFilter

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::compat_body::FILTER_MEMBERS;
use super::subscription::SubscriptionConfig;

thread_local! {
    /// The keys recorded on this thread, while [`recording`] runs.
    static RECORDED: RefCell<Option<BTreeSet<String>>> = const { RefCell::new(None) };
}

/// Records the members of a struct read at `path` (`subscriptions[2].kafka`),
/// when [`recording`] is running on this thread.
pub(super) fn record(path: &str, fields: &[&str]) {
    RECORDED.with(|recorded| {
        if let Some(keys) = recorded.borrow_mut().as_mut() {
            let base = without_indexes(path);
            for field in fields {
                keys.insert(if base.is_empty() {
                    (*field).to_string()
                } else {
                    format!("{base}.{field}")
                });
            }
        }
    });
}

/// `a[3].b[0]` → `a[].b[]`.
fn without_indexes(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    let mut in_index = false;
    for c in path.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[]");
            }
            ']' => in_index = false,
            _ if in_index => {}
            _ => out.push(c),
        }
    }
    out
}

/// The keys of every struct read while `parse` runs.
fn recording(parse: impl FnOnce()) -> BTreeSet<String> {
    RECORDED.with(|recorded| *recorded.borrow_mut() = Some(BTreeSet::new()));
    parse();
    RECORDED.with(|recorded| recorded.borrow_mut().take().unwrap_or_default())
}

/// A config with every struct of the file present, every list of structs
/// non-empty, and one subscription per destination.
fn every_struct() -> Value {
    json!({
        "apiTokenFile": "/run/grw/token",
        "apiAuth": "token",
        "k8sClientConfig": {"authType": "KubeConfig"},
        "initialWatchingResources": [{
            "group": "apps", "version": "v1", "kind": "Deployment",
            "watchOptions": {"namespace": "shop"},
            "notifiers": [{
                "webhookUrls": ["http://127.0.0.1:9000/hook"],
                "filter": {"namespace": "shop"},
                "matchConditions": [{"name": "running", "expression": "object.status.phase == 'Running'"}]
            }]
        }],
        "delegatedAuth": {"widen": true},
        "tlsListener": {"certFile": "/tls/tls.crt", "keyFile": "/tls/tls.key", "auth": "token"},
        "leaderElection": {"leaseName": "grw"},
        "queries": {
            "scanHelpers": 1,
            "indexedFields": [{"kind": "Pod", "fields": ["spec.schedulerName"]}]
        },
        "journal": {"kinds": [{"kind": "Lease", "journal": true}]},
        "subscriptions": [
            {
                "name": "webhook", "kind": "Pod",
                "webhook": {"url": "http://127.0.0.1:9000/hook"},
                "matchConditions": [{"name": "running", "expression": "object.status.phase == 'Running'"}],
                "retry": {"initialDelayMs": 500}
            },
            {"name": "nats", "kind": "Pod", "nats": {"url": "nats://127.0.0.1:4222"}},
            {
                "name": "kafka", "kind": "Pod",
                "kafka": {
                    "bootstrapServers": "127.0.0.1:9092", "topic": "grw",
                    "sasl": {"mechanism": "PLAIN", "username": "grw", "passwordFile": "/run/kafka"},
                    "tls": {"caFile": "/run/kafka-ca.crt"}
                }
            },
            {"name": "plugin", "kind": "Pod", "plugin": {"name": "chat-notifier"}}
        ]
    })
}

/// The key paths `docs/configuration.md` documents, each with how many
/// times: the first cell, in backticks, of each row of its tables whose
/// header's first cell is `key`.
fn documented(text: &str) -> Result<BTreeMap<String, usize>, String> {
    let mut keys = BTreeMap::new();
    let mut in_key_table = false;
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if !line.starts_with('|') {
            in_key_table = false;
            continue;
        }
        let first = line
            .trim_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if first == "key" {
            in_key_table = true;
            continue;
        }
        if !in_key_table || first.chars().all(|c| c == '-' || c == ':') {
            continue;
        }
        let key = first
            .strip_prefix('`')
            .and_then(|k| k.strip_suffix('`'))
            .filter(|k| !k.is_empty() && !k.contains(['`', ' ']))
            .ok_or_else(|| {
                format!(
                    "docs/configuration.md line {}: a row of a key table names no key; its first cell must be one key path in backticks, got `{first}`",
                    number + 1
                )
            })?;
        *keys.entry(key.to_string()).or_insert(0) += 1;
    }
    Ok(keys)
}

fn listed(keys: &BTreeSet<&String>) -> String {
    keys.iter()
        .map(|k| format!("  `{k}`"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_config_key_is_documented_once_in_docs_configuration_md() {
    let fixture = every_struct();
    let mut accepted = recording(|| {
        let parsed = super::parse(&fixture.to_string(), &|_| None);
        let (_, warnings) = parsed.expect("the fixture with every struct is a valid config");
        // An unknown key in the fixture is a struct it does not reach.
        assert_eq!(warnings, Vec::<String>::new(), "the fixture warns");
    });
    for member in FILTER_MEMBERS {
        accepted.insert(format!(
            "initialWatchingResources[].notifiers[].filter.{member}"
        ));
    }

    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/configuration.md");
    let text = std::fs::read_to_string(path).expect("docs/configuration.md is readable");
    let documented = documented(&text).unwrap_or_else(|e| panic!("{e}"));

    let twice: BTreeSet<&String> = documented
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(k, _)| k)
        .collect();
    let missing: BTreeSet<&String> = accepted
        .iter()
        .filter(|k| !documented.contains_key(*k))
        .collect();
    let stale: BTreeSet<&String> = documented
        .keys()
        .filter(|k| !accepted.contains(*k))
        .collect();
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "config keys the parser accepts that docs/configuration.md does not document (add a row for each to its key tables, named by its full path, with its default and meaning):\n{}",
            listed(&missing)
        ));
    }
    if !stale.is_empty() {
        problems.push(format!(
            "config keys docs/configuration.md documents that the parser does not accept (remove their rows, or correct their paths):\n{}",
            listed(&stale)
        ));
    }
    if !twice.is_empty() {
        problems.push(format!(
            "config keys docs/configuration.md documents more than once (keep one row each):\n{}",
            listed(&twice)
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A subscription posted to the API is read by the same code as one of the
/// config file, so the members documented under `subscriptions[]` are the
/// API's too.
#[test]
fn subscriptions_of_the_api_have_the_members_of_the_config_file() {
    let fixture = every_struct();
    let in_file: BTreeSet<String> = recording(|| {
        super::parse(&fixture.to_string(), &|_| None).expect("the fixture is a valid config");
    })
    .into_iter()
    .filter_map(|k| k.strip_prefix("subscriptions[].").map(String::from))
    .collect();
    let posted = recording(|| {
        for subscription in fixture["subscriptions"].as_array().into_iter().flatten() {
            SubscriptionConfig::from_json(subscription).expect("a valid subscription");
        }
    });
    assert_eq!(posted, in_file);
}

#[test]
fn key_paths_drop_list_indexes() {
    assert_eq!(
        without_indexes("subscriptions[12].kafka.sasl"),
        "subscriptions[].kafka.sasl"
    );
    assert_eq!(without_indexes(""), "");
}

#[test]
fn a_key_table_row_without_a_key_is_refused() {
    let text = "| key | default | meaning |\n|---|---|---|\n| `a.b` | 1 | x |\n| a.c | 2 | y |\n";
    let error = documented(text).unwrap_err();
    assert!(error.contains("line 4"), "{error}");
    let keys = documented("| key | default |\n|---|---|\n| `a` | 1 |\n\n| other |\n|---|\n| b |\n")
        .unwrap();
    assert_eq!(keys.into_iter().collect::<Vec<_>>(), [("a".to_string(), 1)]);
}
