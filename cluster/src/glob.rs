//! Glob matching for `Conflicts=` and `Replaces=` values, with the rules of
//! Go's `path.Match` that fleet used: `*` matches any run of characters but
//! `/`, `?` one character but `/`, `[...]` a class (`^` negates, `a-z`
//! ranges), `\` quotes the next character. A malformed pattern matches
//! nothing.

/// Whether `name` matches the glob `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n).unwrap_or(false)
}

/// `None` when the pattern is malformed.
fn match_from(p: &[char], n: &[char]) -> Option<bool> {
    let (mut pi, mut ni) = (0usize, 0usize);
    // Backtracking point for the last `*`: (pattern index after it, name index).
    let mut star: Option<(usize, usize)> = None;
    loop {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi + 1, ni));
                    pi += 1;
                    continue;
                }
                '?' if ni < n.len() && n[ni] != '/' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' if ni < n.len() => {
                    let (ok, next) = class(p, pi + 1, n[ni])?;
                    if ok {
                        pi = next;
                        ni += 1;
                        continue;
                    }
                }
                '\\' => {
                    let c = *p.get(pi + 1)?;
                    if ni < n.len() && n[ni] == c {
                        pi += 2;
                        ni += 1;
                        continue;
                    }
                }
                c if c != '?' && c != '[' && ni < n.len() && n[ni] == c => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        } else if ni == n.len() {
            return Some(true);
        }
        // Mismatch: let the last star eat one more character (never `/`).
        match star {
            Some((sp, sn)) if sn < n.len() && n[sn] != '/' => {
                star = Some((sp, sn + 1));
                pi = sp;
                ni = sn + 1;
            }
            _ => {
                // Check the rest of the pattern is well formed, as Go does.
                return well_formed(&p[pi.min(p.len())..]).then_some(false);
            }
        }
    }
}

/// Matches `c` against the class starting after `[` at `i`; returns whether
/// it matched and the index after `]`.
fn class(p: &[char], mut i: usize, c: char) -> Option<(bool, usize)> {
    let negate = matches!(p.get(i), Some('^'));
    if negate {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let ch = *p.get(i)?;
        if ch == ']' && !first {
            i += 1;
            break;
        }
        first = false;
        let lo = if ch == '\\' {
            i += 1;
            *p.get(i)?
        } else {
            ch
        };
        i += 1;
        let mut hi = lo;
        if p.get(i) == Some(&'-') && p.get(i + 1).is_some_and(|&x| x != ']') {
            i += 1;
            hi = if p[i] == '\\' {
                i += 1;
                *p.get(i)?
            } else {
                p[i]
            };
            i += 1;
        }
        if lo <= c && c <= hi {
            matched = true;
        }
    }
    Some((matched != negate, i))
}

fn well_formed(p: &[char]) -> bool {
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            '\\' => {
                if i + 1 >= p.len() {
                    return false;
                }
                i += 2;
            }
            '[' => match class(p, i + 1, '\0') {
                Some((_, next)) => i = next,
                None => return false,
            },
            _ => i += 1,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn table() {
        let cases = [
            ("foo.service", "foo.service", true),
            ("foo*", "foo.service", true),
            ("foo*", "bar.service", false),
            ("*.service", "a.service", true),
            ("web@*.service", "web@1.service", true),
            ("web@?.service", "web@12.service", false),
            ("web@[0-9].service", "web@7.service", true),
            ("web@[^0-9].service", "web@7.service", false),
            ("web@[!0-9].service", "web@x.service", false),
            ("*", "", true),
            ("a\\*b", "a*b", true),
            ("a\\*b", "axb", false),
            ("[", "x", false),
            ("*x", "abcx", true),
            ("*x*y", "axzzy", true),
        ];
        for (p, n, want) in cases {
            assert_eq!(matches(p, n), want, "{p} vs {n}");
        }
    }
}
