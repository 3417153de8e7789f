use std::io::{Read, Write as _};
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};

use super::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/compression")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const PETS: &[u8] = br#"{"items":[{"id":1,"name":"Rex"},{"id":2,"name":"Fido"}],"total":2}"#;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).expect("gzip");
    e.finish().expect("gzip")
}

fn zlib(data: &[u8]) -> Vec<u8> {
    let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).expect("zlib");
    e.finish().expect("zlib")
}

fn raw_deflate(data: &[u8]) -> Vec<u8> {
    let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).expect("deflate");
    e.finish().expect("deflate")
}

/// `mib` MiB of zeros, gzipped (about 1 KiB a MiB), built without compressing them all: one full-flushed
/// DEFLATE segment of 1 MiB of zeros repeated (a full flush ends byte-aligned and resets
/// the dictionary, so segments can follow one another).
pub fn gzip_zeros(mib: usize) -> Vec<u8> {
    let zeros = vec![0u8; 1 << 20];
    let mut compress = flate2::Compress::new(Compression::default(), false);
    let mut segment = Vec::with_capacity(8 * 1024);
    loop {
        let consumed = compress.total_in() as usize;
        segment.reserve(8 * 1024);
        compress
            .compress_vec(
                &zeros[consumed..],
                &mut segment,
                flate2::FlushCompress::Full,
            )
            .expect("compress");
        if compress.total_in() as usize == zeros.len() && segment.len() < segment.capacity() {
            break;
        }
    }
    let mut last = Vec::with_capacity(64);
    flate2::Compress::new(Compression::fast(), false)
        .compress_vec(&[], &mut last, flate2::FlushCompress::Finish)
        .expect("final block");
    let mut crc = flate2::Crc::new();
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];
    for _ in 0..mib {
        out.extend_from_slice(&segment);
        crc.update(&zeros);
    }
    out.extend_from_slice(&last);
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&((mib as u32) << 20).to_le_bytes());
    out
}

/// Feeds `encoded` in chunks of `chunk` bytes, as the wire would, then finishes.
fn decode(coding: Coding, encoded: &[u8], cap: u64, chunk: usize) -> Result<Decoded, DecodeError> {
    let mut decoder = Decoder::new(coding, cap);
    for piece in encoded.chunks(chunk.max(1)) {
        if !decoder.feed(piece)? {
            return Ok(decoder.partial());
        }
    }
    decoder.finish()
}

#[test]
fn header_values() {
    assert_eq!(Coding::parse("gzip"), Ok(Some(Coding::Gzip)));
    assert_eq!(Coding::parse(" X-GZIP "), Ok(Some(Coding::Gzip)));
    assert_eq!(Coding::parse("deflate"), Ok(Some(Coding::Deflate)));
    assert_eq!(Coding::parse("br"), Ok(Some(Coding::Brotli)));
    assert_eq!(Coding::parse("identity"), Ok(None));
    assert_eq!(Coding::parse(""), Ok(None));
    assert_eq!(Coding::parse("identity, br"), Ok(Some(Coding::Brotli)));
    assert_eq!(Coding::parse("compress"), Err("compress".to_string()));
    assert_eq!(Coding::parse("zstd"), Err("zstd".to_string()));
    assert_eq!(Coding::parse("gzip, br"), Err("gzip, br".to_string()));
}

#[test]
fn every_coding_decodes_in_any_chunking() {
    let brotli = fixture("pets.json.br");
    let cases: [(Coding, Vec<u8>); 4] = [
        (Coding::Gzip, gzip(PETS)),
        (Coding::Deflate, zlib(PETS)),
        (Coding::Deflate, raw_deflate(PETS)),
        (Coding::Brotli, brotli),
    ];
    for (coding, encoded) in cases {
        for chunk in [1, 2, 3, 7, 64, 1 << 20] {
            let decoded = decode(coding, &encoded, 1 << 20, chunk)
                .unwrap_or_else(|e| panic!("{coding:?} by {chunk}: {e}"));
            assert_eq!(
                decoded,
                Decoded {
                    body: PETS.to_vec(),
                    omitted: 0
                },
                "{coding:?} by {chunk}"
            );
        }
    }
}

#[test]
fn concatenated_gzip_members_are_one_body() {
    let mut two = gzip(b"[1,");
    two.extend(gzip(b"2]"));
    let decoded = decode(Coding::Gzip, &two, 100, 5).expect("decodes");
    assert_eq!(decoded.body, b"[1,2]");
}

#[test]
fn the_cap_applies_to_decoded_bytes_and_the_rest_is_counted() {
    let text = "abcdefghij".repeat(1_000); // 10,000 bytes, compresses well
    let encoded = gzip(text.as_bytes());
    assert!(encoded.len() < 1000);
    let decoded = decode(Coding::Gzip, &encoded, 1000, 256).expect("decodes");
    assert_eq!(decoded.body, text.as_bytes()[..1000]);
    assert_eq!(decoded.omitted, 9_000);
}

#[test]
fn counting_past_the_cap_stops_at_sixteen_times_it() {
    let text = "0123456789".repeat(100_000); // 1,000,000 bytes
    let decoded = decode(Coding::Gzip, &gzip(text.as_bytes()), 1000, 4096).expect("decodes");
    assert_eq!(decoded.body.len(), 1000);
    // A lower bound: at least 16 times the cap, far from all of it.
    assert!(
        (16_000..100_000).contains(&decoded.omitted),
        "{}",
        decoded.omitted
    );
}

