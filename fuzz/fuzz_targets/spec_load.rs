//! Fuzz target: see `checks::spec_load`.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::spec_load(data));
