//! The test suite's fake Kubernetes API server as a process of its own,
//! holding N generated Pods (`grw_e2e::pods`), for benchmarks that must not
//! share a process (CPU, memory, allocator) with what they measure.
//!
//! `fake-apiserver [--listen ADDR] [--pods N] [--list-pace N]` binds ADDR
//! (default `127.0.0.1:0`, a free port), loads N Pods (default 0), prints
//! its URL as the one line of its standard output, and serves until SIGTERM
//! or SIGINT. `--list-pace N` hands out lists no faster than N objects a
//! second, the pace of a real API server (`fake_api::Pace`).
//! Progress and timings go to standard error.
//!
//! Then it reads commands from standard input, one a line, so that a
//! benchmark can make changes from outside while a daemon watches:
//! `modify N` makes N changes to the ConfigMaps `churn/churn-0` to
//! `churn/churn-999` in turn, ~1 KB each (the first change of each creates
//! it), as fast as the store takes them, and answers `modified N` on
//! standard output when they are all stored. `pod-status N`, `pod-label N`
//! and `events N` make N kubelet status updates, label changes or Events
//! about the loaded Pods in turn (`grw_e2e::churn`), and `workload` makes
//! a Deployment and ReplicaSet owning one app's Pods; each answers `done`,
//! and `workload` its Deployment's `NAMESPACE NAME PODS`. At the end of
//! standard input it goes on serving.

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, bail};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Pace};
use grw_e2e::pods::PodFactory;
use tokio::signal::unix::{SignalKind, signal};

const USAGE: &str = "usage: fake-apiserver [--listen ADDR] [--pods N] [--list-pace N]";

/// What `--help` prints.
const HELP: &str = "\
usage: fake-apiserver [--listen ADDR] [--pods N] [--list-pace N]

A fake Kubernetes API server for GRW's benchmarks: binds ADDR (default
127.0.0.1:0, a free port), loads N generated Pods (default 0), prints its
URL as the one line of its standard output, and serves until SIGTERM or
SIGINT. --list-pace N hands out lists no faster than N objects a second.

Commands on standard input, one a line: `modify N`, `pod-status N`,
`pod-label N`, `events N`, `workload`.
";

/// What the command line asks for: to serve, or to be told how.
enum Asked {
    Serve(Args),
    Help,
}

/// How to serve.
struct Args {
    listen: SocketAddr,
    pods: usize,
    list_pace: Option<Pace>,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> anyhow::Result<Asked> {
    let mut parsed = Args {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        pods: 0,
        list_pace: None,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .with_context(|| format!("{name} needs a value; {USAGE}"))
        };
        match arg.as_str() {
            "--listen" => {
                let text = value("--listen")?;
                parsed.listen = text.parse().with_context(|| {
                    format!("--listen: expected an address such as 127.0.0.1:8001, got {text:?}")
                })?;
            }
            "--pods" => {
                let text = value("--pods")?;
                parsed.pods = text
                    .parse()
                    .with_context(|| format!("--pods: expected a number of Pods, got {text:?}"))?;
            }
            "--list-pace" => {
                let text = value("--list-pace")?;
                parsed.list_pace =
                    Some(text.parse().ok().and_then(Pace::new).with_context(|| {
                        format!("--list-pace: expected objects a second, at least 1, got {text:?}")
                    })?);
            }
            "--help" | "-h" => return Ok(Asked::Help),
            other => bail!("unknown argument {other:?}; {USAGE}"),
        }
    }
    Ok(Asked::Serve(parsed))
}

