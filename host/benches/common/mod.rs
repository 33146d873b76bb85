//! Helpers every benchmark prints its report with.

/// The CPU model, from `/proc/cpuinfo`.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name")?.split_once(':'))
        .map_or("unknown CPU".to_string(), |(_, m)| m.trim().to_string())
}

/// Rounds and groups thousands with commas: 1,234,567.
#[allow(dead_code, reason = "not every benchmark prints large counts")]
pub fn grouped(x: f64) -> String {
    if !x.is_finite() {
        return "–".into();
    }
    let digits = (x.round() as i64).unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if x < -0.5 { format!("-{out}") } else { out }
}

/// A benchmark's command line: `--quick`, and the parts to run (every word
/// that is not an option; none means all). `cargo bench` passes `--bench`
/// itself.
#[allow(dead_code, reason = "not every benchmark has parts")]
pub struct Args {
    /// Fewer iterations (also `GRW_BENCH_QUICK=1`).
    pub quick: bool,
    parts: Vec<String>,
}

#[allow(dead_code, reason = "not every benchmark has parts")]
impl Args {
    /// The arguments this process was started with.
    pub fn from_env() -> Args {
        let args: Vec<String> = std::env::args().skip(1).collect();
        Args {
            quick: args.iter().any(|a| a == "--quick")
                || std::env::var("GRW_BENCH_QUICK").is_ok_and(|v| v == "1"),
            parts: args.into_iter().filter(|a| !a.starts_with("--")).collect(),
        }
    }

    /// Whether the part named `part` runs.
    pub fn wants(&self, part: &str) -> bool {
        self.parts.is_empty() || self.parts.iter().any(|p| p == part)
    }
}

/// The number in the environment variable `name`, or `default` without
/// one; anything else than a number stops the benchmark, naming it.
#[allow(dead_code, reason = "not every benchmark has settings")]
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).map_or(default, |text| {
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}: expected a number, got {text:?}"))
    })
}
