//! Compressed upstream bodies (`Content-Encoding: gzip`, `deflate`, `br`), decoded with
//! bounds, so that what the response mapping sees (and what redaction scans) is the body
//! itself.
//!
//! restmcp asks for compression ([`ACCEPT_ENCODING`]) and decodes here, not in the HTTP
//! client, because the limits need both sizes:
//!
//! * `max_response_bytes` applies to the decoded bytes: past it the decoder keeps
//!   decoding only to count what is left out (the truncation marker's figure), up to 16
//!   times the cap, as for an uncompressed body; encoded bytes that decode to almost
//!   nothing are read up to twice that, then refused.
//! * The ratio: once more than the cap (and at least [`RATIO_FLOOR`]) has come out, the
//!   decoded size may not exceed [`MAX_RATIO`] times the encoded bytes read so far. Real
//!   JSON compresses 5–30-fold with gzip, the most repetitive listings 100-fold and more;
//!   DEFLATE itself cannot exceed about 1030-fold, which a bomb (a gigabyte of zeros in a
//!   megabyte) reaches. So a bomb is stopped as soon as it passes the cap, having cost a
//!   few milliseconds, while a body within the cap is never refused, whatever its ratio
//!   (a test upstream's repetitive 3 MiB JSON passed 200-fold and was refused when the
//!   ratio applied from 1 MiB on).
//!
//! `deflate` is the zlib format (RFC 9110 §8.4.1.2), but some servers send raw DEFLATE:
//! the first two bytes tell them apart. `x-gzip` is `gzip` (§8.4.1.3). An encoding
//! restmcp does not know, or several stacked, is refused by name.

use std::io::{self, Write};

use flate2::write::{DeflateDecoder, MultiGzDecoder, ZlibDecoder};

/// What restmcp asks upstreams for (unless `apis.NAME.compression = false`).
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// The largest decoded/encoded ratio accepted past [`RATIO_FLOOR`].
pub const MAX_RATIO: u64 = 200;

/// Decoded bytes below which the ratio is not checked (1 MiB).
pub const RATIO_FLOOR: u64 = 1 << 20;

/// Encoded bytes handed to the decoder at a time.
const FEED_SLICE: usize = 4096;

/// The encodings restmcp decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Coding {
    Gzip,
    Deflate,
    Brotli,
}

impl Coding {
    /// The coding a `Content-Encoding` value names: `None` for none (`identity`, empty),
    /// or the value itself when restmcp cannot decode it (unknown, or several stacked).
    pub fn parse(header: &str) -> Result<Option<Coding>, String> {
        let codings: Vec<String> = header
            .split(',')
            .map(|c| c.trim().to_ascii_lowercase())
            .filter(|c| !c.is_empty() && c != "identity")
            .collect();
        match codings.as_slice() {
            [] => Ok(None),
            [one] => match one.as_str() {
                "gzip" | "x-gzip" => Ok(Some(Coding::Gzip)),
                "deflate" => Ok(Some(Coding::Deflate)),
                "br" => Ok(Some(Coding::Brotli)),
                _ => Err(header.trim().to_string()),
            },
            _ => Err(header.trim().to_string()),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Coding::Gzip => "gzip",
            Coding::Deflate => "deflate",
            Coding::Brotli => "br",
        }
    }
}

/// Why an encoded body cannot be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The ratio limit: decoding stopped as soon as it was passed.
    #[error(
        "its {coding} body inflates more than {MAX_RATIO}-fold ({decoded} bytes from the first \
         {encoded}), so restmcp stopped decoding it as a likely decompression bomb"
    )]
    Bomb {
        coding: &'static str,
        decoded: u64,
        encoded: u64,
    },
    #[error("its {coding} body cannot be decoded ({problem})")]
    Corrupt {
        coding: &'static str,
        problem: String,
    },
}

/// A body decoded up to the cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// At most the cap.
    pub body: Vec<u8>,
    /// Decoded bytes past the cap (a lower bound when counting stopped).
    pub omitted: u64,
}

/// Why the sink refused more output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The ratio limit was passed.
    Bomb,
    /// Enough was counted past the cap.
    Counted,
}

