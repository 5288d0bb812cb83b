//! Plain text tables: a header row, left-aligned columns two spaces apart,
//! no trailing blanks, so that `awk '{print $3}'` and `grep` work on them.

/// A table being built.
pub struct Table {
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column headers.
    pub fn new(headers: &[&str]) -> Table {
        Table {
            rows: vec![headers.iter().map(|h| h.to_string()).collect()],
        }
    }

    /// Adds a row (missing cells are empty).
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// The table as text, one line per row, each ending with a newline.
    pub fn render(&self) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; columns];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in &self.rows {
            let mut line = String::new();
            for (i, cell) in row.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                line.push_str(cell);
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
    fn aligns_columns() {
        let mut t = Table::new(&["UNIT", "STATE", "PID"]);
        t.row(vec!["maddy".into(), "running".into(), "123".into()]);
        t.row(vec!["a".into(), "failed".into(), "".into()]);
        assert_eq!(
            t.render(),
            "UNIT   STATE    PID\n\
             maddy  running  123\n\
             a      failed\n"
        );
    }

    #[test]
    fn counts_characters_not_bytes() {
        let mut t = Table::new(&["A", "B"]);
        t.row(vec!["é".into(), "x".into()]);
        assert_eq!(t.render(), "A  B\né  x\n");
    }
}
