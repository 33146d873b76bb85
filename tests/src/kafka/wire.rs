//! The bits of Kafka's wire format the test suite's own broker pieces read
//! and write: size-prefixed frames, and a request's fields, classic
//! (`i16`/`i32` lengths) and compact (unsigned varint lengths, in the
//! flexible versions).

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The next frame of `stream` without its size; `None` at its end.
pub(super) async fn read_frame(stream: &mut (impl AsyncRead + Unpin)) -> Option<Vec<u8>> {
    let mut size = [0; 4];
    stream.read_exact(&mut size).await.ok()?;
    let mut frame = vec![0; i32::from_be_bytes(size).max(0) as usize];
    stream.read_exact(&mut frame).await.ok()?;
    Some(frame)
}

/// Writes `body` as one frame.
pub(super) async fn write_frame(
    stream: &mut (impl AsyncWrite + Unpin),
    body: &[u8],
) -> std::io::Result<()> {
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend(body);
    stream.write_all(&frame).await
}

/// A reader of a request's fields, front to back; `None` past its end.
pub(super) struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, tail) = self.0.split_at_checked(n)?;
        self.0 = tail;
        Some(head)
    }

    pub fn i16(&mut self) -> Option<i16> {
        Some(i16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    pub fn i32(&mut self) -> Option<i32> {
        Some(i32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    /// A nullable string (`i16` length).
    pub fn string(&mut self) -> Option<Option<String>> {
        let len = self.i16()?;
        if len < 0 {
            return Some(None);
        }
        let bytes = self.take(len as usize)?;
        Some(Some(String::from_utf8_lossy(bytes).into_owned()))
    }

    /// Nullable bytes (`i32` length); null reads as empty.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.i32()?;
        self.take(len.max(0) as usize)
    }

    /// An unsigned varint.
    pub fn varint(&mut self) -> Option<u32> {
        let mut value = 0u32;
        for shift in (0..35).step_by(7) {
            let byte = self.take(1)?[0];
            value |= u32::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    /// Compact bytes (varint length + 1); null reads as empty.
    pub fn compact_bytes(&mut self) -> Option<&'a [u8]> {
        let len = self.varint()?;
        self.take(len.saturating_sub(1) as usize)
    }

    /// Tagged fields, skipped.
    pub fn tagged_fields(&mut self) -> Option<()> {
        for _ in 0..self.varint()? {
            self.varint()?;
            let len = self.varint()?;
            self.take(len as usize)?;
        }
        Some(())
    }
}

/// A classic string (`i16` length).
pub(super) fn string(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as i16).to_be_bytes());
    out.extend(s.as_bytes());
}

/// An unsigned varint.
pub(super) fn varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// A compact string (varint length + 1).
pub(super) fn compact_string(out: &mut Vec<u8>, s: &str) {
    varint(out, s.len() as u32 + 1);
    out.extend(s.as_bytes());
}
