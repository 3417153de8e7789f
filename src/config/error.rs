//! [`ConfigError`]: what is wrong with a configuration, naming the key and where it was set,
//! without quoting the file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: config file not found (pass --config FILE or --spec SPEC)")]
    NotFound { path: PathBuf },
    #[error("invalid configuration: {}", describe_figment(.0))]
    Figment(Box<figment::Error>),
    #[error("invalid configuration: {key} = {value}: {problem}")]
    Invalid {
        key: String,
        value: String,
        problem: String,
    },
    #[error("invalid configuration: {key}: {problem}")]
    Key { key: String, problem: String },
}

impl From<figment::Error> for ConfigError {
    fn from(error: figment::Error) -> Self {
        ConfigError::Figment(Box::new(error))
    }
}

/// Every error in `error`, one per line, each naming the key and the file (or variable) it
/// came from, without quoting the file. A TOML syntax error says where (line and column)
/// but not what the line holds: the file given as the configuration may be a symlink to, or
/// simply be, a file that is not a configuration at all (`/etc/shadow`), and its content
/// must not reach a terminal or a CI log through an error message.
fn describe_figment(error: &figment::Error) -> String {
    let mut lines = Vec::new();
    for mut single in error.clone() {
        if let figment::error::Kind::Message(message) = &single.kind {
            single.kind = figment::error::Kind::Message(without_source_lines(message));
        }
        lines.push(single.to_string());
    }
    lines.join("\n")
}

/// A parser's message without the excerpt it quotes: the TOML parser shows the offending
/// line in a gutter (`  |`, `1 | content`, `  |   ^`) between its position line and its
/// explanation. Lines of the gutter are dropped; the position and the explanation stay.
fn without_source_lines(message: &str) -> String {
    let is_gutter = |line: &str| {
        let rest = line
            .trim_start()
            .trim_start_matches(|c: char| c.is_ascii_digit());
        rest.trim_start().starts_with('|')
    };
    message
        .lines()
        .filter(|line| !is_gutter(line) && !line.trim().is_empty())
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("; ")
}
