//! Arazzo workflows (OpenAPI Initiative Arazzo 1.0.x and 1.1.0): the pure, I/O-free
//! language layer an executor builds on, and the documents it reads.
//!
//! * [`expression`]: runtime expressions (`$response.body#/id`), their parser, canonical
//!   spelling, and the [`expression::Resolve`] trait through which a caller supplies
//!   their values;
//! * [`template`]: values written in a document (parameter values, payloads, outputs):
//!   literal JSON, a whole expression, or strings with embedded `{$…}` pieces;
//! * [`condition`]: the `simple` condition language (literals, operators, expressions),
//!   parsed by recursive descent and evaluated by 1.1.0's rules;
//! * [`document`]: a whole document read into workflows, steps, parameters, bodies,
//!   criteria, actions and outputs, every reusable component put in place and each
//!   problem located by its JSON pointer;
//! * [`criterion`]: Criterion Objects (`simple`, `regex`, `jsonpath`), parsed and
//!   evaluated against a [`expression::Resolve`].

pub mod condition;
pub mod criterion;
pub mod document;
pub mod expression;
pub mod template;
#[cfg(test)]
mod testing;
