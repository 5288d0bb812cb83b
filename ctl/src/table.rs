//! Plain text tables: a header row, left-aligned columns two spaces apart,
//! no trailing blanks, so that `awk '{print $3}'` and `grep` work on them.
//!
//! On a terminal, cells may be coloured (SGR codes around the text, the
//! padding outside them, so that columns stay aligned); the header is bold.

use flotilla_units::state::UnitState;

/// A table being built.
pub struct Table {
    rows: Vec<Vec<String>>,
    colors: Vec<Vec<Option<&'static str>>>,
}

/// The SGR colour of a state: active green, on the way yellow, failed red,
/// disabled dim.
pub fn state_color(state: UnitState) -> &'static str {
    match state {
        UnitState::Running | UnitState::Reloading | UnitState::Exited => "32",
        UnitState::Waiting | UnitState::Starting | UnitState::Stopping => "33",
        UnitState::Failed => "1;31",
        UnitState::Disabled => "2",
    }
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            rows: vec![headers.iter().map(|h| h.to_string()).collect()],
            colors: vec![vec![Some("1"); headers.len()]],
        }
    }

    /// Adds a row (missing cells are empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.colors.push(vec![None; cells.len()]);
        self.rows.push(cells);
    }

    /// Colours cell `column` of the last row with an SGR code (e.g. `31`).
    pub fn color_last(&mut self, column: usize, sgr: &'static str) {
        if let Some(cell) = self.colors.last_mut().and_then(|r| r.get_mut(column)) {
            *cell = Some(sgr);
        }
    }

    /// The table as text, one line per row, each ending with a newline;
    /// coloured when `color`.
    pub fn render(&self, color: bool) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for (row, colors) in self.rows.iter().zip(&self.colors) {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                match colors
                    .get(i)
                    .copied()
                    .flatten()
                    .filter(|_| color && !cell.is_empty())
                {
                    Some(sgr) => line.push_str(&format!("\x1b[{sgr}m{cell}\x1b[0m")),
                    None => line.push_str(cell),
                }
                if i + 1 < row.len() {
                    let pad = widths[i] - cell.chars().count();
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_keep_columns_aligned() {
        let mut t = Table::new(&["A", "STATE", "B"]);
        t.row(vec!["x".into(), "failed".into(), "1".into()]);
        t.color_last(1, state_color(UnitState::Failed));
        assert_eq!(
            t.render(true),
            "\x1b[1mA\x1b[0m  \x1b[1mSTATE\x1b[0m   \x1b[1mB\x1b[0m\n\
             x  \x1b[1;31mfailed\x1b[0m  1\n"
        );
    }

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["UNIT", "STATE", "PID"]);
        t.row(vec!["maddy".into(), "running".into(), "123".into()]);
        t.row(vec!["a".into(), "failed".into(), "".into()]);
        assert_eq!(
            t.render(false),
            "UNIT   STATE    PID\n\
             maddy  running  123\n\
             a      failed\n"
        );
    }

    #[test]
    fn counts_characters_not_bytes() {
        let mut t = Table::new(&["A", "B"]);
        t.row(vec!["é".into(), "x".into()]);
        assert_eq!(t.render(false), "A  B\né  x\n");
    }
}
