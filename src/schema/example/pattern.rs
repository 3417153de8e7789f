//! `pattern`s: whether a text matches one (the `regex` crate, compiled patterns kept per
//! thread), and a tiny generator of matching strings for the regular expressions found in
//! API specs: literals, classes, groups, alternation, quantifiers and anchors. Lookarounds
//! are skipped and backreferences produce nothing; the caller checks what comes out.

use std::cell::RefCell;

use regex::Regex;
use rustc_hash::FxHashMap;

/// Compiled patterns kept per thread (and compiled formats, in [`super::format`]).
pub(super) const REGEX_CACHE: usize = 4_096;

thread_local! {
    static REGEXES: RefCell<FxHashMap<String, Option<Regex>>> = RefCell::new(FxHashMap::default());
}

/// Whether `text` matches `pattern` (unanchored), `None` when the `regex` crate cannot
/// compile it.
pub(super) fn pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    REGEXES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(compiled) = cache.get(pattern) {
            return compiled.as_ref().map(|re| re.is_match(text));
        }
        if cache.len() >= REGEX_CACHE {
            cache.clear();
        }
        let compiled = regex::RegexBuilder::new(pattern)
            .size_limit(1 << 22)
            .build()
            .ok();
        let result = compiled.as_ref().map(|re| re.is_match(text));
        cache.insert(pattern.to_string(), compiled);
        result
    })
}

const MAX_PATTERN: usize = 2_000;
const MAX_NESTING: usize = 48;
const MAX_OUTPUT: usize = 20_000;
const MAX_WORK: usize = 100_000;
const PREFERRED: &str = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const WORD: &[(char, char)] = &[('a', 'z'), ('A', 'Z'), ('0', '9'), ('_', '_')];
const SPACE: &[(char, char)] = &[(' ', ' '), ('\t', '\r')];

#[derive(Debug)]
enum Node {
    Char(char),
    /// A class, as the characters to render it with.
    Set(Vec<char>),
    Any,
    Seq(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
    Assert,
}

enum Escape {
    Char(char),
    Set(Vec<(char, char)>, bool),
    Assert,
    Empty,
}

/// A parsed pattern, rendered on demand.
pub(super) struct Pattern {
    node: Node,
}

impl Pattern {
    pub(super) fn parse(pattern: &str) -> Option<Pattern> {
        parse(pattern).map(|node| Pattern { node })
    }

    /// Strings that should match, the most natural first: for each of three variants,
    /// quantifiers stretched further and further (toward `min_len`), then the first
    /// one padded on either side (for unanchored patterns).
    pub(super) fn texts(&self, min_len: usize, variant: u32) -> impl Iterator<Item = String> {
        let stretch_min = u32::try_from(min_len).unwrap_or(u32::MAX);
        let first = self.render(0, variant);
        let padded = first
            .filter(|text| text.chars().count() < min_len && min_len <= MAX_OUTPUT)
            .map(|text| {
                let pad = "a".repeat(min_len - text.chars().count());
                [format!("{text}{pad}"), format!("{pad}{text}")]
            })
            .into_iter()
            .flatten();
        (variant..variant.saturating_add(3))
            .flat_map(move |v| {
                [0, 1, 2, 4, 8, 16, stretch_min, 64]
                    .into_iter()
                    .map(move |stretch| (stretch, v))
            })
            .filter_map(|(stretch, v)| self.render(stretch, v))
            .chain(padded)
    }

    fn render(&self, stretch: u32, variant: u32) -> Option<String> {
        render(&self.node, stretch, variant)
    }
}

/// Distinct strings that should match `pattern`, those within the length bounds first.
pub(super) fn candidates(
    pattern: &str,
    min_len: usize,
    max_len: usize,
    variant: u32,
) -> Vec<String> {
    let Some(parsed) = Pattern::parse(pattern) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for text in parsed.texts(min_len, variant) {
        if !out.contains(&text) {
            out.push(text);
        }
    }
    out.sort_by_key(|text| {
        let len = text.chars().count();
        !(min_len <= len && len <= max_len)
    });
    out
}

fn parse(pattern: &str) -> Option<Node> {
    if pattern.len() > MAX_PATTERN {
        return None;
    }
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        nesting: 0,
    };
    let node = parser.alternation()?;
    (parser.pos == parser.chars.len()).then_some(node)
}

