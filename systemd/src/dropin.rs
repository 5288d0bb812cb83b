//! A unit file merged with its drop-ins (`NAME.d/*.conf`, found by
//! [`super::resolve_unit`]): the options of every file in the order they
//! apply, each remembering its file and line (for `initctl cat`, `show` and
//! diagnostics), the effective values of a key after systemd's empty
//! assignment reset, the unit they make together (every problem in its own
//! file), and `systemctl cat`'s text.

use super::parse::parse_checked;
use flotilla_units::diag::{Diagnostic, Joined, Pos};
use flotilla_units::fleet::UnitOption;
use flotilla_units::load::ParsedUnit;

/// One option and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourcedOption {
    /// The option.
    pub option: UnitOption,
    /// The index of its file in [`MergedUnit::files`] (0 = the unit file).
    pub file: usize,
    /// Its line and column in that file.
    pub pos: Pos,
}

/// A unit file and its drop-ins, merged.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct MergedUnit {
    /// The unit file's path, then each drop-in's, in the order applied.
    pub files: Vec<String>,
    /// Every option of every file, in the order applied.
    pub options: Vec<SourcedOption>,
    /// The parser's diagnostics, each with its own file.
    pub diagnostics: Vec<Diagnostic>,
    /// The files as one, for the translator's positions.
    joined: Joined,
}

impl MergedUnit {
    /// Merges `(path, text)` of the unit file and of its drop-ins (in the
    /// order [`super::resolve_unit`] gives them).
    pub fn merge(unit: (&str, &str), dropins: &[(&str, &str)]) -> MergedUnit {
        let mut m = MergedUnit::default();
        for (i, (path, text)) in std::iter::once(&unit).chain(dropins).enumerate() {
            let (file, diags) = parse_checked(path, text);
            m.joined.push(path, text);
            m.files.push(path.to_string());
            m.diagnostics.extend(diags);
            for (j, option) in file.options.iter().enumerate() {
                m.options.push(SourcedOption {
                    option: option.clone(),
                    file: i,
                    pos: file.pos(j),
                });
            }
        }
        m
    }

    /// The options as one option list (positions dropped, since they
    /// belong to several files).
    pub fn unit_options(&self) -> Vec<UnitOption> {
        self.options.iter().map(|o| o.option.clone()).collect()
    }

    /// The assignments of `name` in `section` that are in effect: those
    /// after its last empty assignment (which resets a list, e.g.
    /// `ExecStart=` before a new `ExecStart=…` in an override). For a
    /// single-valued key the last one wins.
    pub fn effective(&self, section: &str, name: &str) -> Vec<&SourcedOption> {
        let all: Vec<&SourcedOption> = self
            .options
            .iter()
            .filter(|o| o.option.section == section && o.option.name == name)
            .collect();
        match all.iter().rposition(|o| o.option.value.trim().is_empty()) {
            Some(i) => all[i + 1..].to_vec(),
            None => all,
        }
    }

    /// The unit `unit_name` these files make (systemd reads a drop-in's
    /// options after the unit file's, so the translator gets them all in
    /// order): every problem, of parsing or translating, in the file and
    /// at the line it is about; no spec when any is an error. The unit's
    /// origin is the unit file; a dependency given in a drop-in has no
    /// position there.
    pub fn translate(&self, unit_name: &str) -> ParsedUnit {
        self.translate_with(
            &flotilla_units::specifier::SpecifierContext::system(""),
            unit_name,
        )
    }

    /// [`MergedUnit::translate`] with the machine's facts for the
    /// specifiers (`%H`, `%m`, `%b`, `%t` …; the unit's own are set here).
    pub fn translate_with(
        &self,
        facts: &flotilla_units::specifier::SpecifierContext,
        unit_name: &str,
    ) -> ParsedUnit {
        let unit_file = self.files.first().map_or("", String::as_str);
        let positions: Vec<Pos> = self
            .options
            .iter()
            .map(|o| Joined::shift(self.joined.base(o.file), o.pos))
            .collect();
        let mut parsed = super::translate::translate_at(
            facts,
            unit_file,
            unit_name,
            &self.unit_options(),
            &positions,
            Pos::new(1, 1),
        );
        let mut diags: Vec<(usize, Diagnostic)> = self
            .diagnostics
            .iter()
            .map(|d| (self.file_index(&d.file), d.clone()))
            .collect();
        for d in parsed.diagnostics.drain(..) {
            let d = self.joined.place(d);
            diags.push((self.file_index(&d.file), d));
        }
        diags.sort_by_key(|(i, d)| (*i, d.pos));
        parsed.diagnostics = diags.into_iter().map(|(_, d)| d).collect();
        if parsed.diagnostics.iter().any(Diagnostic::is_error) {
            parsed.spec = None;
        }
        parsed.origin.keep_positions_below(self.joined.base(1));
        parsed
    }

    fn file_index(&self, file: &str) -> usize {
        self.files.iter().position(|f| f == file).unwrap_or(0)
    }

    /// Where an option came from, as `FILE:LINE`.
    pub fn origin(&self, o: &SourcedOption) -> String {
        let file = self.files.get(o.file).map_or("?", String::as_str);
        format!("{file}:{}", o.pos.line)
    }
}

/// `systemctl cat`'s text for files given as `(path, text)`: each under a
/// `# PATH` line, a blank line before every file but the first.
///
/// ```
/// use flotilla_systemd::cat_text;
/// let t = cat_text(&[("/lib/a.service", "[Service]\nExecStart=/bin/a\n"), ("/etc/a.service.d/o.conf", "[Service]\nNice=5\n")]);
/// assert_eq!(t, "# /lib/a.service\n[Service]\nExecStart=/bin/a\n\n# /etc/a.service.d/o.conf\n[Service]\nNice=5\n");
/// ```
pub fn cat_text(files: &[(&str, &str)]) -> String {
    let mut out = String::new();
    for (i, (path, text)) in files.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("# {path}\n{text}"));
        if !text.is_empty() && !text.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_keep_their_files_and_empty_assignments_reset() {
        let m = MergedUnit::merge(
            ("/lib/systemd/system/nginx.service", "[Service]\nExecStart=/usr/sbin/nginx\nEnvironment=A=1\n"),
            &[(
                "/etc/systemd/system/nginx.service.d/override.conf",
                "[Service]\nExecStart=\nExecStart=/usr/sbin/nginx -g 'daemon off;'\nEnvironment=B=2\n",
            )],
        );
        let exec = m.effective("Service", "ExecStart");
        assert_eq!(exec.len(), 1);
        assert_eq!(exec[0].option.value, "/usr/sbin/nginx -g 'daemon off;'");
        assert_eq!(
            m.origin(exec[0]),
            "/etc/systemd/system/nginx.service.d/override.conf:3"
        );
        let env: Vec<&str> = m
            .effective("Service", "Environment")
            .iter()
            .map(|o| o.option.value.as_str())
            .collect();
        assert_eq!(env, ["A=1", "B=2"]);
        assert_eq!(m.unit_options().len(), 5);
        assert!(m.diagnostics.is_empty());
    }

    #[test]
    fn a_bad_dropin_is_reported_in_its_own_file() {
        let m = MergedUnit::merge(
            ("/lib/a.service", "[Service]\nExecStart=/bin/a\n"),
            &[("/etc/a.service.d/bad.conf", "[Service\nNice=5\n")],
        );
        assert_eq!(m.diagnostics.len(), 1);
        assert_eq!(
            m.diagnostics[0].to_string(),
            "/etc/a.service.d/bad.conf:1:1: unterminated section header (no ']')"
        );
    }
}
