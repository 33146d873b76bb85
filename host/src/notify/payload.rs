//! Delivery bodies. Objects are spliced in as the cache keeps them (compact
//! JSON), never parsed again.

use super::subscription::PayloadFormat;
use crate::gvk::Gvk;
use crate::store::ChangeType;

/// One change, as a delivery needs it.
pub struct Event<'a> {
    /// Added, modified or deleted.
    pub kind: ChangeType,
    /// Kind of the object.
    pub gvk: &'a Gvk,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: &'a str,
    /// Name.
    pub name: &'a str,
    /// The object (its last state for deletions), JSON.
    pub object: &'a [u8],
    /// The previous state for modifications, JSON.
    pub old: Option<&'a [u8]>,
    /// Idempotency id.
    pub id: &'a str,
    /// Subscription name.
    pub subscription: &'a str,
    /// When the change was seen, RFC 3339.
    pub time: &'a str,
}

/// The link to an object's page in the web console (`consoleUrl`), sent in
/// every delivery's `GRW-Console-Link` header:
/// `<base>/ui/open?kind=Kind[.group]&namespace=NS&name=NAME`, the namespace
/// left out for cluster-scoped objects, each value percent-encoded. `base`
/// has no trailing `/` (the config trims it).
pub(crate) fn console_link(base: &str, gvk: &Gvk, namespace: &str, name: &str) -> String {
    let kind = if gvk.group.is_empty() {
        gvk.kind.clone()
    } else {
        format!("{}.{}", gvk.kind, gvk.group)
    };
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.append_pair("kind", &kind);
    if !namespace.is_empty() {
        query.append_pair("namespace", namespace);
    }
    query.append_pair("name", name);
    format!("{base}/ui/open?{}", query.finish())
}

/// Renders `event` in `format`.
pub fn render(format: PayloadFormat, event: &Event<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(event.object.len() + event.old.map_or(0, <[u8]>::len) + 256);
    match format {
        PayloadFormat::Grw => grw(&mut out, event),
        PayloadFormat::WatchEvent => {
            out.extend_from_slice(b"{\"type\":");
            string(&mut out, event.kind.as_str());
            out.push(b',');
            objects(&mut out, event);
            out.push(b'}');
        }
        PayloadFormat::CloudEvents => cloud_event(&mut out, event),
    }
    out
}

/// The body of the earlier GRW: `eventObjects` is `[object]`, or
/// `[old, new]` for MODIFIED; `group` is `core` for the core group.
fn grw(out: &mut Vec<u8>, e: &Event<'_>) {
    out.extend_from_slice(b"{\"eventType\":");
    string(out, e.kind.as_str());
    out.extend_from_slice(b",\"gvk\":");
    string(out, &e.gvk.to_string());
    out.extend_from_slice(b",\"group\":");
    string(out, e.gvk.group_or_core());
    out.extend_from_slice(b",\"version\":");
    string(out, &e.gvk.version);
    out.extend_from_slice(b",\"kind\":");
    string(out, &e.gvk.kind);
    out.extend_from_slice(b",\"eventObjects\":[");
    if let Some(old) = e.old {
        out.extend_from_slice(old);
        out.push(b',');
    }
    out.extend_from_slice(e.object);
    out.extend_from_slice(b"],\"message\":");
    string(out, &summary(e));
    out.extend_from_slice(b",\"additionalData\":{\"deliveryId\":");
    string(out, e.id);
    out.extend_from_slice(b",\"subscription\":");
    string(out, e.subscription);
    out.extend_from_slice(b"}}");
}

/// CloudEvents 1.0, structured JSON mode.
fn cloud_event(out: &mut Vec<u8>, e: &Event<'_>) {
    out.extend_from_slice(b"{\"specversion\":\"1.0\"");
    for (name, value) in cloud_event_attributes(e) {
        out.push(b',');
        string(out, name);
        out.push(b':');
        string(out, &value);
    }
    out.extend_from_slice(b",\"datacontenttype\":\"application/json\",\"data\":");
    cloud_event_data(out, e);
    out.push(b'}');
}

/// The CloudEvents attributes of a change but `specversion` and
/// `datacontenttype`: `id`, `source`, `type`, `subject`, `time`.
pub fn cloud_event_attributes(e: &Event<'_>) -> [(&'static str, String); 5] {
    [
        ("id", e.id.to_string()),
        ("source", format!("grw/{}", e.subscription)),
        (
            "type",
            format!(
                "io.k8s.{}.{}.{}",
                e.gvk.kind.to_ascii_lowercase(),
                e.gvk.group_or_core(),
                e.kind.as_str().to_ascii_lowercase()
            ),
        ),
        ("subject", object_path(e)),
        ("time", e.time.to_string()),
    ]
}

/// The `data` of a change's CloudEvent: `{object, oldObject?}`. In binary
/// mode (Kafka) it is the whole message value.
pub fn cloud_event_data(out: &mut Vec<u8>, e: &Event<'_>) {
    out.push(b'{');
    objects(out, e);
    out.push(b'}');
}

