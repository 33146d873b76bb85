//! Plugin configuration.

use serde::de::DeserializeOwned;
use serde_json::Value;

/// Parses a plugin's configuration (the manifest's `config`, as JSON text)
/// into `T`, with errors an operator can act on: they name the offending key
/// (``config key `include[1]`: invalid type: integer `3`, expected a string``).
///
/// Empty text counts as `{}`, so `#[serde(default)]` fields cover a plugin
/// loaded without configuration. Add `#[serde(deny_unknown_fields)]` to `T`
/// to catch misspelt keys.
///
/// ```
/// #[derive(serde::Deserialize)]
/// #[serde(deny_unknown_fields)]
/// struct Config {
///     include: Vec<String>,
/// }
///
/// let config: Config = grw_sdk::parse_config(r#"{"include": ["shop"]}"#)?;
/// assert_eq!(config.include, ["shop"]);
///
/// let error = grw_sdk::parse_config::<Config>(r#"{"include": [3]}"#).err().unwrap();
/// assert!(error.contains("include[0]"), "{error}");
/// # Ok::<(), String>(())
/// ```
pub fn parse_config<T: DeserializeOwned>(config: &str) -> Result<T, String> {
    let config = if config.trim().is_empty() {
        "{}"
    } else {
        config
    };
    // Parsing to a value first keeps syntax errors (with line and column)
    // apart from shape errors (with the key's path).
    let value: Value =
        serde_json::from_str(config).map_err(|e| format!("config is not valid JSON: {e}"))?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("config is not valid: {}", e.inner())
        } else {
            format!("config key `{path}`: {}", e.inner())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Config {
        #[serde(default)]
        include: Vec<String>,
        #[serde(default)]
        cluster_scoped: bool,
    }

    #[test]
    fn empty_text_is_an_empty_object() {
        assert_eq!(
            parse_config::<Config>("  ").unwrap(),
            Config {
                include: vec![],
                cluster_scoped: false
            }
        );
    }

    #[test]
    fn errors_name_the_key() {
        let e = parse_config::<Config>(r#"{"include": ["a", 3]}"#).unwrap_err();
        assert!(
            e.starts_with("config key `include[1]`: invalid type"),
            "{e}"
        );
        let e = parse_config::<Config>(r#"{"clusterScoped": "yes"}"#).unwrap_err();
        assert!(e.starts_with("config key `clusterScoped`"), "{e}");
        let e = parse_config::<Config>(r#"{"inclde": []}"#).unwrap_err();
        assert!(e.contains("unknown field `inclde`"), "{e}");
        let e = parse_config::<Config>("{").unwrap_err();
        assert!(e.starts_with("config is not valid JSON"), "{e}");
        let e = parse_config::<Config>("3").unwrap_err();
        assert!(e.starts_with("config is not valid:"), "{e}");
    }
}
