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
