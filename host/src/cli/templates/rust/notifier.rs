//! # {{name}}
//!
//! A GRW notifier: posts `{"type", "kind", "namespace", "name"}` for each
//! event to the URL in its configuration, `{"url": "https://example.com/hook"}`.
//! The URL's host must be in the manifest's `allowedHosts` and in GRW's
//! `pluginAllowedHosts`.

use grw_sdk::{DeliveryError, Event, Http, HttpRequest, Interest, Notifier};
use serde::Deserialize;
use serde_json::json;

/// The notifier, configured.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugin {
    url: String,
}

impl Notifier for Plugin {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let plugin: Plugin = grw_sdk::parse_config(config)?;
        if !plugin.url.starts_with("http://") && !plugin.url.starts_with("https://") {
            return Err(format!("config key `url`: expected an http:// or https:// URL, got {:?}", plugin.url));
        }
        Ok((plugin, Interest::all()))
    }

    fn deliver(&self, event: &Event, http: &dyn Http) -> Result<(), DeliveryError> {
        let body = json!({
            "type": event.event_type.as_str(),
            "kind": event.gvk().kind,
            "namespace": event.namespace(),
            "name": event.name(),
        });
        let request = HttpRequest::post(&self.url)
            .json(&body)
            .map_err(|e| DeliveryError::GiveUp(e.to_string()))?;
        // 2xx is delivered; 408, 429, 5xx and failures to connect are
        // retried; any other answer is given up.
        http.deliver(&request).map(drop)
    }
}

grw_sdk::export_notifier!(Plugin);

#[cfg(test)]
mod tests {
    use grw_sdk::testing::RecordingHttp;
    use grw_sdk::{EventType, HttpResponse};
    use serde_json::json;

    use super::*;

    fn event() -> Event {
        Event::new(
            EventType::Added,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "shop"}}),
        )
    }

    #[test]
    fn posts_the_event() {
        let (notifier, _) = Plugin::init(r#"{"url": "https://example.com/hook"}"#).unwrap();
        let http = RecordingHttp::new().respond(HttpResponse::new(204));
        notifier.deliver(&event(), &http).unwrap();
        let sent = http.requests();
        assert_eq!(sent[0].url, "https://example.com/hook");
        let body: serde_json::Value = serde_json::from_slice(&sent[0].body).unwrap();
        assert_eq!(body, json!({"type": "ADDED", "kind": "Pod", "namespace": "shop", "name": "a"}));
    }

    #[test]
    fn server_errors_are_retried() {
        let (notifier, _) = Plugin::init(r#"{"url": "https://example.com/hook"}"#).unwrap();
        let http = RecordingHttp::new().respond(HttpResponse::new(503));
        assert!(matches!(notifier.deliver(&event(), &http), Err(DeliveryError::Retry { .. })));
    }
}
