//! Throughput and latency of one route with `wrk` (`-t2 -c16 -d10s
//! --latency` under load, the same connections each waiting between
//! requests for a set rate, `-t1 -c1` for one client at a time), the
//! requests rotating over many paths.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Where `wrk` is expected (Debian: `apt-get install wrk`).
pub const WRK: &str = "/usr/bin/wrk";

/// What one `wrk` run measured.
#[derive(Debug, Clone, Copy)]
pub struct Throughput {
    /// Requests answered per second.
    pub per_second: f64,
    /// Median latency, ms.
    pub p50_ms: f64,
    /// 99th percentile latency, ms.
    pub p99_ms: f64,
    /// Answers that were not 2xx/3xx, plus socket errors and timeouts.
    pub errors: u64,
}

/// Whether `wrk` can be run.
pub fn available() -> bool {
    Path::new(WRK).exists()
}

/// How many requests `wrk` keeps in flight.
#[derive(Debug, Clone, Copy)]
pub enum Load {
    /// 16 connections on 2 threads.
    Loaded,
    /// One connection: each request waits for the answer to the previous,
    /// so the latency is the service time.
    One,
    /// 16 connections on 2 threads, each waiting 16,000 / N ms after an
    /// answer before its next request: about N requests a second in all
    /// while answers are quick, as sixteen clients polling would send
    /// them. The latency is what a client sees at that load, not the
    /// queue that a closed loop of 16 connections builds on two cores.
    Paced(u32),
}

/// Connections of [`Load::Loaded`] and [`Load::Paced`].
const CONNECTIONS: u32 = 16;

/// Runs `wrk` against `base` (`http://host:port`), each request taking the
/// next of `paths` (in each of its threads), so no single object is hot.
pub fn run(base: &str, paths: &[String], load: Load) -> Throughput {
    assert!(!paths.is_empty(), "wrk needs a path to request");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = dir.path().join("paths.lua");
    let mut lua = String::from("local paths = {\n");
    for path in paths {
        // Paths are names, numbers and `-/?=%`: nothing a Lua string escapes.
        writeln!(lua, "  \"{path}\",").expect("writing to a String");
    }
    lua.push_str(
        "}\nlocal n = 0\nrequest = function()\n  n = n + 1\n  \
         return wrk.format(\"GET\", paths[(n % #paths) + 1])\nend\n",
    );
    if let Load::Paced(per_second) = load {
        // wrk calls `delay` before each request, and waits that many ms.
        let wait_ms = (1000 * CONNECTIONS).div_ceil(per_second.max(1));
        writeln!(lua, "delay = function()\n  return {wait_ms}\nend").expect("writing to a String");
    }
    std::fs::write(&script, lua).expect("writing the wrk script");
    let output = Command::new(WRK)
        .args(match load {
            Load::Loaded | Load::Paced(_) => ["-t2".to_string(), format!("-c{CONNECTIONS}")],
            Load::One => ["-t1".to_string(), "-c1".to_string()],
        })
        .args(["-d10s", "--latency", "-s"])
        .arg(&script)
        .arg(base)
        .output()
        .unwrap_or_else(|e| panic!("running {WRK}: {e}"));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "wrk failed: {text}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    parse(&text).unwrap_or_else(|| panic!("unexpected wrk output:\n{text}"))
}

/// Reads `Requests/sec`, the 50% and 99% lines of `--latency`'s
/// distribution, and the error counts from wrk's report.
fn parse(text: &str) -> Option<Throughput> {
    let mut per_second = None;
    let (mut p50, mut p99) = (None, None);
    let mut errors = 0;
    for line in text.lines().map(str::trim) {
        if let Some(rate) = line.strip_prefix("Requests/sec:") {
            per_second = rate.trim().parse().ok();
        } else if let Some(latency) = line.strip_prefix("50%") {
            p50 = millis(latency.trim());
        } else if let Some(latency) = line.strip_prefix("99%") {
            p99 = millis(latency.trim());
        } else if let Some(count) = line.strip_prefix("Non-2xx or 3xx responses:") {
            errors += count.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(counts) = line.strip_prefix("Socket errors:") {
            // "connect 0, read 0, write 0, timeout 0"
            errors += counts
                .split(',')
                .filter_map(|c| c.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum::<u64>();
        }
    }
    Some(Throughput {
        per_second: per_second?,
        p50_ms: p50?,
        p99_ms: p99?,
        errors,
    })
}

/// A wrk duration (`310.00us`, `1.23ms`, `2.01s`, `1.50m`) in ms.
fn millis(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().ok()?;
    let scale = match unit {
        "us" => 1e-3,
        "ms" => 1.0,
        "s" => 1e3,
        "m" => 60e3,
        _ => return None,
    };
    Some(value * scale)
}

/// Checks the parser on a real report once per run, so a wrk whose output
/// changed stops the benchmark instead of filling the table with nonsense.
pub fn check_parser() {
    let report = "Running 10s test @ http://127.0.0.1:3000\n  2 threads and 16 connections\n  \
        Thread Stats   Avg      Stdev     Max   +/- Stdev\n    Latency   1.10ms  500.00us   9.00ms   80.00%\n  \
        Latency Distribution\n     50%  810.00us\n     75%    1.20ms\n     90%    1.80ms\n     99%    2.50s\n  \
        120000 requests in 10.00s, 500.00MB read\n  Socket errors: connect 0, read 1, write 0, timeout 2\n  \
        Non-2xx or 3xx responses: 3\nRequests/sec:  12000.50\nTransfer/sec:     50.00MB\n";
    let t = parse(report).expect("the sample report parses");
    assert_eq!(t.per_second, 12000.5);
    assert!((t.p50_ms - 0.81).abs() < 1e-9 && (t.p99_ms - 2500.0).abs() < 1e-9);
    assert_eq!(t.errors, 6);
}