/// Where decoded bytes go: kept up to the cap, counted past it, refused past the limits.
struct Sink {
    kept: Vec<u8>,
    cap: usize,
    decoded: u64,
    /// Encoded bytes fed so far (the current chunk included).
    encoded: u64,
    /// Decoded bytes after which counting stops.
    count_limit: u64,
    stop: Option<Stop>,
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.stop.is_some() {
            return Err(io::Error::other("decoding stopped"));
        }
        let room = self.cap.saturating_sub(self.kept.len()).min(buf.len());
        self.kept.extend_from_slice(&buf[..room]);
        self.decoded = self.decoded.saturating_add(buf.len() as u64);
        // The ratio counts only past the cap: a body within what the operator allows is
        // read whole, however well it compresses (repetitive JSON can pass 200-fold).
        let floor = (self.cap as u64).max(RATIO_FLOOR);
        if self.decoded > floor && self.decoded > self.encoded.saturating_mul(MAX_RATIO) {
            self.stop = Some(Stop::Bomb);
        } else if self.decoded > self.count_limit {
            self.stop = Some(Stop::Counted);
        }
        match self.stop {
            Some(_) => Err(io::Error::other("decoding stopped")),
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Inner {
    Gzip(MultiGzDecoder<Sink>),
    Zlib(ZlibDecoder<Sink>),
    RawDeflate(DeflateDecoder<Sink>),
    Brotli(Box<brotli_decompressor::DecompressorWriter<Sink>>),
    /// `deflate` before its first two bytes, which say zlib or raw.
    Undecided(Sink, Vec<u8>),
}

/// A streaming decoder of one body: fed the encoded chunks as they arrive.
pub struct Decoder {
    coding: Coding,
    inner: Inner,
    /// Encoded bytes fed.
    encoded: u64,
    /// Encoded bytes after which reading stops.
    read_limit: u64,
}

impl Decoder {
    /// A decoder keeping at most `cap` decoded bytes.
    pub fn new(coding: Coding, cap: u64) -> Decoder {
        // Past the cap, 16 times the cap more are counted, as for an identity body.
        let limit = cap.saturating_add(cap.saturating_mul(16));
        let sink = Sink {
            kept: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            decoded: 0,
            encoded: 0,
            count_limit: limit,
            stop: None,
        };
        let inner = match coding {
            Coding::Gzip => Inner::Gzip(MultiGzDecoder::new(sink)),
            Coding::Deflate => Inner::Undecided(sink, Vec::new()),
            Coding::Brotli => Inner::Brotli(Box::new(
                brotli_decompressor::DecompressorWriter::new(sink, 32 * 1024),
            )),
        };
        Decoder {
            coding,
            inner,
            encoded: 0,
            // Room for incompressible data, whose encoded size slightly exceeds its own.
            read_limit: limit.saturating_mul(2).saturating_add(64 * 1024),
        }
    }

    /// Decodes `chunk`. `Ok(false)`: enough has been read (counting past the cap is
    /// done); call [`Decoder::partial`].
    pub fn feed(&mut self, chunk: &[u8]) -> Result<bool, DecodeError> {
        // In slices, so that the ratio is checked against what was really fed: a whole
        // 64 KiB network chunk of a bomb would let 13 MiB out before the check.
        for slice in chunk.chunks(FEED_SLICE) {
            if !self.feed_slice(slice)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn feed_slice(&mut self, chunk: &[u8]) -> Result<bool, DecodeError> {
        self.encoded = self.encoded.saturating_add(chunk.len() as u64);
        if let Inner::Undecided(_, head) = &mut self.inner {
            head.extend_from_slice(chunk);
            if head.len() < 2 {
                return Ok(true);
            }
            let Inner::Undecided(sink, head) =
                std::mem::replace(&mut self.inner, Inner::Undecided(empty_sink(), Vec::new()))
            else {
                return Ok(true);
            };
            // RFC 1950: CM = 8, and the first two bytes are a multiple of 31.
            let zlib =
                head[0] & 0x0F == 8 && (u16::from(head[0]) << 8 | u16::from(head[1])) % 31 == 0;
            self.inner = if zlib {
                Inner::Zlib(ZlibDecoder::new(sink))
            } else {
                Inner::RawDeflate(DeflateDecoder::new(sink))
            };
            return self.write(&head);
        }
        self.write(chunk)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<bool, DecodeError> {
        let encoded = self.encoded;
        let written = match &mut self.inner {
            Inner::Gzip(d) => {
                d.get_mut().encoded = encoded;
                d.write_all(bytes)
            }
            Inner::Zlib(d) => {
                d.get_mut().encoded = encoded;
                d.write_all(bytes)
            }
            Inner::RawDeflate(d) => {
                d.get_mut().encoded = encoded;
                d.write_all(bytes)
            }
            Inner::Brotli(d) => {
                d.get_mut().encoded = encoded;
                d.write_all(bytes)
            }
            Inner::Undecided(..) => Ok(()),
        };
        match (written, self.sink().stop) {
            (_, Some(Stop::Bomb)) => Err(self.bomb()),
            (_, Some(Stop::Counted)) => Ok(false),
            (Err(e), None) => Err(self.corrupt(e)),
            // Encoded bytes that decode to (almost) nothing, on and on.
            (Ok(()), None) if self.encoded > self.read_limit => {
                let decoded = self.sink().decoded;
                Err(DecodeError::Corrupt {
                    coding: self.coding.as_str(),
                    problem: format!(
                        "{} encoded bytes decoded to only {decoded}; restmcp stopped reading",
                        self.encoded
                    ),
                })
            }
            (Ok(()), None) => Ok(true),
        }
    }

    fn sink(&mut self) -> &mut Sink {
        match &mut self.inner {
            Inner::Gzip(d) => d.get_mut(),
            Inner::Zlib(d) => d.get_mut(),
            Inner::RawDeflate(d) => d.get_mut(),
            Inner::Brotli(d) => d.get_mut(),
            Inner::Undecided(sink, _) => sink,
        }
    }

    fn bomb(&mut self) -> DecodeError {
        let coding = self.coding.as_str();
        let encoded = self.encoded;
        DecodeError::Bomb {
            coding,
            decoded: self.sink().decoded,
            encoded,
        }
    }

    fn corrupt(&self, error: io::Error) -> DecodeError {
        DecodeError::Corrupt {
            coding: self.coding.as_str(),
            problem: error.to_string(),
        }
    }

    /// The whole body has been fed: checks that it ended where its encoding says.
    pub fn finish(mut self) -> Result<Decoded, DecodeError> {
        if self.encoded == 0 {
            // No body at all (HEAD, 204) is not a broken stream.
            return Ok(self.partial());
        }
        let finished = match &mut self.inner {
            Inner::Gzip(d) => d.try_finish(),
            Inner::Zlib(d) => d.try_finish(),
            Inner::RawDeflate(d) => d.try_finish(),
            Inner::Brotli(d) => d.close(),
            Inner::Undecided(..) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the body ends after one byte",
            )),
        };
        match (finished, self.sink().stop) {
            (_, Some(Stop::Bomb)) => Err(self.bomb()),
            (_, Some(Stop::Counted)) => Ok(self.partial()),
            (Err(e), None) => Err(self.corrupt(e)),
            (Ok(()), None) => Ok(self.partial()),
        }
    }

    /// What was decoded so far, without checking the stream's end (reading stopped).
    pub fn partial(mut self) -> Decoded {
        let sink = self.sink();
        let body = std::mem::take(&mut sink.kept);
        let omitted = sink.decoded.saturating_sub(body.len() as u64);
        // Dropping a decoder flushes into the sink, which refuses once stopped.
        sink.stop = Some(Stop::Counted);
        Decoded { body, omitted }
    }
}

fn empty_sink() -> Sink {
    Sink {
        kept: Vec::new(),
        cap: 0,
        decoded: 0,
        encoded: 0,
        count_limit: 0,
        stop: Some(Stop::Counted),
    }
}

#[cfg(test)]
mod tests;
