//! What the journal's rows cost in redb alone, per change: the floor under
//! the journal writer's CPU, whatever it computes before it writes.
//!
//! `cargo bench -p grw --bench journal_rows` writes 20,000 changes to
//! random objects of 10,000 (`GRW_BENCH_QUICK=1`: 5,000 changes;
//! `GRW_BENCH_CHANGES=N`: N), in
//! transactions of 10, what the writer commits at 200 changes a second
//! gathering for 50 ms. Three layouts:
//! - **as the journal**: the entry (450 bytes, a Pod status update's
//!   compressed size), its three index rows (kind, object and namespace,
//!   each with the entry's stamp), and the object's last version read and
//!   written again (250 bytes), as `host/src/journal/tables.rs` has them;
//! - **entry and last version**: the entry and the last version only;
//! - **entry alone**: the entry appended, nothing else.
//!
//! Each in memory (GRW's [`MemoryFile`] with the in-memory journal's page
//! cache, [`MEMORY_CACHE_BYTES`]) and on disk (a file, the journal's
//! [`CACHE_BYTES`], each commit durable). What is reported is the writing thread's CPU time
//! (`CLOCK_THREAD_CPUTIME_ID`) per change, the commits included.

mod common;

use std::time::Duration;

use grw::journal::{CACHE_BYTES, MEMORY_CACHE_BYTES};
use grw::memory_file::MemoryFile;
use redb::{Database, ReadableTable, TableDefinition};

use common::{cpu_model, env_number};

const ENTRIES: TableDefinition<u64, &[u8]> = TableDefinition::new("entries");
const KINDS: TableDefinition<(&str, u64), u64> = TableDefinition::new("kinds");
const OBJECTS: TableDefinition<(&str, u64), u8> = TableDefinition::new("objects");
const NAMESPACES: TableDefinition<(&str, u64), ()> = TableDefinition::new("namespaces");
const LATEST: TableDefinition<&str, &[u8]> = TableDefinition::new("latest");

const OBJECTS_COUNT: usize = 10_000;
const PER_COMMIT: usize = 10;
const ENTRY_BYTES: usize = 450;
const LATEST_BYTES: usize = 250;
/// What "within 10%" of the daemon without the journal leaves the writer
/// at 200 changes a second on the machine of BENCHMARKS.md.
const BUDGET_MICROS: f64 = 45.0;

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    AsTheJournal,
    EntryAndLatest,
    EntryAlone,
}

impl Layout {
    fn name(self) -> &'static str {
        match self {
            Layout::AsTheJournal => "as the journal (entry, 3 index rows, last version)",
            Layout::EntryAndLatest => "entry and last version",
            Layout::EntryAlone => "entry alone",
        }
    }
}

/// This thread's CPU time.
fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to fill.
    let done = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(done, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// A small deterministic generator: the objects changed, and the bytes.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next() as u8).collect()
    }
}

fn object_key(i: usize) -> (String, String) {
    let namespace = format!("ns-{:02}", i % 20);
    let key = format!("/Pod/{namespace}/app-{:03}-7d4b9c8f6d-{i:05}", i / 100);
    (key, namespace)
}

/// CPU µs per change of `changes` changes written with `layout` into `db`.
fn run(db: &Database, layout: Layout, changes: usize) -> f64 {
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let keys: Vec<(String, String)> = (0..OBJECTS_COUNT).map(object_key).collect();
    let txn = db.begin_write().expect("a write transaction");
    {
        let mut latest = txn.open_table(LATEST).expect("latest");
        for (key, _) in &keys {
            latest
                .insert(key.as_str(), random.bytes(LATEST_BYTES).as_slice())
                .expect("a last version");
        }
        txn.open_table(ENTRIES).expect("entries");
        txn.open_table(KINDS).expect("kinds");
        txn.open_table(OBJECTS).expect("objects");
        txn.open_table(NAMESPACES).expect("namespaces");
    }
    txn.commit().expect("commit");
    let entries: Vec<Vec<u8>> = (0..64).map(|_| random.bytes(ENTRY_BYTES)).collect();
    let mut stamp = 1_000_000u64;
    let started = thread_cpu();
    for batch in 0..changes / PER_COMMIT {
        let txn = db.begin_write().expect("a write transaction");
        {
            let mut entry_table = txn.open_table(ENTRIES).expect("entries");
            let mut kinds = txn.open_table(KINDS).expect("kinds");
            let mut objects = txn.open_table(OBJECTS).expect("objects");
            let mut namespaces = txn.open_table(NAMESPACES).expect("namespaces");
            let mut latest = txn.open_table(LATEST).expect("latest");
            for i in 0..PER_COMMIT {
                stamp += 1;
                let (key, namespace) = &keys[random.next() as usize % keys.len()];
                let entry = &entries[(batch * PER_COMMIT + i) % entries.len()];
                entry_table
                    .insert(stamp, entry.as_slice())
                    .expect("an entry");
                if layout == Layout::AsTheJournal {
                    kinds
                        .insert(("/Pod", stamp), ENTRY_BYTES as u64)
                        .expect("kind row");
                    objects
                        .insert((key.as_str(), stamp), 0)
                        .expect("object row");
                    namespaces
                        .insert((namespace.as_str(), stamp), ())
                        .expect("namespace row");
                }
                if layout != Layout::EntryAlone {
                    let last = latest
                        .get(key.as_str())
                        .expect("a read")
                        .map(|v| v.value().to_vec())
                        .unwrap_or_default();
                    latest
                        .insert(key.as_str(), last.as_slice())
                        .expect("a last version");
                }
            }
        }
        txn.commit().expect("commit");
    }
    (thread_cpu() - started).as_secs_f64() * 1e6 / changes as f64
}

fn main() {
    let quick = std::env::var("GRW_BENCH_QUICK").is_ok_and(|v| v == "1");
    let changes = env_number("GRW_BENCH_CHANGES", if quick { 5_000 } else { 20_000 }) as usize;
    println!("# The journal's rows in redb, per change\n");
    println!(
        "{}; {changes} changes to random objects of {OBJECTS_COUNT}, {PER_COMMIT} a transaction; \
         the writer's budget at 200 changes a second: {BUDGET_MICROS} µs.\n",
        cpu_model()
    );
    println!("| layout | in memory µs/change | on disk µs/change |");
    println!("|---|---:|---:|");
    for layout in [
        Layout::AsTheJournal,
        Layout::EntryAndLatest,
        Layout::EntryAlone,
    ] {
        let memory = Database::builder()
            .set_cache_size(MEMORY_CACHE_BYTES)
            .create_with_backend(MemoryFile::new())
            .expect("a database in memory");
        let in_memory = run(&memory, layout, changes);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let disk = Database::builder()
            .set_cache_size(CACHE_BYTES)
            .create(dir.path().join("rows.redb"))
            .expect("a database file");
        let on_disk = run(&disk, layout, changes);
        println!("| {} | {in_memory:.1} | {on_disk:.1} |", layout.name());
    }
}
