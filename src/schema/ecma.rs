//! `pattern`s as restmcp publishes and checks them.
//!
//! JSON Schema's patterns are ECMA-262 regular expressions, read by code point (2020-12
//! §6.4 asks for the `u` flag, as ajv and the official TypeScript SDK use it; Python's `re`
//! reads code points too). restmcp's validator (`jsonschema`) translates ECMA-262 into
//! the Rust dialect it compiles on a best-effort basis, and some forms real descriptions
//! write defeat it: a class escape at the end of a range (`[\w-.+]`, where Annex B reads
//! the `-` as itself), a surrogate pair written as two `\u` escapes, the empty classes `[]`
//! and `[^]`, `\b` (backspace) in a class. A pattern it cannot compile would make every
//! call of its tool fail, so [`publishable`] rewrites those forms into ones that mean the
//! same in ECMA-262 and in the validator (`[\w\-.+]`, the character itself, `[^\s\S]`,
//! `[\s\S]`, `\x08`), and checks that the validator compiles the result. What it still
//! cannot make compile, and a lone surrogate (`\uD800` without its pair, which engines that
//! read code points and engines that read UTF-16 units answer differently), is refused
//! with the reason: the caller leaves that `pattern` out of the published schema, and so
//! out of validation, and says so in `restmcp check`. The published schema and the
//! validator therefore always hold the same pattern.

use std::borrow::Cow;

use serde_json::json;

/// The pattern to publish (and validate with) for `pattern`: itself when the validator
/// reads it as ECMA-262 does, else an equivalent rewriting; `Err` with the reason when
/// there is none.
pub fn publishable(pattern: &str) -> Result<Cow<'_, str>, String> {
    let rewritten = rewrite(pattern)?;
    let schema = json!({"type": "string", "pattern": rewritten.as_ref()});
    match jsonschema::draft202012::new(&schema) {
        Ok(_) => Ok(rewritten),
        Err(_) => {
            Err("restmcp's validator cannot compile it as an ECMA-262 regular expression".into())
        }
    }
}

/// What a pattern that must match nothing is written as (ECMA-262's `[]`).
const NOTHING: &str = r"[^\s\S]";
/// What matches any one character (ECMA-262's `[^]`).
const ANYTHING: &str = r"[\s\S]";

/// `pattern` with the forms the validator misreads rewritten; borrowed when it has none.
fn rewrite(pattern: &str) -> Result<Cow<'_, str>, String> {
    if !pattern.contains('[') && !pattern.contains("\\u") {
        return Ok(Cow::Borrowed(pattern));
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len());
    let mut changed = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                if let Some((point, next)) = unicode_escape(&chars, i) {
                    match char::from_u32(point) {
                        Some(c) if point > 0xFFFF => {
                            out.push(c);
                            changed = true;
                        }
                        Some(_) => out.extend(&chars[i..next]),
                        None => return Err(lone_surrogate(point)),
                    }
                    i = next;
                } else {
                    out.extend(&chars[i..(i + 2).min(chars.len())]);
                    i += 2;
                }
            }
            '[' => {
                let (class, next, class_changed) = class(&chars, i)?;
                out.push_str(&class);
                changed |= class_changed;
                i = next;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(pattern)
    })
}

fn lone_surrogate(unit: u32) -> String {
    format!(
        "\\u{unit:04X} is half of a UTF-16 surrogate pair, which engines that read code points \
         (ECMA-262 with the u flag, as JSON Schema asks) and engines that read UTF-16 units match differently"
    )
}

/// The code point of a `\uXXXX` escape at `chars[at]` (a surrogate pair written as two
/// escapes is one code point), and the index after it; `None` for any other escape.
fn unicode_escape(chars: &[char], at: usize) -> Option<(u32, usize)> {
    let unit = hex4(chars, at)?;
    if (0xD800..=0xDBFF).contains(&unit)
        && let Some(trail) = hex4(chars, at + 6).filter(|t| (0xDC00..=0xDFFF).contains(t))
    {
        return Some((
            0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00),
            at + 12,
        ));
    }
    Some((unit, at + 6))
}

