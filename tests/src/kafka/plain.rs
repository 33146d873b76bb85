//! A SASL/PLAIN front for a [`Broker`](super::Broker): tansu authenticates
//! only with SCRAM and OAUTHBEARER, so PLAIN is checked here, the way a
//! Kafka broker's `SASL_PLAINTEXT` listener checks it, and the
//! authenticated connection is then relayed to the broker.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::net::TcpStream;

use super::wire::{Reader, compact_string, read_frame, string, varint, write_frame};

const API_VERSIONS: i16 = 18;
const SASL_HANDSHAKE: i16 = 17;
const SASL_AUTHENTICATE: i16 = 36;
const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// What a Kafka broker answers a wrong PLAIN user or password.
const REFUSED: &str = "Authentication failed: Invalid username or password";

/// Listens on a free loopback port. Before a client authenticates, it
/// relays only ApiVersions to the broker and answers SaslHandshake and
/// SaslAuthenticate (versions 0 to 2) itself, accepting PLAIN for its
/// users; any other request, another mechanism or a refused password
/// closes the connection after the answer. Authenticated connections are
/// relayed byte for byte. The broker advertises this front's port
/// ([`Broker::start_on`](super::Broker::start_on)), so clients reach it only
/// through here.
pub struct PlainFront {
    port: u16,
    attempts: Arc<Mutex<Vec<(String, bool)>>>,
    server: tokio::task::JoinHandle<()>,
}

impl PlainFront {
    /// Accepts `users` (name, password) and relays to `127.0.0.1:upstream`.
    pub async fn start(users: &[(&str, &str)], upstream: u16) -> PlainFront {
        let users: Arc<HashMap<String, String>> = Arc::new(
            users
                .iter()
                .map(|(user, password)| (user.to_string(), password.to_string()))
                .collect(),
        );
        let attempts = Arc::new(Mutex::new(Vec::new()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let log = attempts.clone();
        let server = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, upstream, users.clone(), log.clone()));
            }
        });
        PlainFront {
            port,
            attempts,
            server,
        }
    }

    /// `127.0.0.1:PORT`, for `bootstrapServers`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Each PLAIN authentication so far: the user, and whether it was
    /// accepted.
    pub fn attempts(&self) -> Vec<(String, bool)> {
        self.attempts.lock().clone()
    }
}

impl Drop for PlainFront {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn serve(
    mut client: TcpStream,
    upstream: u16,
    users: Arc<HashMap<String, String>>,
    attempts: Arc<Mutex<Vec<(String, bool)>>>,
) {
    let Ok(mut broker) = TcpStream::connect(("127.0.0.1", upstream)).await else {
        return;
    };
    loop {
        let Some(request) = read_frame(&mut client).await else {
            return;
        };
        let answer = match header(&request) {
            Some((API_VERSIONS, ..)) => {
                if write_frame(&mut broker, &request).await.is_err() {
                    return;
                }
                let Some(answer) = read_frame(&mut broker).await else {
                    return;
                };
                if write_frame(&mut client, &answer).await.is_err() {
                    return;
                }
                continue;
            }
            Some((SASL_HANDSHAKE, _, correlation, mut fields)) => {
                handshake(correlation, &mut fields)
            }
            Some((SASL_AUTHENTICATE, version, correlation, mut fields)) => {
                authenticate(version, correlation, &mut fields, &users, &attempts)
            }
            _ => None,
        };
        let Some((answer, go_on)) = answer else {
            return;
        };
        if write_frame(&mut client, &answer).await.is_err() {
            return;
        }
        match go_on {
            Next::Authenticate => {}
            Next::Relay => break,
            Next::Close => return,
        }
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut broker).await;
}

/// What the connection does after an answer.
enum Next {
    Authenticate,
    Relay,
    Close,
}

/// The request's api key, version and correlation id, and a reader past
/// them.
fn header(request: &[u8]) -> Option<(i16, i16, i32, Reader<'_>)> {
    let mut r = Reader(request);
    let api = r.i16()?;
    let version = r.i16()?;
    let correlation = r.i32()?;
    Some((api, version, correlation, r))
}

/// SaslHandshake v0/v1 (header v1): PLAIN is the one mechanism.
fn handshake(correlation: i32, r: &mut Reader<'_>) -> Option<(Vec<u8>, Next)> {
    r.string()?; // client id
    let asked = r.string()?.unwrap_or_default();
    let plain = asked == "PLAIN";
    let mut out = correlation.to_be_bytes().to_vec();
    out.extend(if plain { 0 } else { UNSUPPORTED_SASL_MECHANISM }.to_be_bytes());
    out.extend(1i32.to_be_bytes());
    string(&mut out, "PLAIN");
    Some((
        out,
        if plain {
            Next::Authenticate
        } else {
            Next::Close
        },
    ))
}

/// SaslAuthenticate: v0 and v1 with header v1, v2 (flexible) with header
/// v2. The token is `[authzid] NUL user NUL password`.
fn authenticate(
    version: i16,
    correlation: i32,
    r: &mut Reader<'_>,
    users: &HashMap<String, String>,
    attempts: &Mutex<Vec<(String, bool)>>,
) -> Option<(Vec<u8>, Next)> {
    r.string()?; // client id
    let token = if version >= 2 {
        r.tagged_fields()?;
        r.compact_bytes()?
    } else {
        r.bytes()?
    };
    let mut parts = token.split(|b| *b == 0);
    let (_authzid, user, password) = (parts.next()?, parts.next()?, parts.next()?);
    let user = String::from_utf8_lossy(user).into_owned();
    let accepted = users.get(&user).map(String::as_bytes) == Some(password);
    attempts.lock().push((user, accepted));
    let (code, message) = if accepted {
        (0, None)
    } else {
        (SASL_AUTHENTICATION_FAILED, Some(REFUSED))
    };
    let mut out = correlation.to_be_bytes().to_vec();
    if version >= 2 {
        out.push(0); // response header's tagged fields
        out.extend(code.to_be_bytes());
        match message {
            Some(message) => compact_string(&mut out, message),
            None => out.push(0),
        }
        varint(&mut out, 1); // auth bytes: empty
        out.extend(0i64.to_be_bytes()); // session lifetime: unlimited
        out.push(0);
    } else {
        out.extend(code.to_be_bytes());
        match message {
            Some(message) => string(&mut out, message),
            None => out.extend((-1i16).to_be_bytes()),
        }
        out.extend(0i32.to_be_bytes()); // auth bytes: empty
        if version >= 1 {
            out.extend(0i64.to_be_bytes());
        }
    }
    Some((out, if accepted { Next::Relay } else { Next::Close }))
}