/// A failure is one line on standard error and exit status 2 for a bad
/// command line, 1 otherwise: never a backtrace.
fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(Asked::Serve(args)) => args,
        Ok(Asked::Help) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("fake-apiserver: {e:#}");
            return ExitCode::from(2);
        }
    };
    let served = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the Tokio runtime")
        .and_then(|runtime| runtime.block_on(serve(args)));
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fake-apiserver: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(args: Args) -> anyhow::Result<()> {
    let fake = FakeApiServer::start_at(args.listen, FakeApiOptions::default())
        .await
        .with_context(|| format!("binding {}", args.listen))?;
    fake.set_list_pace(args.list_pace);
    if args.pods > 0 {
        let started = Instant::now();
        let loader = fake.clone();
        tokio::task::spawn_blocking(move || load_pods(&loader, args.pods))
            .await
            .context("the loading thread panicked")??;
        eprintln!(
            "fake-apiserver: {} Pods loaded in {:.1} s",
            args.pods,
            started.elapsed().as_secs_f64()
        );
    }
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{}", fake.url()).context("writing the URL")?;
    stdout.flush().context("writing the URL")?;
    drop(stdout);

    let commands = fake.clone();
    let pods = args.pods;
    std::thread::spawn(move || run_commands(&commands, pods));

    let mut terminate = signal(SignalKind::terminate()).context("handling SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("handling SIGINT")?;
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    fake.shutdown().await;
    Ok(())
}

/// ConfigMaps the `modify` command changes in turn.
const CHURNED_OBJECTS: u64 = 1_000;

/// A line of standard input.
#[derive(Debug, PartialEq, Eq)]
enum Command {
    /// `modify N`.
    Modify(u64),
    /// `pod-status N`.
    PodStatus(u64),
    /// `pod-label N`.
    PodLabel(u64),
    /// `events N`.
    Events(u64),
    /// `workload`.
    Workload,
}

/// Carries out the commands of standard input until its end; a command it
/// cannot read or carry out is reported on standard error and skipped.
fn run_commands(fake: &FakeApiServer, pods: usize) {
    let mut changes = 0u64;
    let factory = (pods > 0).then(PodFactory::load);
    let mut churn = factory
        .as_ref()
        .map(|factory| grw_e2e::churn::Churn::new(fake, factory, pods));
    for line in std::io::stdin().lines().map_while(Result::ok) {
        let command = match parse_command(&line) {
            Ok(command) => command,
            Err(error) => {
                eprintln!("fake-apiserver: {error:#}");
                continue;
            }
        };
        let started = Instant::now();
        let answer = match (command, churn.as_mut(), factory.as_ref()) {
            (Command::Modify(count), _, _) => {
                for _ in 0..count {
                    if let Err(error) = fake.apply("MODIFIED", churned(changes)) {
                        eprintln!("fake-apiserver: change {changes}: {error:#}");
                        return;
                    }
                    changes += 1;
                }
                Ok(format!("modified {count}"))
            }
            (Command::Workload, _, Some(factory)) => grw_e2e::churn::workload(fake, factory, pods)
                .map(|(namespace, name, owned)| format!("{namespace} {name} {owned}")),
            (Command::PodStatus(count), Some(churn), _) => (0..count)
                .try_for_each(|_| churn.pod_status())
                .map(|()| "done".into()),
            (Command::PodLabel(count), Some(churn), _) => (0..count)
                .try_for_each(|_| churn.pod_label())
                .map(|()| "done".into()),
            (Command::Events(count), Some(churn), _) => (0..count)
                .try_for_each(|_| churn.event())
                .map(|()| "done".into()),
            (command, _, _) => Err(anyhow::anyhow!("{command:?} needs Pods (--pods N)")),
        };
        let answer = answer.unwrap_or_else(|error| {
            eprintln!("fake-apiserver: {line}: {error:#}");
            format!("failed: {error:#}")
        });
        if started.elapsed().as_secs() >= 1 {
            eprintln!(
                "fake-apiserver: {line} in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "{answer}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

/// A command of standard input.
fn parse_command(line: &str) -> anyhow::Result<Command> {
    let count = |text: &str| {
        text.parse()
            .with_context(|| format!("expected a number of changes, got {text:?}"))
    };
    match line.split_whitespace().collect::<Vec<_>>()[..] {
        ["modify", n] => count(n).map(Command::Modify).context("modify"),
        ["pod-status", n] => count(n).map(Command::PodStatus).context("pod-status"),
        ["pod-label", n] => count(n).map(Command::PodLabel).context("pod-label"),
        ["events", n] => count(n).map(Command::Events).context("events"),
        ["workload"] => Ok(Command::Workload),
        _ => bail!(
            "unknown command {line:?}; the commands are `modify N`, `pod-status N`, `pod-label N`, `events N` and `workload`"
        ),
    }
}

/// The `n`-th change's ConfigMap: object `n % 1000`, holding `n`.
fn churned(n: u64) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "namespace": "churn",
            "name": format!("churn-{}", n % CHURNED_OBJECTS),
            "labels": {"app": "churn"},
        },
        "data": {"change": n.to_string(), "filler": "x".repeat(800)},
    })
}

/// Creates Pods `0..count`, one thread per CPU: making a Pod (a copy of
/// its template's JSON tree) happens outside the store's lock and only
/// storing it (serialising ~6.8 KB) inside, so the threads overlap. On 2
/// CPUs, 100,000 Pods load in ~7 s, a million in about a minute.
fn load_pods(fake: &FakeApiServer, count: usize) -> anyhow::Result<()> {
    let factory = PodFactory::load();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|first| {
                let factory = &factory;
                scope.spawn(move || -> anyhow::Result<()> {
                    for i in (first..count).step_by(threads) {
                        fake.create(factory.pod(i))
                            .with_context(|| format!("storing Pod number {i}"))?;
                    }
                    Ok(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| {
            w.join()
                .map_err(|_| anyhow::anyhow!("a loading thread panicked"))?
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> anyhow::Result<Args> {
        match parse_args(line.split_whitespace().map(str::to_string))? {
            Asked::Serve(args) => Ok(args),
            Asked::Help => anyhow::bail!("help asked"),
        }
    }

    #[test]
    fn command_line() {
        let parsed = args("").unwrap();
        assert_eq!((parsed.listen.port(), parsed.pods), (0, 0));
        let parsed = args("--pods 1000 --listen 127.0.0.1:8001").unwrap();
        assert_eq!(parsed.listen.to_string(), "127.0.0.1:8001");
        assert_eq!(parsed.pods, 1000);
        assert_eq!(parsed.list_pace, None);
        assert_eq!(args("--list-pace 7300").unwrap().list_pace, Pace::new(7300));
        let error = |line: &str| format!("{:#}", args(line).err().unwrap());
        assert!(error("--pods").contains("--pods needs a value"));
        assert!(error("--pods many").contains("expected a number of Pods, got \"many\""));
        assert!(error("--listen localhost").contains("expected an address"));
        assert!(
            error("--list-pace 0").contains("expected objects a second, at least 1, got \"0\"")
        );
        assert!(error("--verbose").contains("unknown argument \"--verbose\""));
    }

    #[test]
    fn commands() {
        assert_eq!(
            parse_command("modify 250000").unwrap(),
            Command::Modify(250_000)
        );
        assert_eq!(parse_command("  modify  3 ").unwrap(), Command::Modify(3));
        assert_eq!(
            parse_command("pod-status 20").unwrap(),
            Command::PodStatus(20)
        );
        assert_eq!(parse_command("workload").unwrap(), Command::Workload);
        let error = |line: &str| format!("{:#}", parse_command(line).err().unwrap());
        assert!(error("modify lots").contains("expected a number of changes, got \"lots\""));
        assert!(error("events x").starts_with("events: expected a number"));
        assert!(error("delete 3").contains("unknown command \"delete 3\""));
        assert!(error("").contains("the commands are `modify N`"));
    }

    #[test]
    fn modify_changes_the_churned_configmaps_in_turn() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let fake = runtime.block_on(FakeApiServer::start(FakeApiOptions::default()));
        let before = fake.current_rv();
        for n in 0..1_002 {
            fake.apply("MODIFIED", churned(n)).unwrap();
        }
        assert_eq!(fake.current_rv(), before + 1_002);
        let objects = fake.objects("v1", "ConfigMap");
        assert_eq!(objects.len(), 1_000);
        let first = objects
            .iter()
            .find(|o| o["metadata"]["name"] == "churn-0")
            .unwrap();
        assert_eq!(first["data"]["change"], "1000");
        assert!(churned(0).to_string().len() > 900);
    }
}
