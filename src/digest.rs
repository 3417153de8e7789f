//! Bytes to short text: lowercase hex, SHA-256 digests of several parts, and random tokens
//! from the system's generator (ring's, already built for rustls). Used wherever a value
//! must name something without showing it (idempotency records, confirmation states,
//! request fingerprints) or be unguessable (nonces, generated idempotency keys).

use ring::rand::SecureRandom as _;

/// `bytes` as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}

/// The bytes `text` spells in hex (either case), when it is hex of an even length.
pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The SHA-256 of `parts`, each prefixed with its length, so that no two different lists
/// of parts hash alike (`["ab", "c"]` and `["a", "bc"]` differ).
pub fn sha256_parts(parts: &[&[u8]]) -> [u8; 32] {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    for part in parts {
        context.update(&(part.len() as u64).to_be_bytes());
        context.update(part);
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(context.finish().as_ref());
    out
}

/// `N` random bytes. The system's generator does not fail on the platforms restmcp runs on;
/// should it, the time still keeps two values from one process apart.
pub fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    if ring::rand::SystemRandom::new().fill(&mut bytes).is_err() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos()
            .to_be_bytes();
        for (slot, byte) in bytes.iter_mut().zip(now.iter().cycle()) {
            *slot = *byte;
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_parts_are_told_apart() {
        assert_eq!(hex(&[0x00, 0xab, 0x7f]), "00ab7f");
        assert_eq!(from_hex("00AB7f"), Some(vec![0x00, 0xab, 0x7f]));
        assert_eq!(from_hex("abc"), None);
        assert_eq!(from_hex("zz"), None);
        assert_ne!(sha256_parts(&[b"ab", b"c"]), sha256_parts(&[b"a", b"bc"]));
        assert_ne!(random::<16>(), random::<16>());
    }
}
