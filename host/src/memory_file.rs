//! A redb database held in memory that gives memory back when it shrinks.
//!
//! redb's own in-memory backend is one `Vec<u8>`: it grows by doubling,
//! so it may hold twice the file's length, and keeps its capacity when
//! redb shrinks the file after freeing its last pages. This one holds the
//! file in chunks of [`CHUNK`] bytes: growing adds chunks, shrinking frees
//! the chunks past the new end, so what it holds is the file's length,
//! rounded up to a chunk.

use std::io;
use std::sync::Arc;

use parking_lot::RwLock;

/// Bytes of one chunk: a few of redb's regions' pages, small beside
/// what a journal holds, large enough that a page rarely spans two.
pub const CHUNK: usize = 1 << 20;

/// A redb [`StorageBackend`](redb::StorageBackend) in memory, in chunks.
/// Clones share the file: one is given to redb, another tells how much
/// it holds.
#[derive(Default, Clone)]
pub struct MemoryFile {
    inner: Arc<RwLock<Inner>>,
}

#[derive(Default)]
struct Inner {
    len: u64,
    chunks: Vec<Box<[u8]>>,
}

impl std::fmt::Debug for MemoryFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inner = self.inner.read();
        f.debug_struct("MemoryFile")
            .field("len", &inner.len)
            .field("chunks", &inner.chunks.len())
            .finish()
    }
}

impl MemoryFile {
    /// An empty file.
    pub fn new() -> MemoryFile {
        MemoryFile::default()
    }

    /// Bytes held: the chunks that hold the file.
    pub fn held(&self) -> usize {
        self.inner.read().chunks.len() * CHUNK
    }
}

fn out_of_range(offset: u64, len: usize, file: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("bytes {offset}..+{len} are past the end of the file ({file} bytes)"),
    )
}

/// The chunk an offset is in, and where in it.
fn place(offset: u64) -> (usize, usize) {
    (
        (offset / CHUNK as u64) as usize,
        (offset % CHUNK as u64) as usize,
    )
}

/// The pieces of `len` bytes at `offset`, one per chunk they touch: the
/// chunk, where in it, and which of the bytes.
fn spans(offset: u64, len: usize) -> impl Iterator<Item = (usize, usize, std::ops::Range<usize>)> {
    let mut done = 0;
    std::iter::from_fn(move || {
        (done < len).then(|| {
            let (chunk, at) = place(offset + done as u64);
            let n = (CHUNK - at).min(len - done);
            done += n;
            (chunk, at, done - n..done)
        })
    })
}

impl redb::StorageBackend for MemoryFile {
    fn len(&self) -> Result<u64, io::Error> {
        Ok(self.inner.read().len)
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> Result<(), io::Error> {
        let inner = self.inner.read();
        if offset.saturating_add(out.len() as u64) > inner.len {
            return Err(out_of_range(offset, out.len(), inner.len));
        }
        for (chunk, at, span) in spans(offset, out.len()) {
            out[span.clone()].copy_from_slice(&inner.chunks[chunk][at..at + span.len()]);
        }
        Ok(())
    }

    fn set_len(&self, len: u64) -> Result<(), io::Error> {
        let mut inner = self.inner.write();
        let chunks = usize::try_from(len.div_ceil(CHUNK as u64)).map_err(|_| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("a file of {len} bytes does not fit in memory"),
            )
        })?;
        if len < inner.len {
            inner.chunks.truncate(chunks);
            inner.chunks.shrink_to_fit();
            // What lies past the end reads as zeros if the file grows again.
            let (last, at) = place(len);
            if at > 0
                && let Some(chunk) = inner.chunks.get_mut(last)
            {
                chunk[at..].fill(0);
            }
        } else {
            while inner.chunks.len() < chunks {
                inner.chunks.push(vec![0; CHUNK].into_boxed_slice());
            }
        }
        inner.len = len;
        Ok(())
    }

    fn sync_data(&self) -> Result<(), io::Error> {
        Ok(())
    }

    fn write(&self, offset: u64, data: &[u8]) -> Result<(), io::Error> {
        let mut inner = self.inner.write();
        if offset.saturating_add(data.len() as u64) > inner.len {
            return Err(out_of_range(offset, data.len(), inner.len));
        }
        for (chunk, at, span) in spans(offset, data.len()) {
            inner.chunks[chunk][at..at + span.len()].copy_from_slice(&data[span]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use redb::StorageBackend;

    use super::*;

    #[test]
    fn reads_and_writes_across_chunks() {
        let file = MemoryFile::new();
        file.set_len(3 * CHUNK as u64).unwrap();
        let data: Vec<u8> = (0..CHUNK + 100).map(|i| (i % 251) as u8).collect();
        let offset = CHUNK as u64 - 50;
        file.write(offset, &data).unwrap();
        let mut back = vec![0; data.len()];
        file.read(offset, &mut back).unwrap();
        assert_eq!(back, data);
        let mut before = [1u8; 10];
        file.read(offset - 10, &mut before).unwrap();
        assert_eq!(before, [0; 10], "bytes never written read as zeros");
    }

    #[test]
    fn shrinking_frees_chunks_and_growing_again_reads_zeros() {
        let file = MemoryFile::new();
        file.set_len(10 * CHUNK as u64).unwrap();
        assert_eq!(file.held(), 10 * CHUNK);
        file.write(2 * CHUNK as u64 + 10, &[7; 100]).unwrap();
        file.set_len(2 * CHUNK as u64 + 20).unwrap();
        assert_eq!(file.held(), 3 * CHUNK, "chunks past the end are freed");
        assert_eq!(file.len().unwrap(), 2 * CHUNK as u64 + 20);
        file.set_len(4 * CHUNK as u64).unwrap();
        let mut back = [9u8; 100];
        file.read(2 * CHUNK as u64 + 10, &mut back).unwrap();
        assert_eq!(&back[..10], &[7; 10], "what was inside the file stays");
        assert_eq!(&back[10..], &[0; 90], "what was cut off reads as zeros");
    }

    #[test]
    fn past_the_end_is_an_error() {
        let file = MemoryFile::new();
        file.set_len(100).unwrap();
        let e = file.write(90, &[0; 20]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bytes 90..+20 are past the end of the file (100 bytes)"
        );
        assert!(file.read(0, &mut [0; 101]).is_err());
        assert!(file.read(0, &mut [0; 100]).is_ok());
    }

    #[test]
    fn a_database_in_it_holds_its_length() {
        use redb::{Database, ReadableDatabase, ReadableTableMetadata, TableDefinition};
        const T: TableDefinition<u64, &[u8]> = TableDefinition::new("t");
        let file = MemoryFile::new();
        let db = Database::builder()
            .create_with_backend(file.clone())
            .unwrap();
        let value = vec![5u8; 4000];
        for part in 0..8u64 {
            let txn = db.begin_write().unwrap();
            {
                let mut t = txn.open_table(T).unwrap();
                for i in 0..1000 {
                    t.insert(part * 1000 + i, value.as_slice()).unwrap();
                }
            }
            txn.commit().unwrap();
        }
        let len = file.len().unwrap() as usize;
        let held = file.held();
        assert!(len >= 32 << 20, "8,000 values of 4 KB in {len} bytes");
        assert!(
            held >= len && held - len < CHUNK,
            "{held} bytes held for a file of {len}"
        );
        let read = db.begin_read().unwrap();
        let t = read.open_table(T).unwrap();
        assert_eq!(t.get(7995).unwrap().unwrap().value(), value.as_slice());
        assert_eq!(t.len().unwrap(), 8000);
    }
}