fn render(node: &Node, stretch: u32, variant: u32) -> Option<String> {
    let mut out = String::new();
    let mut budget = MAX_WORK;
    write(node, stretch, variant, &mut out, &mut budget)?;
    Some(out)
}

/// Appends a rendering of `node`; `None` once the output or the work (`budget`, which
/// nested repetitions of nothing, like `(()*)*`, consume without output) runs out.
fn write(
    node: &Node,
    stretch: u32,
    variant: u32,
    out: &mut String,
    budget: &mut usize,
) -> Option<()> {
    *budget = budget.checked_sub(1)?;
    if out.len() > MAX_OUTPUT {
        return None;
    }
    match node {
        Node::Char(c) => out.push(*c),
        Node::Set(choices) => out.push(*choices.get(variant as usize % choices.len().max(1))?),
        Node::Any => out.push(PREFERRED.chars().nth(variant as usize % 26)?),
        Node::Seq(items) => {
            for item in items {
                write(item, stretch, variant, out, budget)?;
            }
        }
        Node::Alt(alternatives) => {
            let chosen = alternatives.get(variant as usize % alternatives.len().max(1))?;
            write(chosen, stretch, variant, out, budget)?;
        }
        Node::Repeat(inner, min, max) => {
            let wanted = min.saturating_add(stretch);
            let times = max.map_or(wanted, |max| wanted.min(max)).max(*min);
            for _ in 0..times {
                write(inner, stretch, variant, out, budget)?;
            }
        }
        Node::Assert => {}
    }
    Some(())
}

