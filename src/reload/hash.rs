//! A content hash that does not depend on how the bytes arrive.
//!
//! `Hasher::write` of most hashers (including `FxHasher`) is not streaming: writing `ab`
//! and writing `a` then `b` give different results. Files are read and HTTP bodies arrive
//! in pieces whose sizes vary from one read to the next, so the bytes are regrouped into
//! fixed blocks before they reach the hasher; the same content then always has the same
//! hash.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// Bytes fed to the hasher at a time (and the read buffer size for files).
pub(super) const BLOCK: usize = 64 * 1024;

pub(super) struct ContentHasher {
    hasher: FxHasher,
    block: Vec<u8>,
    len: u64,
}

impl ContentHasher {
    pub(super) fn new() -> ContentHasher {
        ContentHasher {
            hasher: FxHasher::default(),
            block: Vec::with_capacity(BLOCK),
            len: 0,
        }
    }

    pub(super) fn update(&mut self, mut bytes: &[u8]) {
        self.len = self.len.wrapping_add(bytes.len() as u64);
        if !self.block.is_empty() {
            let take = (BLOCK - self.block.len()).min(bytes.len());
            self.block.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.block.len() < BLOCK {
                return;
            }
            self.hasher.write(&self.block);
            self.block.clear();
        }
        let mut blocks = bytes.chunks_exact(BLOCK);
        for block in &mut blocks {
            self.hasher.write(block);
        }
        self.block.extend_from_slice(blocks.remainder());
    }

    pub(super) fn finish(mut self) -> u64 {
        if !self.block.is_empty() {
            self.hasher.write(&self.block);
        }
        self.hasher.write_u64(self.len);
        self.hasher.finish()
    }
}

/// The hash of `bytes` in one piece.
#[cfg(test)]
pub(super) fn hash_bytes(bytes: &[u8]) -> u64 {
    let mut hasher = ContentHasher::new();
    hasher.update(bytes);
    hasher.finish()
}
