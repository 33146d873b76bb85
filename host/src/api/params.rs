//! Strict query-string parsing: unknown and repeated parameters are errors
//! that name the parameter and list the accepted ones.

use std::collections::BTreeMap;

use super::Problem;

/// Parameters of one request, each given at most once.
#[derive(Debug, Default)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// Parses `raw` (the query string without `?`), accepting only `allowed` names.
    pub fn parse(raw: Option<&str>, allowed: &[&str]) -> Result<Params, Problem> {
        let pairs: Vec<(String, String)> =
            serde_urlencoded::from_str(raw.unwrap_or("")).map_err(|e| {
                Problem::bad_request(
                    "InvalidParameter",
                    format!("query string is not valid: {e}"),
                )
            })?;
        let mut params = BTreeMap::new();
        for (name, value) in pairs {
            if !allowed.contains(&name.as_str()) {
                return Err(Problem::bad_request(
                    "UnknownParameter",
                    format!(
                        "unknown query parameter `{name}`; this route accepts: {}",
                        if allowed.is_empty() {
                            "none".to_string()
                        } else {
                            allowed.join(", ")
                        }
                    ),
                ));
            }
            if params.insert(name.clone(), value).is_some() {
                return Err(Problem::bad_request(
                    "RepeatedParameter",
                    format!("query parameter `{name}` is given more than once"),
                ));
            }
        }
        Ok(Params(params))
    }

    /// A parameter's value, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// A parameter's value, if given and not empty.
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// A boolean parameter: `true`/`1` or `false`/`0`; absent = `false`.
    pub fn flag(&self, name: &str) -> Result<bool, Problem> {
        match self.get(name) {
            None | Some("false" | "0") => Ok(false),
            Some("true" | "1" | "") => Ok(true),
            Some(other) => Err(Problem::bad_request(
                "InvalidParameter",
                format!("query parameter `{name}` must be `true` or `false`, got `{other}`"),
            )),
        }
    }

    /// A positive integer parameter no larger than `max`.
    pub fn number(&self, name: &str, max: u64) -> Result<Option<u64>, Problem> {
        let Some(text) = self.get(name) else {
            return Ok(None);
        };
        match text.parse::<u64>() {
            Ok(n) if n >= 1 && n <= max => Ok(Some(n)),
            _ => Err(Problem::bad_request(
                "InvalidParameter",
                format!(
                    "query parameter `{name}` must be a whole number from 1 to {max}, got `{text}`"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_parameters() {
        let allowed = ["limit", "watch"];
        let cases: [(&str, Result<(), &str>); 6] = [
            ("limit=5&watch=true", Ok(())),
            ("", Ok(())),
            (
                "limit=5&limit=6",
                Err("query parameter `limit` is given more than once"),
            ),
            (
                "nope=1",
                Err("unknown query parameter `nope`; this route accepts: limit, watch"),
            ),
            ("limit=%zz", Ok(())),
            (
                "watch=maybe",
                Err("query parameter `watch` must be `true` or `false`, got `maybe`"),
            ),
        ];
        for (raw, want) in cases {
            let result =
                Params::parse(Some(raw), &allowed).and_then(|p| p.flag("watch").map(|_| ()));
            match want {
                Ok(()) => assert!(result.is_ok(), "{raw}: {result:?}"),
                Err(msg) => assert_eq!(result.unwrap_err().message, msg, "{raw}"),
            }
        }
        let p = Params::parse(Some("limit=0"), &allowed).unwrap();
        let err = p.number("limit", 10).unwrap_err();
        assert_eq!(
            err.message,
            "query parameter `limit` must be a whole number from 1 to 10, got `0`"
        );
        assert_eq!(
            Params::parse(Some("limit=7"), &allowed)
                .unwrap()
                .number("limit", 10)
                .unwrap(),
            Some(7)
        );
    }
}
