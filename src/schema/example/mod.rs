//! Deterministic example values generated from a JSON Schema 2020-12.

mod generate;

pub use generate::{Limits, example, value_for};
