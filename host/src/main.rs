//! The `grw` command.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use grw::cli::{Cli, Command, PluginCommand};
use grw::config::{self, Config, LogLevel, LogType};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    // Before any other thread exists: the runtime's threads take their
    // arenas as they first allocate.
    tune_allocator();
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("grw: cannot start the async runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Three settings of glibc's allocator, each left alone when its
/// environment variable (`MALLOC_ARENA_MAX`, `MALLOC_MMAP_THRESHOLD_`,
/// `MALLOC_TRIM_THRESHOLD_`) sets it.
///
/// Arenas: glibc gives each thread that allocates while another does an
/// arena of its own, up to 8 per core, and memory freed in one arena serves
/// only that arena's threads. GRW's threads (the runtime's, those storing
/// list pages, the plugins') took seven arenas syncing 10,000 Pods, with 19
/// MB free among them. One arena per core keeps what is freed in reach of
/// the next allocation. With 10,000 Pods GRW held 2,349 bytes per Pod at
/// ready against 2,866 with glibc's default; with a million, 2,828 MiB
/// against 2,887 once the analyzers were done. The price is contention
/// while a list is stored on every core: syncing a million Pods took 48.1
/// s of CPU against 42.8 (BENCHMARKS.md).
///
/// Where large blocks come from: glibc maps a block of 128 KiB or more on
/// its own, and raises that threshold to the size of each such block freed,
/// up to 32 MiB. A sync frees blocks of megabytes (a list's vectors, read
/// buffers), so the later ones came from the arenas, among the objects the
/// cache keeps, and the holes they left there stayed resident: from run to
/// run of one build, 10,000 Pods took 20 to 26 MB above idle. A fixed
/// threshold of 512 KiB keeps them out of the arenas: 19.1 to 19.7 MB in
/// four runs, with no more CPU to sync 100,000 Pods (128 KiB cost 16%
/// more, in the page faults of blocks mapped and unmapped).
///
/// Trimming: glibc gives the top of an arena back to the system once more
/// than 128 KiB of it is free, and raised that to twice the mapping
/// threshold along with it. Left at 128 KiB, each 256 KB chunk of a list
/// answer was given back when sent and faulted in again for the next: a
/// 1% list of 10,000 Pods answered in 0.70 ms from one connection instead
/// of 0.52. It is set to twice the threshold, as glibc would have.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let unset = |name| std::env::var_os(name).is_none();
        // SAFETY: each sets a number in the allocator's parameters, before
        // any other thread exists.
        if unset("MALLOC_ARENA_MAX") {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            unsafe {
                libc::mallopt(libc::M_ARENA_MAX, i32::try_from(cores).unwrap_or(i32::MAX));
            }
        }
        if unset("MALLOC_MMAP_THRESHOLD_") {
            unsafe {
                libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            }
        }
        if unset("MALLOC_TRIM_THRESHOLD_") {
            unsafe {
                libc::mallopt(libc::M_TRIM_THRESHOLD, 2 * MMAP_THRESHOLD);
            }
        }
    }
}

/// Blocks this large or larger are mapped on their own ([`tune_allocator`]).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 512 << 10;

async fn run() -> ExitCode {
    ignore_file_size_signal();
    let Cli { mut flags, command } = Cli::parse();
    if let Some(Command::Plugin(command)) = &command {
        return plugin_tool(command);
    }
    // `grw rbac --config F` and `grw probe --config F` read F as the daemon would.
    if let Some(Command::Rbac(grw::cli::rbac::RbacArgs {
        config: Some(file), ..
    }))
    | Some(Command::Probe(grw::cli::probe::ProbeArgs {
        config: Some(file), ..
    })) = &command
    {
        flags.config = Some(file.clone());
    }
    let loaded = match config::load(&flags, &|name| std::env::var(name).ok()) {
        Ok(loaded) => loaded,
        Err(e) => {
            eprintln!("grw: {e}");
            return ExitCode::from(2);
        }
    };
    match &command {
        Some(Command::Rbac(args)) => {
            for warning in &loaded.warnings {
                eprintln!("grw: warning: {warning}");
            }
            return rbac(&loaded.config, args);
        }
        Some(Command::History(args)) => {
            return print_answer(grw::cli::journal::history(&loaded.config, args).await);
        }
        Some(Command::Timeline(args)) => {
            return print_answer(grw::cli::journal::timeline(&loaded.config, args).await);
        }
        Some(Command::Probe(args)) => {
            return match grw::cli::probe::probe(&loaded.config, args).await {
                Ok(answer) => {
                    println!("{}", answer.trim());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("grw: {}", grw::error::Report(&e));
                    ExitCode::FAILURE
                }
            };
        }
        _ => {}
    }
    init_logging(&loaded.config);
    match &loaded.source {
        Some(path) => tracing::info!(file = %path.display(), "configuration read"),
        None => tracing::info!("no configuration file; using defaults and flags"),
    }
    for warning in &loaded.warnings {
        tracing::warn!("{warning}");
    }
    let log_type = loaded.config.log_type;
    match grw::app::run(loaded.config, stop_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Said once: in the log, or on stderr when logging is off.
            let error = grw::error::Report(&e).to_string();
            match log_type {
                LogType::Hidden => eprintln!("grw: {error}"),
                LogType::Json | LogType::Pretty => tracing::error!(error, "grw stopped"),
            }
            ExitCode::FAILURE
        }
    }
}

