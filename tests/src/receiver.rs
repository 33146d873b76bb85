//! A real webhook receiver on loopback: records every request and answers
//! as the test says (accept, fail with a status, hang, answer slowly).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use parking_lot::Mutex;
use serde_json::Value;

use crate::daemon::eventually;

/// How the receiver answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Behaviour {
    /// 200.
    Accept,
    /// This status, with an optional `Retry-After` in seconds and a body.
    Status(u16, Option<u64>, &'static str),
    /// Never answers.
    Hang,
    /// Answers 200 after this long.
    Slow(Duration),
}

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    /// Request path.
    pub path: String,
    /// Request headers.
    pub headers: HeaderMap,
    /// Raw body.
    pub raw: Bytes,
    /// Body as JSON (`Null` if it was not JSON).
    pub body: Value,
    /// Status answered (`None` for requests left hanging).
    pub status: Option<u16>,
}

impl Received {
    /// A header as text, or "".
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

#[derive(Default)]
struct Inner {
    requests: Vec<Received>,
    behaviour: Option<Behaviour>,
}

/// A running receiver.
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    inner: Arc<Mutex<Inner>>,
    server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Listens on a free loopback port.
    pub async fn start() -> Receiver {
        Self::start_on(0).await
    }

    /// Listens on this port (0 = any free one).
    pub async fn start_on(port: u16) -> Receiver {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("receiver binds");
        let addr = listener.local_addr().unwrap();
        let inner = Arc::new(Mutex::new(Inner::default()));
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            addr,
            inner,
            server,
        }
    }

    /// `http://127.0.0.1:PORT{path}`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// How to answer from now on.
    pub fn set(&self, behaviour: Behaviour) {
        self.inner.lock().behaviour = Some(behaviour);
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Received> {
        self.inner.lock().requests.clone()
    }

    /// The requests answered 2xx, in arrival order.
    pub fn accepted(&self) -> Vec<Received> {
        self.requests()
            .into_iter()
            .filter(|r| r.status.is_some_and(|s| (200..300).contains(&s)))
            .collect()
    }

    /// Waits until at least `n` requests were accepted; returns them all.
    pub async fn wait_accepted(&self, n: usize, timeout: Duration) -> Vec<Received> {
        eventually(timeout, || async { self.accepted().len() >= n }).await;
        self.accepted()
    }

    /// Waits until at least `n` requests arrived (whatever the answer).
    pub async fn wait_requests(&self, n: usize, timeout: Duration) -> Vec<Received> {
        eventually(timeout, || async { self.requests().len() >= n }).await;
        self.requests()
    }

    /// Stops listening; connections are refused until a new receiver takes the port.
    pub fn stop(self) -> u16 {
        self.server.abort();
        self.addr.port()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let behaviour = inner.lock().behaviour.clone().unwrap_or(Behaviour::Accept);
    let status = match &behaviour {
        Behaviour::Accept | Behaviour::Slow(_) => Some(200),
        Behaviour::Status(code, _, _) => Some(*code),
        Behaviour::Hang => None,
    };
    let received = Received {
        path: uri.path().to_string(),
        headers,
        body: serde_json::from_slice(&raw).unwrap_or(Value::Null),
        raw,
        status,
    };
    match behaviour {
        Behaviour::Accept => {
            inner.lock().requests.push(received);
            StatusCode::OK.into_response()
        }
        Behaviour::Slow(delay) => {
            tokio::time::sleep(delay).await;
            inner.lock().requests.push(received);
            StatusCode::OK.into_response()
        }
        Behaviour::Status(code, retry_after, body) => {
            inner.lock().requests.push(received);
            let mut response = (StatusCode::from_u16(code).unwrap(), body).into_response();
            if let Some(s) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", s.to_string().parse().unwrap());
            }
            response
        }
        Behaviour::Hang => {
            inner.lock().requests.push(received);
            std::future::pending::<()>().await;
            StatusCode::OK.into_response()
        }
    }
}
