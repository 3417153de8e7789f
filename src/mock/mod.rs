//! TEMP (replaced by the generator helper's module)
pub mod generate;
pub mod respond;