/// The value of `\uXXXX` at `chars[at]`.
fn hex4(chars: &[char], at: usize) -> Option<u32> {
    if chars.get(at) != Some(&'\\') || chars.get(at + 1) != Some(&'u') {
        return None;
    }
    let digits = chars.get(at + 2..at + 6)?;
    digits
        .iter()
        .try_fold(0u32, |value, c| Some(value * 16 + c.to_digit(16)?))
}

/// One member of a character class, as written.
enum Atom {
    /// A `-` (a range's, or itself).
    Dash,
    /// One character, as it is to be written.
    Char(String),
    /// A class escape (`\d`, `\w`, `\s`, their negations, `\p{…}`): never a range's end.
    Set(String),
}

impl Atom {
    fn text(&self) -> &str {
        match self {
            Atom::Dash => "-",
            Atom::Char(text) | Atom::Set(text) => text,
        }
    }
}

/// The class that opens at `chars[start]`, rewritten: its text, the index after its `]`,
/// and whether the text changed.
fn class(chars: &[char], start: usize) -> Result<(String, usize, bool), String> {
    let mut i = start + 1;
    let negated = chars.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut atoms = Vec::new();
    let mut changed = false;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err("a character class is not closed".into());
        };
        match c {
            ']' => break,
            '-' => {
                atoms.push(Atom::Dash);
                i += 1;
            }
            '\\' => {
                let (atom, next, rewritten) = class_escape(chars, i)?;
                changed |= rewritten;
                atoms.push(atom);
                i = next;
            }
            '[' => {
                // A literal in ECMA-262; a nested class to the validator.
                atoms.push(Atom::Char("\\[".into()));
                changed = true;
                i += 1;
            }
            c => {
                atoms.push(Atom::Char(c.to_string()));
                i += 1;
            }
        }
    }
    let end = i + 1;
    if atoms.is_empty() {
        let text = if negated { ANYTHING } else { NOTHING };
        return Ok((text.into(), end, true));
    }
    let mut out = String::from(if negated { "[^" } else { "[" });
    changed |= ranges(&atoms, &mut out);
    out.push(']');
    Ok((out, end, changed))
}

/// Writes a class's members: `a-b` stays a range; a `-` beside a class escape is itself
/// (ECMA-262 Annex B), written `\-`, as is one between two ranges. True when anything
/// was written otherwise than the original.
fn ranges(atoms: &[Atom], out: &mut String) -> bool {
    let mut changed = false;
    let mut k = 0;
    while k < atoms.len() {
        let ranged = matches!(atoms.get(k + 1), Some(Atom::Dash)) && k + 2 < atoms.len();
        if ranged {
            let (from, to) = (&atoms[k], &atoms[k + 2]);
            if matches!(from, Atom::Set(_)) || matches!(to, Atom::Set(_)) {
                out.push_str(from.text());
                out.push_str("\\-");
                out.push_str(to.text());
                changed = true;
            } else {
                out.push_str(from.text());
                out.push('-');
                out.push_str(to.text());
            }
            k += 3;
            continue;
        }
        let edge = k == 0 || k + 1 == atoms.len();
        match &atoms[k] {
            Atom::Dash if !edge => {
                out.push_str("\\-");
                changed = true;
            }
            atom => out.push_str(atom.text()),
        }
        k += 1;
    }
    changed
}

