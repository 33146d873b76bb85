//! `grw probe`: whether the daemon configured by the same config file is
//! alive (`/healthz`) or ready (`/readyz`), asked from inside its container.
//!
//! For exec probes: a sidecar's API listens on loopback only, which the
//! kubelet's HTTP probes (sent to the Pod's IP) cannot reach, and an image
//! with nothing but `grw` has no `curl` or `wget`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;

use crate::config::Config;

/// What `grw probe` asks.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct ProbeArgs {
    /// The daemon's config file, for its address (default: as the daemon finds it)
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// Ask `/readyz` (watches synced, plugins loaded) instead of `/healthz`
    #[arg(long)]
    pub ready: bool,
    /// Seconds to wait for the answer
    #[arg(long, value_name = "SECONDS", default_value_t = 2)]
    pub timeout: u64,
}

/// Why the daemon could not be asked, or what it answered.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The configuration names no fixed port.
    #[error(
        "listenPort 0 picks a free port at start-up, which a probe cannot know; configure a fixed port"
    )]
    AnyPort,
    /// The HTTP client could not be set up, or the request failed.
    #[error("{url}")]
    Request {
        /// What was asked.
        url: String,
        /// Why it failed.
        #[source]
        source: reqwest::Error,
    },
    /// The daemon answered something else than 200.
    #[error("{url}: {status} {body}")]
    Answer {
        /// What was asked.
        url: String,
        /// The status code.
        status: u16,
        /// The answer's body.
        body: String,
    },
}

/// The address to ask: the configured one, or loopback if GRW listens on
/// every address.
pub fn address(config: &Config) -> Result<SocketAddr, ProbeError> {
    if config.listen_port == 0 {
        return Err(ProbeError::AnyPort);
    }
    let ip = match config.listen_address {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    Ok(SocketAddr::new(ip, config.listen_port))
}

/// Asks the daemon; `Ok` with its answer when it says 200, `Err` saying
/// what it said (or why it could not be asked) otherwise.
pub async fn probe(config: &Config, args: &ProbeArgs) -> Result<String, ProbeError> {
    let address = address(config)?;
    let path = if args.ready { "/readyz" } else { "/healthz" };
    let url = format!("http://{address}{path}");
    let failed = |source| ProbeError::Request {
        url: url.clone(),
        source,
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(args.timeout.max(1)))
        .no_proxy()
        .build()
        .map_err(failed)?;
    let response = client.get(&url).send().await.map_err(failed)?;
    let status = response.status();
    let body = response.text().await.unwrap_or_default();
    if status.is_success() {
        Ok(body)
    } else {
        Err(ProbeError::Answer {
            url,
            status: status.as_u16(),
            body: body.trim().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: serde_json::Value) -> Config {
        crate::config::parse(&json.to_string(), &|_| None)
            .unwrap()
            .0
    }

    #[test]
    fn any_address_is_asked_on_loopback() {
        let asked = |json| address(&config(json));
        assert_eq!(
            asked(serde_json::json!({"listenAddress": "0.0.0.0", "listenPort": 3000})).ok(),
            Some("127.0.0.1:3000".parse().unwrap())
        );
        assert_eq!(
            asked(serde_json::json!({"listenAddress": "::", "listenPort": 8080})).ok(),
            Some("[::1]:8080".parse().unwrap())
        );
        assert_eq!(
            asked(serde_json::json!({"listenAddress": "10.1.2.3"})).ok(),
            Some("10.1.2.3:3000".parse().unwrap())
        );
        // `--listen-port 0` (the file refuses 0).
        let mut any_port = config(serde_json::json!({}));
        any_port.listen_port = 0;
        assert!(matches!(address(&any_port), Err(ProbeError::AnyPort)));
    }
}
