//! Fuzz target: see `checks::call_arguments`.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::call_arguments(data));