/// The characters a class is rendered with, the most natural first: letters and
/// digits it contains (or, negated, does not contain), else its ranges' first ones.
fn choices(ranges: &[(char, char)], negated: bool) -> Vec<char> {
    let inside = |c: char| ranges.iter().any(|&(a, b)| a <= c && c <= b);
    if negated {
        return PREFERRED
            .chars()
            .chain(['-', '_', '.', ' ', '!', '~'])
            .filter(|&c| !inside(c))
            .collect();
    }
    let preferred: Vec<char> = PREFERRED.chars().filter(|&c| inside(c)).collect();
    if !preferred.is_empty() {
        return preferred;
    }
    ranges.iter().map(|&(start, _)| start).collect()
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    nesting: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn alternation(&mut self) -> Option<Node> {
        self.nesting += 1;
        if self.nesting > MAX_NESTING {
            return None;
        }
        let mut alternatives = vec![self.sequence()?];
        while self.eat('|') {
            alternatives.push(self.sequence()?);
        }
        self.nesting -= 1;
        Some(if alternatives.len() == 1 {
            alternatives.pop()?
        } else {
            Node::Alt(alternatives)
        })
    }

    fn sequence(&mut self) -> Option<Node> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            items.push(self.quantified(atom));
        }
        Some(Node::Seq(items))
    }

    fn quantified(&mut self, mut atom: Node) -> Node {
        loop {
            let (min, max) = match self.peek() {
                Some('*') => {
                    self.pos += 1;
                    (0, None)
                }
                Some('+') => {
                    self.pos += 1;
                    (1, None)
                }
                Some('?') => {
                    self.pos += 1;
                    (0, Some(1))
                }
                Some('{') => match self.braces() {
                    Some(bounds) => bounds,
                    None => return atom,
                },
                _ => return atom,
            };
            // Lazy and possessive forms generate the same strings.
            if matches!(self.peek(), Some('?' | '+')) {
                self.pos += 1;
            }
            atom = Node::Repeat(Box::new(atom), min, max);
        }
    }

    /// `{n}`, `{n,}`, `{n,m}`; `None` (and nothing consumed) for a literal brace.
    fn braces(&mut self) -> Option<(u32, Option<u32>)> {
        let start = self.pos;
        self.pos += 1;
        let result = (|| {
            let min = self.digits()?;
            if self.eat('}') {
                return Some((min, Some(min)));
            }
            if !self.eat(',') {
                return None;
            }
            if self.eat('}') {
                return Some((min, None));
            }
            let max = self.digits()?;
            self.eat('}').then_some((min, Some(max)))
        })();
        if result.is_none() {
            self.pos = start;
        }
        result
    }

    fn digits(&mut self) -> Option<u32> {
        let mut value: Option<u32> = None;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            value = Some(value.unwrap_or(0).saturating_mul(10).saturating_add(d));
        }
        value.map(|v| v.min(10_000))
    }

    fn atom(&mut self) -> Option<Node> {
        Some(match self.bump()? {
            '(' => self.group()?,
            '[' => self.class()?,
            '.' => Node::Any,
            '^' | '$' => Node::Assert,
            '\\' => match self.escape(false)? {
                Escape::Char(c) => Node::Char(c),
                Escape::Set(ranges, negated) => Node::Set(choices(&ranges, negated)),
                Escape::Assert => Node::Assert,
                Escape::Empty => Node::Seq(Vec::new()),
            },
            other => Node::Char(other),
        })
    }

    fn group(&mut self) -> Option<Node> {
        let mut assertion = false;
        if self.eat('?') {
            match self.bump()? {
                ':' => {}
                '=' | '!' => assertion = true,
                '<' => {
                    if self.eat('=') || self.eat('!') {
                        assertion = true;
                    } else {
                        self.skip_past('>')?;
                    }
                }
                'P' if self.eat('<') => self.skip_past('>')?,
                _ => {
                    // Flags: `(?i)`, `(?i:…)`, `(?-s)`.
                    self.pos -= 1;
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphabetic() || c == '-')
                    {
                        self.pos += 1;
                    }
                    if self.eat(')') {
                        return Some(Node::Seq(Vec::new()));
                    }
                    if !self.eat(':') {
                        return None;
                    }
                }
            }
        }
        let inner = self.alternation()?;
        if !self.eat(')') {
            return None;
        }
        Some(if assertion { Node::Assert } else { inner })
    }

    fn skip_past(&mut self, end: char) -> Option<()> {
        while self.bump()? != end {}
        Some(())
    }

    fn class(&mut self) -> Option<Node> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let c = self.bump()?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let start = match c {
                '\\' => match self.escape(true)? {
                    Escape::Char(c) => c,
                    Escape::Set(set, false) => {
                        ranges.extend(set);
                        continue;
                    }
                    Escape::Set(set, true) => {
                        ranges.extend(complement_sample(&set));
                        continue;
                    }
                    Escape::Assert | Escape::Empty => continue,
                },
                '[' if self.peek() == Some(':') => {
                    let begin = self.pos + 1;
                    let mut name = String::new();
                    self.pos = begin;
                    while let Some(c) = self.bump() {
                        if c == ':' && self.eat(']') {
                            break;
                        }
                        name.push(c);
                    }
                    ranges.extend(posix_class(&name));
                    continue;
                }
                other => other,
            };
            let is_range =
                self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']');
            if !is_range {
                ranges.push((start, start));
                continue;
            }
            self.pos += 1;
            let end = match self.bump()? {
                '\\' => match self.escape(true)? {
                    Escape::Char(c) => c,
                    Escape::Set(set, _) => {
                        ranges.push((start, start));
                        ranges.push(('-', '-'));
                        ranges.extend(set);
                        continue;
                    }
                    Escape::Assert | Escape::Empty => continue,
                },
                other => other,
            };
            if end < start {
                return None;
            }
            ranges.push((start, end));
        }
        Some(Node::Set(choices(&ranges, negated)))
    }

    fn escape(&mut self, in_class: bool) -> Option<Escape> {
        let c = self.bump()?;
        Some(match c {
            'd' => Escape::Set(vec![('0', '9')], false),
            'D' => Escape::Set(vec![('0', '9')], true),
            'w' => Escape::Set(WORD.to_vec(), false),
            'W' => Escape::Set(WORD.to_vec(), true),
            's' => Escape::Set(SPACE.to_vec(), false),
            'S' => Escape::Set(SPACE.to_vec(), true),
            'b' if in_class => Escape::Char('\u{8}'),
            'b' | 'B' | 'A' | 'z' | 'Z' | 'G' => Escape::Assert,
            'n' => Escape::Char('\n'),
            't' => Escape::Char('\t'),
            'r' => Escape::Char('\r'),
            'f' => Escape::Char('\u{c}'),
            'v' => Escape::Char('\u{b}'),
            '0' => Escape::Char('\0'),
            'x' => Escape::Char(self.hex(2)?),
            'u' => Escape::Char(self.hex(4)?),
            'c' => Escape::Char(char::from_u32(self.bump()? as u32 % 32)?),
            'p' | 'P' => {
                let name = if self.eat('{') {
                    let mut name = String::new();
                    loop {
                        match self.bump()? {
                            '}' => break,
                            c => name.push(c),
                        }
                    }
                    name
                } else {
                    self.bump()?.to_string()
                };
                Escape::Set(property_sample(&name), c == 'P')
            }
            '1'..='9' => Escape::Empty,
            'k' => {
                if self.eat('<') {
                    self.skip_past('>')?;
                }
                Escape::Empty
            }
            other => Escape::Char(other),
        })
    }

    fn hex(&mut self, digits: usize) -> Option<char> {
        let mut value: u32 = 0;
        if self.eat('{') {
            loop {
                match self.bump()? {
                    '}' => break,
                    c => value = value.checked_mul(16)?.checked_add(c.to_digit(16)?)?,
                }
            }
        } else {
            for _ in 0..digits {
                value = value * 16 + self.bump()?.to_digit(16)?;
            }
        }
        char::from_u32(value)
    }
}

