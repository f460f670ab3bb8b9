//! Hashing an event's parts: texts tagged and length-prefixed, so no two
//! lists of parts hash the same bytes, and JSON written straight into a hash.

use sha2::{Digest, Sha256};

/// Feeds optional text parts to a hash, each tagged and length-prefixed, so
/// absent differs from empty and no two part lists hash the same bytes.
pub(crate) fn hash_parts(h: &mut Sha256, parts: &[Option<&str>]) {
    for part in parts {
        match part {
            None => h.update([0]),
            Some(p) => {
                h.update([1]);
                h.update((p.len() as u64).to_le_bytes());
                h.update(p.as_bytes());
            }
        }
    }
}

/// Bytes written into a hash.
pub(crate) struct HashWriter<'a>(pub(crate) &'a mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
