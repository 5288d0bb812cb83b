//! systemd's word syntax, shared by command lines and `Environment=`
//! (`crate::exec`) and by the values that take C escapes alone
//! (`StandardInputText=`, `SetCredential=`): words separated by
//! whitespace, `"…"` and `'…'` quoting anywhere in a word, C's backslash
//! escapes (`\n`, `\t`, `\\`, `\"`, `\'`, `\s` for a space, `\xHH`, `\NNN`
//! octal, `\uHHHH`, `\UHHHHHHHH`), a backslash before whitespace keeping
//! it, and in command lines a lone `;` between commands (`\;` a word).

pub(crate) enum Tok {
    Word(String),
    Sep,
}

pub(crate) fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

pub(crate) struct Lexer {
    pub(crate) chars: Vec<char>,
    pub(crate) i: usize,
    /// An invalid escape is kept as written (the backslash and the
    /// character after it) rather than an error: systemd's
    /// `EXTRACT_CUNESCAPE_RELAX`, which its command lines fall back to.
    pub(crate) relax: bool,
}

impl Lexer {
    pub(crate) fn new(s: &str) -> Lexer {
        Lexer {
            chars: s.chars().collect(),
            i: 0,
            relax: false,
        }
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    pub(crate) fn skip_ws(&mut self) {
        while self.peek().is_some_and(is_ws) {
            self.i += 1;
        }
    }

    fn ends_word_at(&self, j: usize) -> bool {
        self.chars.get(j).is_none_or(|&c| is_ws(c))
    }

    pub(crate) fn next_token(&mut self, separators: bool) -> Result<Option<Tok>, String> {
        self.skip_ws();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        if separators {
            if c == ';' && self.ends_word_at(self.i + 1) {
                self.i += 1;
                return Ok(Some(Tok::Sep));
            }
            if c == '\\'
                && self.chars.get(self.i + 1) == Some(&';')
                && self.ends_word_at(self.i + 2)
            {
                self.i += 2;
                return Ok(Some(Tok::Word(";".to_string())));
            }
        }
        let mut word = String::new();
        let mut quote: Option<char> = None;
        loop {
            let Some(c) = self.peek() else {
                if quote.is_some() {
                    return Err("unterminated quote".to_string());
                }
                break;
            };
            match quote {
                None if is_ws(c) => break,
                None if c == '"' || c == '\'' => {
                    quote = Some(c);
                    self.i += 1;
                    continue;
                }
                Some(q) if c == q => {
                    quote = None;
                    self.i += 1;
                    continue;
                }
                _ => {}
            }
            self.i += 1;
            if c != '\\' {
                word.push(c);
                continue;
            }
            let at = self.i;
            match self.unescape() {
                Ok(e) => word.push(e),
                Err(_) if self.relax && (quote.is_none() || at < self.chars.len()) => {
                    self.i = at;
                    word.push('\\');
                    if let Some(next) = self.peek() {
                        word.push(next);
                        self.i += 1;
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Some(Tok::Word(word)))
    }

    /// The character of the escape after a backslash (already consumed).
    pub(crate) fn unescape(&mut self) -> Result<char, String> {
        let Some(c) = self.peek() else {
            return Err("trailing backslash".to_string());
        };
        self.i += 1;
        let simple = match c {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            's' => Some(' '),
            '\\' | '"' | '\'' => Some(c),
            c if is_ws(c) => Some(c),
            _ => None,
        };
        if let Some(s) = simple {
            return Ok(s);
        }
        let (radix, digits) = match c {
            'x' => (16, 2),
            'u' => (16, 4),
            'U' => (16, 8),
            '0'..='7' => {
                self.i -= 1;
                (8, 3)
            }
            _ => return Err(format!("invalid escape \\{c}")),
        };
        let start = self.i;
        let mut v: u32 = 0;
        for _ in 0..digits {
            let d = self.peek().and_then(|d| d.to_digit(radix));
            let Some(d) = d else {
                let got: String = self.chars[start - usize::from(radix == 16)..self.i]
                    .iter()
                    .collect();
                return Err(format!("invalid escape \\{got}"));
            };
            v = v * radix + d;
            self.i += 1;
        }
        if v == 0 {
            return Err("a NUL character (\\0) is not allowed".to_string());
        }
        if radix == 8 && v > 0o377 {
            return Err(format!("invalid octal escape \\{v:o}"));
        }
        char::from_u32(v).ok_or_else(|| format!("invalid character escape U+{v:X}"))
    }
}

/// `s` with its C escapes resolved (`\n`, `\t`, `\xHH`, `\NNN`, … as in
/// command lines; no quotes, no word splitting): `StandardInputText=`.
pub fn c_unescape(s: &str) -> Result<String, String> {
    let mut lx = Lexer::new(s);
    let mut out = String::with_capacity(s.len());
    while let Some(c) = lx.peek() {
        lx.i += 1;
        if c == '\\' {
            out.push(lx.unescape()?);
        } else {
            out.push(c);
        }
    }
    Ok(out)
}
