//! A filter whose `init` rejects any configuration without a `threshold`
//! key, so the host's tests can check that the error message reaches the
//! operator. With a `threshold`, it passes everything.

use grw_sdk::{Event, Filter, Interest, serde_json};

/// Needs `{"threshold": ...}`.
pub struct RejectConfig;

impl Filter for RejectConfig {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let config: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
        if config.get("threshold").is_none() {
            return Err("config needs `threshold`".into());
        }
        Ok((RejectConfig, Interest::all()))
    }

    fn decide(&self, _event: &Event) -> bool {
        true
    }
}

grw_sdk::export_filter!(RejectConfig);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_threshold() {
        assert_eq!(
            RejectConfig::init("{}").err().unwrap(),
            "config needs `threshold`"
        );
        assert_eq!(
            RejectConfig::init("nonsense").err().unwrap(),
            "config needs `threshold`"
        );
        assert!(RejectConfig::init(r#"{"threshold": 3}"#).is_ok());
    }
}
