//! What a client's `Accept` asks for, among what GRW writes: JSON only, as
//! plain objects, as a `Table` (kubectl), as `PartialObjectMetadata`
//! (metadata-only clients), or, for `/api` and `/apis`, as aggregated
//! discovery. Media ranges are tried by their `q` weight, then in the
//! client's order; a client that accepts nothing GRW writes (protobuf
//! only) gets 406.

use axum::http::{HeaderMap, header};

/// How an answer is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Representation {
    /// The objects themselves (a `{Kind}List` for lists), or a discovery
    /// document of the classic kind.
    Plain,
    /// A `meta.k8s.io` `Table` in this version (`v1` or `v1beta1`).
    Table(&'static str),
    /// `PartialObjectMetadata` (a `...List` for lists) in this `meta.k8s.io`
    /// version.
    Metadata(&'static str),
    /// An `APIGroupDiscoveryList` in this `apidiscovery.k8s.io` version
    /// (`v2` or `v2beta1`).
    Aggregated(&'static str),
}

/// Which representations an endpoint can write besides plain JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Endpoint {
    /// `/api` and `/apis`: aggregated discovery too.
    Discovery,
    /// A collection or an object: tables and metadata too.
    Resource,
    /// Everything else: plain JSON only.
    Other,
}

/// The client accepts nothing GRW writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotAcceptable;

/// The representation to answer `headers`' `Accept` with.
pub(crate) fn negotiate(
    headers: &HeaderMap,
    endpoint: Endpoint,
) -> Result<Representation, NotAcceptable> {
    let accept: Vec<&str> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    let accept = accept.join(",");
    if accept.trim().is_empty() {
        return Ok(Representation::Plain);
    }
    let mut ranges: Vec<MediaRange<'_>> = accept.split(',').filter_map(MediaRange::parse).collect();
    // Stable: equal weights keep the client's order.
    ranges.sort_by(|a, b| b.q.total_cmp(&a.q));
    ranges
        .iter()
        .filter(|range| range.q > 0.0)
        .find_map(|range| range.representation(endpoint))
        .ok_or(NotAcceptable)
}

/// One media range of `Accept`, e.g.
/// `application/json;as=Table;v=v1;g=meta.k8s.io`.
#[derive(Debug)]
struct MediaRange<'a> {
    essence: String,
    params: Vec<(String, &'a str)>,
    q: f32,
}

impl<'a> MediaRange<'a> {
    fn parse(text: &'a str) -> Option<MediaRange<'a>> {
        let mut parts = text.split(';');
        let essence = parts.next()?.trim().to_ascii_lowercase();
        if essence.is_empty() {
            return None;
        }
        let mut params = Vec::new();
        let mut q = 1.0;
        for part in parts {
            let (name, value) = part.split_once('=')?;
            let name = name.trim().to_ascii_lowercase();
            let value = value.trim().trim_matches('"');
            if name == "q" {
                q = value.parse().ok()?;
            } else {
                params.push((name, value));
            }
        }
        Some(MediaRange { essence, params, q })
    }

    fn param(&self, name: &str) -> Option<&'a str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| *value)
    }

    fn representation(&self, endpoint: Endpoint) -> Option<Representation> {
        if !matches!(
            self.essence.as_str(),
            "application/json" | "application/*" | "*/*"
        ) {
            return None;
        }
        let Some(as_kind) = self.param("as") else {
            return Some(Representation::Plain);
        };
        let (group, version) = (self.param("g")?, self.param("v")?);
        match (endpoint, as_kind, group) {
            (Endpoint::Resource, "Table", "meta.k8s.io") => {
                meta_version(version).map(Representation::Table)
            }
            (
                Endpoint::Resource,
                "PartialObjectMetadata" | "PartialObjectMetadataList",
                "meta.k8s.io",
            ) => meta_version(version).map(Representation::Metadata),
            (Endpoint::Discovery, "APIGroupDiscoveryList", "apidiscovery.k8s.io") => {
                match version {
                    "v2" => Some(Representation::Aggregated("v2")),
                    "v2beta1" => Some(Representation::Aggregated("v2beta1")),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

fn meta_version(version: &str) -> Option<&'static str> {
    match version {
        "v1" => Some("v1"),
        "v1beta1" => Some("v1beta1"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(accept: &str, endpoint: Endpoint) -> Result<Representation, NotAcceptable> {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        negotiate(&headers, endpoint)
    }

    #[test]
    fn what_clients_send_is_answered_as_they_prefer() {
        use Endpoint::*;
        use Representation::*;
        let kubectl_tables = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        let kubectl_discovery = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        let cases = [
            ("", Resource, Ok(Plain)),
            ("application/json", Resource, Ok(Plain)),
            ("*/*", Resource, Ok(Plain)),
            ("application/json, */*", Resource, Ok(Plain)),
            (kubectl_tables, Resource, Ok(Table("v1"))),
            (kubectl_tables, Other, Ok(Plain)),
            (
                "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
                Resource,
                Ok(Table("v1beta1")),
            ),
            (kubectl_discovery, Discovery, Ok(Aggregated("v2"))),
            (kubectl_discovery, Resource, Ok(Plain)),
            (
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList",
                Discovery,
                Ok(Aggregated("v2beta1")),
            ),
            (
                "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
                Resource,
                Ok(Metadata("v1")),
            ),
            (
                "application/vnd.kubernetes.protobuf, application/json",
                Resource,
                Ok(Plain),
            ),
            ("application/json;stream=watch", Resource, Ok(Plain)),
            (
                "application/json;q=0.5, application/json;as=Table;g=meta.k8s.io;v=v1",
                Resource,
                Ok(Table("v1")),
            ),
            (
                "application/vnd.kubernetes.protobuf",
                Resource,
                Err(NotAcceptable),
            ),
            ("application/yaml", Other, Err(NotAcceptable)),
            ("text/html", Resource, Err(NotAcceptable)),
            (
                "application/json;as=Table;v=v2;g=meta.k8s.io",
                Resource,
                Err(NotAcceptable),
            ),
            ("application/json;q=0", Resource, Err(NotAcceptable)),
        ];
        for (accept, endpoint, want) in cases {
            assert_eq!(with(accept, endpoint), want, "{accept}");
        }
    }
}
