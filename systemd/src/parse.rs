//! Reading unit-file text into options, with fleet's rules.
//!
//! fleet (v1.0) parsed unit files with go-systemd's `unit.Deserialize`. Its
//! rules, which decide the options and therefore the unit hash:
//!
//! - text before the first `[section]` line is ignored;
//! - blank lines are skipped; leading whitespace of a line is skipped;
//! - a line starting with `#` or `;` is a comment (a comment line ending in
//!   `\`, trailing spaces aside, swallows the next line too);
//! - `[Name]` starts a section (nothing but whitespace may follow the `]`);
//! - any other line is an option `Name=Value`, name and value trimmed; a
//!   line without `=` is skipped (fleet refused the whole file);
//! - a value whose line ends in `\` continues on the next line: the
//!   backslash and the newline stay in the value; a blank line ends the
//!   value and leaves one trailing newline in it;
//! - every option is kept, repeated names included, in file order.
//!
//! Where fleet refused the whole file this parser keeps going, and
//! [`parse_checked`] reports the problem instead.

use flotilla_units::diag::{Diagnostic, Pos};
use flotilla_units::fleet::UnitOption;

/// fleet and systemd refuse a line of this many bytes or more (systemd's
/// `LINE_MAX` of 2048 counts the newline).
pub const LINE_MAX: usize = 2048;

/// A parsed unit file: its options in file order, with their positions.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UnitFile {
    /// Every option, in file order, repeated names included.
    pub options: Vec<UnitOption>,
    /// The position of each option's name, parallel to `options` (line and
    /// column 1-based; empty when the options did not come from text).
    pub positions: Vec<Pos>,
}

impl UnitFile {
    /// A unit file from an option list without positions (e.g. from etcd).
    pub fn from_options(options: Vec<UnitOption>) -> UnitFile {
        UnitFile {
            options,
            positions: Vec::new(),
        }
    }

    /// The position of option `i` (unknown, line 0, when not recorded).
    pub fn pos(&self, i: usize) -> Pos {
        self.positions.get(i).copied().unwrap_or_default()
    }

    /// Every value of `name` in `section`, in order.
    pub fn values<'a>(
        &'a self,
        section: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = &'a str> + 'a {
        self.options
            .iter()
            .filter(move |o| o.section == section && o.name == name)
            .map(|o| o.value.as_str())
    }

    /// The last value of `name` in `section` (systemd's "the last one wins").
    pub fn last(&self, section: &str, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|o| o.section == section && o.name == name)
            .map(|o| o.value.as_str())
    }
}

/// Parses unit-file text with fleet's rules. Never fails: what fleet refused
/// is skipped or taken as well as it can be ([`parse_checked`] reports it).
///
/// ```
/// use flotilla_systemd::parse;
/// let u = parse("# web\n[Service]\nExecStart=/bin/sleep 100\n");
/// assert_eq!(u.options[0].section, "Service");
/// assert_eq!(u.options[0].name, "ExecStart");
/// assert_eq!(u.options[0].value, "/bin/sleep 100");
/// ```
pub fn parse(text: &str) -> UnitFile {
    parse_impl(text, None)
}

/// Parses like [`parse`] and also reports, with `FILE:LINE:COL`: lines of
/// [`LINE_MAX`] bytes or more (an error: fleet and systemd refuse them),
/// malformed section headers (errors), lines without `=` and options with an
/// empty name (warnings: skipped), and text before the first section (a
/// warning: ignored).
pub fn parse_checked(file: &str, text: &str) -> (UnitFile, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let unit = parse_impl(text, Some((file, &mut diags)));
    diags.sort_by_key(|d| d.pos);
    (unit, diags)
}

fn strip_cr(line: &str) -> &str {
    line.strip_suffix('\r').unwrap_or(line)
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

struct Sink<'a> {
    out: Option<(&'a str, &'a mut Vec<Diagnostic>)>,
}

impl Sink<'_> {
    fn warn(&mut self, line: usize, col: usize, msg: String) {
        if let Some((file, d)) = &mut self.out {
            d.push(Diagnostic::warning(
                *file,
                Pos::new(to_u32(line), to_u32(col)),
                msg,
            ));
        }
    }
    fn error(&mut self, line: usize, col: usize, msg: String) {
        if let Some((file, d)) = &mut self.out {
            d.push(Diagnostic::error(
                *file,
                Pos::new(to_u32(line), to_u32(col)),
                msg,
            ));
        }
    }
}

fn parse_impl(text: &str, out: Option<(&str, &mut Vec<Diagnostic>)>) -> UnitFile {
    let mut sink = Sink { out };
    let lines: Vec<&str> = text.split('\n').map(strip_cr).collect();
    for (i, l) in lines.iter().enumerate() {
        if l.len() >= LINE_MAX {
            sink.error(
                i + 1,
                1,
                format!("line too long: {} bytes (fleet and systemd refuse lines of {LINE_MAX} bytes or more)", l.len()),
            );
        }
    }

    let mut unit = UnitFile::default();
    let mut section: Option<String> = None;
    let mut warned_before = false;
    let mut i = 0;
    while i < lines.len() {
        let raw = lines[i];
        let t = raw.trim_start();
        let col = raw[..raw.len() - t.len()].chars().count() + 1;
        let lineno = i + 1;
        let Some(first) = t.chars().next() else {
            i += 1;
            continue;
        };
        if first == '#' || first == ';' {
            // go-systemd: a comment ending in `\` swallows the next line.
            while i < lines.len() && lines[i].trim_end_matches(' ').ends_with('\\') {
                i += 1;
            }
            i += 1;
            continue;
        }
        if first == '[' {
            let name = match t.find(']') {
                Some(j) => {
                    let name = &t[1..j];
                    let rest = t[j + 1..].trim();
                    if !rest.is_empty() {
                        sink.error(
                            lineno,
                            col,
                            format!("text after the section header [{name}]: {rest:?}"),
                        );
                    }
                    name.to_string()
                }
                None => {
                    sink.error(
                        lineno,
                        col,
                        "unterminated section header (no ']')".to_string(),
                    );
                    t[1..].trim_end().to_string()
                }
            };
            section = Some(name);
            i += 1;
            continue;
        }
        let Some(sec) = &section else {
            if !warned_before {
                sink.warn(
                    lineno,
                    col,
                    "text before the first [section] is ignored".to_string(),
                );
                warned_before = true;
            }
            i += 1;
            continue;
        };
        let Some(eq) = t.find('=') else {
            sink.warn(lineno, col, "missing '=', line ignored".to_string());
            i += 1;
            continue;
        };
        let name = t[..eq].trim();
        if name.is_empty() {
            sink.warn(lineno, col, "option without a name".to_string());
        }
        // The value, with go-systemd's continuation rules.
        let mut partial = String::new();
        let mut seg = &t[eq + 1..];
        let mut cur = i;
        loop {
            let eof = cur + 1 == lines.len();
            if seg.trim().is_empty() {
                // A blank line ends the value (and is consumed).
                break;
            }
            if !seg.ends_with('\\') {
                partial.push_str(seg);
                break;
            }
            partial.push_str(seg);
            if eof {
                break;
            }
            partial.push('\n');
            cur += 1;
            seg = lines[cur];
        }
        let value = if partial.ends_with('\n') {
            format!("{}\n", partial.trim())
        } else {
            partial.trim().to_string()
        };
        unit.options.push(UnitOption {
            section: sec.clone(),
            name: name.to_string(),
            value,
        });
        unit.positions.push(Pos::new(to_u32(lineno), to_u32(col)));
        i = cur + 1;
    }
    unit
}
