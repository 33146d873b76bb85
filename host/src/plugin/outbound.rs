//! `outbound-http`, the one network capability GRW grants: notifiers send
//! HTTP requests through the host, which checks each URL against the
//! plugin's and the operator's allow-lists ([`super::allowed_hosts`]) and
//! bounds each request by what is left of the call's time budget.
//!
//! The guest's call is synchronous, so the host blocks its thread on the
//! request: `deliver` must run on a thread that may block and that is not
//! inside an async task (`tokio::task::spawn_blocking`, or a plain thread).
//! Requests run on the Tokio runtime of that thread (`spawn_blocking`
//! threads have one), or on a small runtime of GRW's own when there is none
//! (`grw plugin test`). Called from inside an async task, a request fails
//! with a message saying so instead of taking the task down.
//!
//! Redirects are not followed (a redirect could lead to a host neither list
//! allows); the plugin sees the 3xx answer. Response bodies are cut at
//! [`MAX_RESPONSE_BODY`].

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::runtime::{Handle, Runtime};

use super::PluginError;
use super::v0_2::outbound_http::{Request, Response};
use crate::config::{AllowedHosts, Target};

/// Largest response body handed to a plugin. Notifiers look at a status
/// and maybe an error message; a 1 MiB cap keeps a misbehaving receiver
/// from filling the guest's memory (64 MiB by default) or GRW's.
pub const MAX_RESPONSE_BODY: usize = 1 << 20;

/// The HTTP client of one notifier plugin and the hosts it may reach.
pub(super) struct OutboundHttp {
    plugin_hosts: AllowedHosts,
    operator_hosts: AllowedHosts,
    client: reqwest::Client,
}

impl OutboundHttp {
    /// A client for a plugin whose manifest allows `plugin_hosts`, under an
    /// operator who allows `operator_hosts`.
    pub(super) fn new(
        plugin_hosts: AllowedHosts,
        operator_hosts: AllowedHosts,
    ) -> Result<OutboundHttp, PluginError> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("grw/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| PluginError::Engine(Box::new(e)))?;
        Ok(OutboundHttp {
            plugin_hosts,
            operator_hosts,
            client,
        })
    }

    /// Sends `request` if both lists allow its host, within `deadline`.
    /// Errors are the text the plugin receives.
    fn send(&self, plugin: &str, request: Request, deadline: Instant) -> Result<Response, String> {
        let target = Target::parse(&request.url).map_err(|e| e.to_string())?;
        if let Err(refusal) = target.check(&self.plugin_hosts, &self.operator_hosts) {
            tracing::warn!(plugin, url = %request.url, "{refusal}");
            return Err(refusal.to_string());
        }
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|_| format!("invalid HTTP method `{}`", request.method))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &request.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("invalid header name `{name}`"))?;
            let value = HeaderValue::from_str(value).map_err(|_| {
                format!("invalid value for header `{name}`: line breaks and other control characters are not allowed")
            })?;
            headers.append(name, value);
        }
        let budget = deadline.saturating_duration_since(Instant::now());
        if budget.is_zero() {
            return Err(format!(
                "not sent: the call's time budget (limits.timeoutMs) is spent; {} was not contacted",
                target
            ));
        }
        let started = Instant::now();
        let request = self
            .client
            .request(method.clone(), target.url.clone())
            .headers(headers)
            .body(request.body)
            .timeout(budget);
        let result = block_on(async move {
            let mut response = request.send().await?;
            let status = response.status().as_u16();
            let headers = response
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                let room = MAX_RESPONSE_BODY - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if body.len() == MAX_RESPONSE_BODY {
                    break;
                }
            }
            Ok::<_, reqwest::Error>(Response {
                status,
                headers,
                body,
            })
        })?;
        let elapsed_ms = started.elapsed().as_millis() as u64;
        match result {
            Ok(response) => {
                tracing::debug!(plugin, %method, url = %target.url, status = response.status, elapsed_ms, "plugin request sent");
                Ok(response)
            }
            Err(e) => {
                let why = describe(&e, budget);
                tracing::debug!(plugin, %method, url = %target.url, elapsed_ms, error = %why, "plugin request failed");
                Err(format!("{method} {}: {why}", target.url))
            }
        }
    }
}

/// A reqwest error in a line: what happened and the underlying cause.
fn describe(e: &reqwest::Error, budget: Duration) -> String {
    if e.is_timeout() {
        return format!(
            "no answer within the {} ms left of the call's budget (limits.timeoutMs)",
            budget.as_millis()
        );
    }
    let what = if e.is_connect() {
        "cannot connect"
    } else if e.is_body() || e.is_decode() {
        "the answer broke off"
    } else {
        "request failed"
    };
    let mut causes = Vec::new();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    // hyper and the OS often repeat their cause in their own message.
    causes.dedup();
    match causes.last() {
        Some(root) => format!("{what}: {root}"),
        None => format!("{what}: {e}"),
    }
}

/// Runs `future` to completion from a synchronous host call, on the
/// current thread's runtime or GRW's own.
fn block_on<F: std::future::Future>(future: F) -> Result<F::Output, String> {
    static OWN: OnceLock<Result<Runtime, String>> = OnceLock::new();
    let handle = match Handle::try_current() {
        Ok(handle) => handle,
        Err(_) => OWN
            .get_or_init(|| {
                // One worker: plugin requests are few and wait on the network.
                tokio::runtime::Builder::new_multi_thread()
                    .worker_threads(1)
                    .thread_name("grw-plugin-http")
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start the HTTP runtime: {e}"))
            })
            .as_ref()?
            .handle()
            .clone(),
    };
    // Tokio refuses (panics) to block a thread that runs async tasks.
    std::panic::catch_unwind(AssertUnwindSafe(|| handle.block_on(future))).map_err(|_| {
        tracing::error!("a notifier plugin was called from an async task; GRW must call `deliver` from a blocking thread");
        "not sent: GRW called the plugin from an async task, where it cannot wait for the network (a GRW bug)".to_string()
    })
}

/// A notifier instance's grant: its client, and the deadline of the call
/// in progress.
pub(super) struct Outbound {
    http: Arc<OutboundHttp>,
    /// The end of the current call's budget; requests get what is left.
    pub(super) deadline: Instant,
}

impl Outbound {
    pub(super) fn new(http: Arc<OutboundHttp>) -> Outbound {
        Outbound {
            http,
            deadline: Instant::now(),
        }
    }

    /// Sends `request` for `plugin` within what is left of the call.
    pub(super) fn send(&self, plugin: &str, request: Request) -> Result<Response, String> {
        self.http.send(plugin, request, self.deadline)
    }
}
