//! Fuzz target: see `checks::response_mapping`.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::response_mapping(data));