/// A few characters outside `set`, standing for a negated shorthand inside a class.
fn complement_sample(set: &[(char, char)]) -> Vec<(char, char)> {
    let inside = |c: char| set.iter().any(|&(a, b)| a <= c && c <= b);
    PREFERRED
        .chars()
        .chain(['-', ' ', '.', '!'])
        .filter(|&c| !inside(c))
        .take(8)
        .map(|c| (c, c))
        .collect()
}

fn posix_class(name: &str) -> Vec<(char, char)> {
    match name {
        "alpha" => vec![('a', 'z'), ('A', 'Z')],
        "digit" => vec![('0', '9')],
        "alnum" => vec![('a', 'z'), ('A', 'Z'), ('0', '9')],
        "upper" => vec![('A', 'Z')],
        "lower" => vec![('a', 'z')],
        "space" => SPACE.to_vec(),
        "xdigit" => vec![('0', '9'), ('a', 'f'), ('A', 'F')],
        "word" => WORD.to_vec(),
        "punct" => vec![('!', '/')],
        _ => vec![('a', 'z')],
    }
}

/// Characters standing for a Unicode property class (`\p{L}`, `\p{Nd}`…).
fn property_sample(name: &str) -> Vec<(char, char)> {
    let name = name.split(['=', ':']).next_back().unwrap_or(name);
    match name {
        "Lu" | "Uppercase_Letter" | "Uppercase" | "Upper" => vec![('A', 'Z')],
        n if n.starts_with('L') || n.starts_with("Alpha") || n == "Latin" => {
            vec![('a', 'z'), ('A', 'Z')]
        }
        n if n.starts_with('N') || n == "Digit" => vec![('0', '9')],
        n if n.starts_with('P') => vec![('.', '.'), ('-', '-')],
        n if n.starts_with('Z') || n == "White_Space" => vec![(' ', ' ')],
        n if n.starts_with('S') => vec![('+', '+'), ('$', '$')],
        _ => vec![('a', 'z')],
    }
}
