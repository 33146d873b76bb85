//! The web console at `/ui/`: a page and its code, built from
//! `host/console/src` into `host/console/dist` (committed: the daemon's
//! build needs no Node.js) and compiled into the binary.
//!
//! The assets are open to anyone, like `/healthz`: they hold no data. What
//! the console shows it reads from the API with the caller's own token,
//! through the same checks as any other client. Every path under `/ui/`
//! that is not an asset answers the page, whose code reads the path: the
//! state of a page is in its URL, and `/ui/open?kind=&namespace=&name=`
//! links to an object.
//!
//! Nothing the console loads comes from outside the daemon: the
//! `Content-Security-Policy` lets it reach only its own origin.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::AppState;
use super::access::Rule;
use super::table::Routes;

/// An asset: its type, and its bytes plain and gzipped.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    plain: &'static [u8],
    gzip: &'static [u8],
}

macro_rules! asset {
    ($name:literal, $type:literal) => {
        Asset {
            name: $name,
            content_type: $type,
            plain: include_bytes!(concat!("../../console/dist/", $name)),
            gzip: include_bytes!(concat!("../../console/dist/", $name, ".gz")),
        }
    };
}

const PAGE: Asset = asset!("index.html", "text/html; charset=utf-8");

const ASSETS: [Asset; 2] = [
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("app.css", "text/css; charset=utf-8"),
];

/// Only the daemon's own origin: no script, style, image or connection
/// elsewhere, no inline script, no framing. Inline styles are let through:
/// the graph's library sets them on the elements it draws.
const POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
     img-src 'self' data:; font-src 'self'; connect-src 'self'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub(super) fn routes() -> Routes {
    Routes::new()
        .route(
            "/ui",
            Rule::Open,
            get(|| async { Redirect::permanent("/ui/") }),
        )
        .route("/ui/", Rule::Open, get(serve))
        .route("/ui/settings.json", Rule::Open, get(settings))
        .route("/ui/{*path}", Rule::Open, get(serve))
}

/// What the console's code needs to know of the daemon before it may
/// read anything: where the Kubernetes API is served. Configuration, no
/// data: as open as the page.
async fn settings(State(state): State<Arc<AppState>>) -> Json<serde_json::Value> {
    Json(serde_json::json!({
        "kubeApiPathPrefix": state.config.kube_api_path_prefix,
    }))
}

async fn serve(request: Request) -> Response {
    let path = request.uri().path().trim_start_matches("/ui/");
    let asset = ASSETS.iter().find(|a| a.name == path).unwrap_or(&PAGE);
    respond(asset, request.headers())
}

fn respond(asset: &Asset, asked: &HeaderMap) -> Response {
    let etag = etag(asset);
    if asked
        .get(header::IF_NONE_MATCH)
        .is_some_and(|v| v.as_bytes() == etag.as_bytes())
    {
        return (StatusCode::NOT_MODIFIED, headers(asset, etag)).into_response();
    }
    let gzip = accepts_gzip(asked);
    let body = if gzip { asset.gzip } else { asset.plain };
    let mut headers = headers(asset, etag);
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    if gzip {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    }
    (headers, body).into_response()
}

fn headers(asset: &Asset, etag: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    // Checked again each time: a new daemon may serve new code.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    if let Ok(etag) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, etag);
    }
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if asset.name == PAGE.name {
        headers.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(POLICY),
        );
    }
    headers
}

/// The asset's tag: a hash of its bytes (the gzipped ones are made from
/// them), computed once: the script is half a megabyte.
fn etag(asset: &Asset) -> &'static str {
    static TAGS: LazyLock<HashMap<&'static str, String>> = LazyLock::new(|| {
        ASSETS
            .iter()
            .chain([&PAGE])
            .map(|asset| {
                use sha2::Digest;
                let digest = sha2::Sha256::digest(asset.plain);
                let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
                (asset.name, format!("\"{hex}\""))
            })
            .collect()
    });
    TAGS[asset.name].as_str()
}

/// Whether the client takes gzip (`Accept-Encoding: gzip`, not `gzip;q=0`).
fn accepts_gzip(asked: &HeaderMap) -> bool {
    asked
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .and_then(|q| q.parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(encoding: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::ACCEPT_ENCODING,
            HeaderValue::from_str(encoding).unwrap(),
        );
        headers
    }

    #[test]
    fn gzip_is_sent_only_to_who_takes_it() {
        assert!(accepts_gzip(&asked("gzip, deflate, br")));
        assert!(accepts_gzip(&asked("br;q=1.0, gzip;q=0.8")));
        assert!(accepts_gzip(&asked("*")));
        assert!(!accepts_gzip(&asked("gzip;q=0")));
        assert!(!accepts_gzip(&asked("br")));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }
}