/// `"object":…` and, for modifications, `,"oldObject":…`.
fn objects(out: &mut Vec<u8>, e: &Event<'_>) {
    out.extend_from_slice(b"\"object\":");
    out.extend_from_slice(e.object);
    if let Some(old) = e.old {
        out.extend_from_slice(b",\"oldObject\":");
        out.extend_from_slice(old);
    }
}

/// `MODIFIED apps/v1/Deployment shop/web`.
fn summary(e: &Event<'_>) -> String {
    format!("{} {} {}", e.kind, e.gvk, object_path(e))
}

fn object_path(e: &Event<'_>) -> String {
    if e.namespace.is_empty() {
        e.name.to_string()
    } else {
        format!("{}/{}", e.namespace, e.name)
    }
}

fn string(out: &mut Vec<u8>, s: &str) {
    // Writing a string into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    #[test]
    fn console_links_name_the_kind_with_its_group_and_leave_out_an_empty_namespace() {
        let base = "https://grw.example.com/tools";
        assert_eq!(
            console_link(base, &Gvk::new("", "v1", "ConfigMap"), "shop", "web"),
            "https://grw.example.com/tools/ui/open?kind=ConfigMap&namespace=shop&name=web"
        );
        assert_eq!(
            console_link(
                base,
                &Gvk::new("apps", "v1", "Deployment"),
                "shop",
                "a b&c=d/é"
            ),
            "https://grw.example.com/tools/ui/open?kind=Deployment.apps&namespace=shop&name=a+b%26c%3Dd%2F%C3%A9"
        );
        assert_eq!(
            console_link(base, &Gvk::new("", "v1", "Node"), "", "node-a"),
            "https://grw.example.com/tools/ui/open?kind=Node&name=node-a"
        );
        assert_eq!(
            console_link(
                "http://127.0.0.1:3000",
                &Gvk::new("rbac.authorization.k8s.io", "v1", "ClusterRole"),
                "",
                "system:viewer"
            ),
            "http://127.0.0.1:3000/ui/open?kind=ClusterRole.rbac.authorization.k8s.io&name=system%3Aviewer"
        );
    }

    fn event<'a>(gvk: &'a Gvk, kind: ChangeType, old: Option<&'a [u8]>) -> Event<'a> {
        Event {
            kind,
            gvk,
            namespace: "shop",
            name: "web",
            object: br#"{"metadata":{"name":"web","resourceVersion":"8"}}"#,
            old,
            id: "u1/8/MODIFIED",
            subscription: "audit",
            time: "2026-11-21T10:00:00Z",
        }
    }

    fn parse(bytes: Vec<u8>) -> Value {
        serde_json::from_slice(&bytes).expect("payload is JSON")
    }

    #[test]
    fn grw_body_puts_old_then_new() {
        let gvk = Gvk::new("", "v1", "ConfigMap");
        let old: &[u8] = br#"{"metadata":{"name":"web","resourceVersion":"7"}}"#;
        let body = parse(render(
            PayloadFormat::Grw,
            &event(&gvk, ChangeType::Modified, Some(old)),
        ));
        assert_eq!(
            body,
            json!({
                "eventType": "MODIFIED", "gvk": "v1/ConfigMap", "group": "core", "version": "v1",
                "kind": "ConfigMap",
                "eventObjects": [
                    {"metadata": {"name": "web", "resourceVersion": "7"}},
                    {"metadata": {"name": "web", "resourceVersion": "8"}},
                ],
                "message": "MODIFIED v1/ConfigMap shop/web",
                "additionalData": {"deliveryId": "u1/8/MODIFIED", "subscription": "audit"},
            })
        );
        let added = parse(render(
            PayloadFormat::Grw,
            &event(&gvk, ChangeType::Added, None),
        ));
        assert_eq!(added["eventObjects"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn watch_event_and_cloud_event() {
        let gvk = Gvk::new("apps", "v1", "Deployment");
        let old: &[u8] = br#"{"a":1}"#;
        let watch = parse(render(
            PayloadFormat::WatchEvent,
            &event(&gvk, ChangeType::Modified, Some(old)),
        ));
        assert_eq!(watch["type"], "MODIFIED");
        assert_eq!(watch["oldObject"], json!({"a": 1}));
        assert_eq!(watch["object"]["metadata"]["resourceVersion"], "8");
        let deleted = parse(render(
            PayloadFormat::WatchEvent,
            &event(&gvk, ChangeType::Deleted, None),
        ));
        assert!(deleted.get("oldObject").is_none());

        let cloud = parse(render(
            PayloadFormat::CloudEvents,
            &event(&gvk, ChangeType::Modified, Some(old)),
        ));
        assert_eq!(cloud["specversion"], "1.0");
        assert_eq!(cloud["id"], "u1/8/MODIFIED");
        assert_eq!(cloud["type"], "io.k8s.deployment.apps.modified");
        assert_eq!(cloud["source"], "grw/audit");
        assert_eq!(cloud["subject"], "shop/web");
        assert_eq!(cloud["data"]["oldObject"], json!({"a": 1}));
    }
}