#[test]
fn the_zeros_builder_makes_real_gzip() {
    let encoded = gzip_zeros(3);
    let mut decoded = Vec::new();
    flate2::read::GzDecoder::new(encoded.as_slice())
        .read_to_end(&mut decoded)
        .expect("a valid gzip stream");
    assert_eq!(decoded.len(), 3 << 20);
    assert!(decoded.iter().all(|&b| b == 0));
}

#[test]
fn a_gigabyte_of_zeros_is_stopped_by_the_ratio_just_past_the_cap() {
    let bombs = [
        (Coding::Gzip, gzip_zeros(1024)),
        (Coding::Brotli, fixture("zeros-1GiB.br")),
    ];
    for (coding, bomb) in bombs {
        let started = Instant::now();
        // The default cap, which would otherwise have them counted to 68 MiB.
        let cap: u64 = 4 << 20;
        let error = decode(coding, &bomb, cap, 16 * 1024).expect_err("refused");
        let DecodeError::Bomb {
            decoded, encoded, ..
        } = error
        else {
            panic!("{coding:?}: {error}");
        };
        assert!(decoded > cap && decoded < cap + (256 << 10), "{decoded}");
        assert!(encoded <= 32 * 1024, "{encoded}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{coding:?}: {:?}",
            started.elapsed()
        );
        assert!(
            error
                .to_string()
                .contains(&format!("inflates more than {MAX_RATIO}-fold")),
            "{error}"
        );
    }
}

#[test]
fn a_small_body_is_never_refused_for_its_ratio() {
    // 512 KiB of zeros: a ratio near 1000, under the floor.
    let decoded = decode(Coding::Gzip, &gzip(&vec![0u8; 512 << 10]), 1 << 20, 64).expect("ok");
    assert_eq!(decoded.body.len(), 512 << 10);
}

#[test]
fn corrupt_and_truncated_streams_are_errors() {
    let encoded = gzip(PETS);
    let truncated = &encoded[..encoded.len() - 5];
    let mut flipped = encoded.clone();
    flipped[12] ^= 0xFF;
    let brotli = fixture("pets.json.br");
    for (coding, bad) in [
        (Coding::Gzip, truncated.to_vec()),
        (Coding::Gzip, flipped),
        (Coding::Gzip, b"not gzip at all".to_vec()),
        (Coding::Deflate, b"\xff".to_vec()),
        (Coding::Brotli, brotli[..brotli.len() - 3].to_vec()),
        (Coding::Brotli, b"\xff\xff\xff\xff".to_vec()),
    ] {
        match decode(coding, &bad, 1 << 20, 7) {
            Err(DecodeError::Corrupt { coding: name, .. }) => assert_eq!(name, coding.as_str()),
            other => panic!("{coding:?} {bad:?}: {other:?}"),
        }
    }
}

#[test]
fn an_empty_encoded_body_is_an_empty_body() {
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli] {
        assert_eq!(
            decode(coding, b"", 100, 1),
            Ok(Decoded {
                body: Vec::new(),
                omitted: 0
            })
        );
    }
}

#[test]
fn encoded_bytes_that_decode_to_nothing_are_not_read_forever() {
    // Empty stored DEFLATE blocks, over and over: 5 bytes each, no output.
    let mut endless = Vec::new();
    for _ in 0..20_000 {
        endless.extend_from_slice(&[0x00, 0x00, 0x00, 0xFF, 0xFF]);
    }
    let error = decode(Coding::Deflate, &endless, 1000, 4096).expect_err("refused");
    assert!(error.to_string().contains("decoded to only 0"), "{error}");
}

#[test]
fn garbage_and_mangled_streams_never_panic() {
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as u8
    };
    let samples = [
        gzip(PETS),
        zlib(PETS),
        raw_deflate(PETS),
        fixture("pets.json.br"),
    ];
    for round in 0..400 {
        let coding = [Coding::Gzip, Coding::Deflate, Coding::Brotli][round % 3];
        let mut bytes = samples[round % samples.len()].clone();
        match round % 4 {
            0 => bytes = (0..(usize::from(next()) * 4)).map(|_| next()).collect(),
            1 => {
                let i = usize::from(next()) % bytes.len();
                bytes[i] ^= next() | 1;
            }
            2 => bytes.truncate(usize::from(next()) % bytes.len()),
            _ => bytes.extend((0..usize::from(next())).map(|_| next())),
        }
        let chunk = usize::from(next() % 16) + 1;
        // Any outcome but a panic; a success never holds more than the cap.
        if let Ok(decoded) = decode(coding, &bytes, 64, chunk) {
            assert!(decoded.body.len() <= 64);
        }
    }
}

#[test]
fn a_body_within_the_cap_is_never_refused_for_its_ratio() {
    // 3 MiB of zeros is over 200-fold in gzip, past the 1 MiB floor, but within the cap.
    let zeros = gzip_zeros(3);
    let decoded = decode(Coding::Gzip, &zeros, 4 << 20, 16 * 1024).expect("whole");
    assert_eq!(decoded.body.len(), 3 << 20);
    assert_eq!(decoded.omitted, 0);
}