/// The escape at `chars[at]` inside a class: the atom, the index after it, and whether it
/// is written otherwise than the original.
fn class_escape(chars: &[char], at: usize) -> Result<(Atom, usize, bool), String> {
    if let Some((point, next)) = unicode_escape(chars, at) {
        return match char::from_u32(point) {
            Some(c) if point > 0xFFFF => Ok((Atom::Char(c.to_string()), next, true)),
            Some(_) => Ok((Atom::Char(chars[at..next].iter().collect()), next, false)),
            None => Err(lone_surrogate(point)),
        };
    }
    let Some(&c) = chars.get(at + 1) else {
        return Ok((Atom::Char("\\".into()), at + 1, false));
    };
    let text: String = chars[at..at + 2].iter().collect();
    Ok(match c {
        'd' | 'D' | 'w' | 'W' | 's' | 'S' => (Atom::Set(text), at + 2, false),
        'p' | 'P' if chars.get(at + 2) == Some(&'{') => {
            let close = chars[at..]
                .iter()
                .position(|&c| c == '}')
                .map_or(chars.len(), |p| at + p + 1);
            (Atom::Set(chars[at..close].iter().collect()), close, false)
        }
        // Backspace, in a class only.
        'b' => (Atom::Char("\\x08".into()), at + 2, true),
        _ => (Atom::Char(text), at + 2, false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, text: &str) -> bool {
        let schema = json!({"type": "string", "pattern": pattern});
        jsonschema::draft202012::new(&schema)
            .expect("compiles")
            .is_valid(&json!(text))
    }

    #[test]
    fn patterns_the_validator_reads_as_ecma_does_are_kept_as_written() {
        for pattern in [
            "^[a-zA-Z0-9._-]+$",
            r"^[A-Za-z0-9.\-_]+$",
            r"^\d+\.\d+$",
            r"^\u0041+$",
            "^refs/(heads|tags|pull)/.*$",
            "(?<=a)b",
        ] {
            assert!(
                matches!(publishable(pattern), Ok(Cow::Borrowed(p)) if p == pattern),
                "{pattern}: {:?}",
                publishable(pattern)
            );
        }
    }

    #[test]
    fn a_dash_beside_a_class_escape_is_itself() {
        for (pattern, published) in [
            (r"^[\w-.+]+$", r"^[\w\-.+]+$"),
            (r"^[a-\d]+$", r"^[a\-\d]+$"),
            (r"^[\s-z]$", r"^[\s\-z]$"),
            (r"^[a-c-e]$", r"^[a-c\-e]$"),
        ] {
            assert_eq!(publishable(pattern).as_deref(), Ok(published));
        }
        let pattern = publishable(r"^[\w-.+]+$").expect("publishable");
        for (text, valid) in [("a-b.c+d_9", true), ("a b", false), ("a,b", false)] {
            assert_eq!(matches(&pattern, text), valid, "{text}");
        }
        let pattern = publishable(r"^[a-\d]+$").expect("publishable");
        for (text, valid) in [("a-7", true), ("b", false), ("c", false)] {
            assert_eq!(matches(&pattern, text), valid, "{text}");
        }
    }

    #[test]
    fn surrogate_pairs_become_their_characters_and_lone_halves_are_refused() {
        assert_eq!(publishable(r"^\uD83D\uDE00$").as_deref(), Ok("^😀$"));
        let range = publishable(r"^[\uD83D\uDE00-\uD83D\uDE4F]+$").expect("publishable");
        assert_eq!(range, "^[😀-🙏]+$");
        assert!(matches(&range, "😀🙂") && !matches(&range, "😀a"));
        for pattern in [
            r"^[\uD800\uDBFF-\uDC00\uDFFF]*$",
            r"\uD800",
            r"[\uDC00-\uDFFF]",
        ] {
            let problem = publishable(pattern).expect_err(pattern);
            assert!(problem.contains("surrogate"), "{problem}");
        }
    }

    #[test]
    fn empty_classes_and_backspace_keep_their_ecma_meaning() {
        assert_eq!(publishable("^[^]$").as_deref(), Ok(r"^[\s\S]$"));
        assert_eq!(publishable("^a[]$").as_deref(), Ok(r"^a[^\s\S]$"));
        assert_eq!(publishable(r"^[\b]$").as_deref(), Ok(r"^[\x08]$"));
        assert!(matches(r"^[\s\S]$", "\n") && !matches(r"^a[^\s\S]$", "a"));
        assert!(matches(r"^[\x08]$", "\u{8}"));
    }

    #[test]
    fn what_cannot_compile_is_refused_with_the_reason() {
        for pattern in ["^(unclosed", "[a-", "a{2,1}"] {
            assert!(publishable(pattern).is_err(), "{pattern}");
        }
    }
}