/// `grw plugin check|test|new`: a report on stdout, guest output and errors on stderr.
fn plugin_tool(command: &PluginCommand) -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("warn,grw=info")),
        )
        .with_writer(std::io::stderr)
        .init();
    // Plugin calls block their thread (a guest's output is flushed, a
    // notifier's request waits), which the async `main` thread must not
    // have them do: run them on a thread of their own.
    let on_a_thread =
        |f: &(dyn Fn(&mut dyn Write) -> Result<(), grw::cli::plugin::ToolError> + Sync)| {
            std::thread::scope(|scope| {
                scope
                    .spawn(|| f(&mut std::io::stdout().lock()))
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
        };
    let result = match command {
        PluginCommand::Check(args) => on_a_thread(&|out| grw::cli::plugin::check(args, out)),
        PluginCommand::Test { plugin, events } => {
            on_a_thread(&|out| grw::cli::plugin::test(plugin, events, out).map(|_| ()))
        }
        PluginCommand::New {
            name,
            lang,
            kind,
            dir,
        } => {
            return match grw::cli::new::new(name, *lang, *kind, dir.as_deref()) {
                Ok((dir, next)) => {
                    println!("wrote {}; next:\n{next}", dir.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("grw: {e}");
                    ExitCode::FAILURE
                }
            };
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("grw: {}", grw::error::Report(&e));
            ExitCode::FAILURE
        }
    }
}

/// `grw history` and `grw timeline`: the text on stdout, or why not on stderr.
fn print_answer(answer: Result<String, grw::cli::journal::AskError>) -> ExitCode {
    match answer {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("grw: {}", grw::error::Report(&e));
            ExitCode::FAILURE
        }
    }
}

/// `grw rbac`: the RBAC objects on stdout, or why not on stderr.
fn rbac(config: &Config, args: &grw::cli::rbac::RbacArgs) -> ExitCode {
    match grw::cli::rbac::grants(config) {
        Ok(grants) => {
            print!("{}", grw::cli::rbac::render(config, &grants, args));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("grw: {e}");
            ExitCode::from(2)
        }
    }
}

fn init_logging(config: &Config) {
    let level = match config.log_level {
        LogLevel::Trace => "trace",
        LogLevel::Debug => "debug",
        LogLevel::Info => "info",
        LogLevel::Warn => "warn",
        LogLevel::Error => "error",
    };
    // Our own level for GRW; dependencies stay at warn unless asked for more via RUST_LOG.
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new(format!("warn,grw={level}")));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match config.log_type {
        LogType::Json => builder.json().flatten_event(true).init(),
        LogType::Pretty => builder.init(),
        LogType::Hidden => {}
    }
}

/// A write past the process's file size limit (`ulimit -f`) raises SIGXFSZ,
/// which would kill GRW; ignored, the write fails with an error instead, and
/// the outbox treats it like a full disk: it keeps retrying and serving.
fn ignore_file_size_signal() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler
    // code; it is sound at any time, from any thread.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// Completes on SIGTERM or SIGINT. The handlers are installed here, at
/// once, not when the future is first polled: a signal that arrives as soon
/// as the API answers still stops GRW gracefully.
#[cfg(unix)]
fn stop_signal() -> impl std::future::Future<Output = ()> {
    use tokio::signal::unix::{SignalKind, signal};
    let interrupt = signal(SignalKind::interrupt());
    let terminate = signal(SignalKind::terminate());
    async move {
        match (interrupt, terminate) {
            (Ok(mut interrupt), Ok(mut terminate)) => {
                tokio::select! {
                    _ = interrupt.recv() => {}
                    _ = terminate.recv() => {}
                }
            }
            (Ok(mut interrupt), Err(e)) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only SIGINT stops GRW");
                interrupt.recv().await;
            }
            (Err(e), _) => {
                tracing::warn!(error = %e, "cannot listen for signals; falling back to Ctrl-C");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
}

/// Completes on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> impl std::future::Future<Output = ()> {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
