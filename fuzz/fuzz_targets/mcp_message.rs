//! Fuzz target: see `checks::mcp_message`.
#![no_main]

#[path = "../checks.rs"]
mod checks;

libfuzzer_sys::fuzz_target!(|data: &[u8]| checks::mcp_message(data));
