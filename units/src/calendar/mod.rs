//! Calendar events (`OnCalendar=`, systemd.time(7)): parsing every form
//! systemd 252 accepts, the normalized form exactly as `systemd-analyze
//! calendar` prints it, and the next elapse after an instant
//! ([`CalendarSpec::next_elapse`], in `next.rs`).
//!
//! A spec is a weekday set, then year-month-day (or month-day, or month~day
//! counting from the month's end), then hour:minute:second; each of the
//! six fields is a list of values, ranges `a..b` and repetitions `a/step`
//! or `a..b/step` (`*` for every value); seconds may have six decimals.
//! Shorthands (`minutely` … `yearly`, `quarterly`, `semiannually`),
//! `@UNIX-SECONDS` and a trailing time zone (`UTC` or a zoneinfo name) are
//! read as systemd reads them.

mod next;

use std::fmt;

pub(crate) const USEC_PER_SEC: i64 = 1_000_000;
const MIN_YEAR: i64 = 1970;
const MAX_YEAR: i64 = 2199;
/// systemd refuses longer comma lists than this (`CALENDARSPEC_COMPONENTS_MAX`).
const MAX_COMPONENTS: usize = 240;
const ALL_WEEKDAYS: u8 = 0x7f;

/// One item of a field's list: `start`, `start..stop`, `start/repeat` or
/// `start..stop/repeat` (seconds in microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Component {
    /// The first value.
    pub start: i64,
    /// The last value of a range.
    pub stop: Option<i64>,
    /// The step; 0 for a single value.
    pub repeat: i64,
}

/// The zone a calendar spec is evaluated in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CalendarZone {
    /// The machine's local time zone (`/etc/localtime`).
    Local,
    /// UTC (a trailing ` UTC`, or `@SECONDS`).
    Utc,
    /// A zoneinfo name such as `Europe/Berlin`: the caller loads
    /// `/usr/share/zoneinfo/NAME`.
    Named(String),
}

/// A parsed calendar event. `Display` prints the normalized form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalendarSpec {
    /// Weekday bits, Monday = bit 0; `None` for every day.
    pub weekdays: Option<u8>,
    /// True when the day counts back from the month's end (`~`).
    pub end_of_month: bool,
    /// The years; empty for `*`.
    pub year: Vec<Component>,
    /// The months 1..=12; empty for `*`.
    pub month: Vec<Component>,
    /// The days 1..=31 (from the end when `end_of_month`); empty for `*`.
    pub day: Vec<Component>,
    /// The hours; empty for `*`.
    pub hour: Vec<Component>,
    /// The minutes; empty for `*`.
    pub minute: Vec<Component>,
    /// The seconds in microseconds (`*` is `0/1s`).
    pub second: Vec<Component>,
    /// The zone the fields are in.
    pub zone: CalendarZone,
}

/// Why a calendar spec is refused. systemd says only "Invalid argument";
/// these say where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalendarError {
    /// Nothing to parse.
    #[error("empty calendar specification")]
    Empty,
    /// The text does not follow the grammar.
    #[error("invalid calendar specification {spec:?}: {reason} at {rest:?}")]
    Syntax {
        /// The whole spec.
        spec: String,
        /// The text where reading stopped.
        rest: String,
        /// What was expected there.
        reason: &'static str,
    },
    /// A value, range or step is out of its field's range.
    #[error("invalid calendar specification {spec:?}: {field} {detail}")]
    Range {
        /// The whole spec.
        spec: String,
        /// `year`, `month`, `day`, `hour`, `minute` or `second`.
        field: &'static str,
        /// What is out of range.
        detail: String,
    },
}

const SHORTHANDS: [(&str, Shorthand); 14] = [
    ("minutely", Shorthand::Minutely),
    ("hourly", Shorthand::Hourly),
    ("daily", Shorthand::Daily),
    ("monthly", Shorthand::Monthly),
    ("weekly", Shorthand::Weekly),
    ("annually", Shorthand::Yearly),
    ("yearly", Shorthand::Yearly),
    ("anually", Shorthand::Yearly),
    ("quarterly", Shorthand::Quarterly),
    ("semiannually", Shorthand::Semiannually),
    ("semi-annually", Shorthand::Semiannually),
    ("biannually", Shorthand::Semiannually),
    ("bi-annually", Shorthand::Semiannually),
    ("", Shorthand::None),
];

#[derive(Clone, Copy)]
enum Shorthand {
    Minutely,
    Hourly,
    Daily,
    Monthly,
    Weekly,
    Yearly,
    Quarterly,
    Semiannually,
    None,
}

fn one(v: i64) -> Vec<Component> {
    vec![Component {
        start: v,
        stop: None,
        repeat: 0,
    }]
}

fn many(vs: &[i64]) -> Vec<Component> {
    vs.iter().flat_map(|&v| one(v)).collect()
}

/// True for a name systemd's `timezone_is_valid` could accept: letters,
/// digits, `-_+/`, no leading, trailing or doubled `/`. Calendar fields
/// never contain a letter, so a trailing word with one is a zone name.
fn looks_like_zone(w: &str) -> bool {
    !w.is_empty()
        && w.bytes().any(|b| b.is_ascii_alphabetic())
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_+/".contains(&b))
        && !w.starts_with('/')
        && !w.ends_with('/')
        && !w.contains("//")
}

impl CalendarSpec {
    /// Parses a calendar event as systemd 252 does (surrounding whitespace
    /// ignored). A trailing word that is a zone name (`Europe/Berlin`) sets
    /// [`CalendarSpec::zone`]; whether that zone exists is for the caller,
    /// which loads it, to say (systemd refuses an unknown zone at parse
    /// time). systemd's reading of the local zone's abbreviation (`CET` on
    /// a machine in Europe/Berlin) as "the local zone, DST off" is not
    /// done: `CET` is the zoneinfo zone `CET`.
    ///
    /// ```
    /// use flotilla_units::calendar::CalendarSpec;
    /// let s = CalendarSpec::parse("mon..fri 9:30 Europe/Berlin").unwrap();
    /// assert_eq!(s.to_string(), "Mon..Fri *-*-* 09:30:00 Europe/Berlin");
    /// assert_eq!(CalendarSpec::parse("quarterly").unwrap().to_string(), "*-01,04,07,10-01 00:00:00");
    /// ```
    pub fn parse(text: &str) -> Result<CalendarSpec, CalendarError> {
        let spec = text.trim();
        if spec.is_empty() {
            return Err(CalendarError::Empty);
        }
        let mut c = CalendarSpec {
            weekdays: None,
            end_of_month: false,
            year: Vec::new(),
            month: Vec::new(),
            day: Vec::new(),
            hour: Vec::new(),
            minute: Vec::new(),
            second: Vec::new(),
            zone: CalendarZone::Local,
        };
        let mut body = spec;
        let lower = spec.to_ascii_lowercase();
        if lower.ends_with(" utc") {
            c.zone = CalendarZone::Utc;
            body = spec[..spec.len() - 4].trim_end();
        } else if let Some((head, last)) = spec.rsplit_once(' ') {
            if looks_like_zone(last) {
                c.zone = CalendarZone::Named(last.to_string());
                body = head.trim_end();
            }
        }
        if body.is_empty() {
            return Err(CalendarError::Empty);
        }
        let short = SHORTHANDS
            .iter()
            .find(|(n, _)| !n.is_empty() && body.eq_ignore_ascii_case(n))
            .map_or(Shorthand::None, |&(_, s)| s);
        let midnight = |c: &mut CalendarSpec| {
            c.hour = one(0);
            c.minute = one(0);
            c.second = one(0);
        };
        match short {
            Shorthand::Minutely => c.second = one(0),
            Shorthand::Hourly => {
                c.minute = one(0);
                c.second = one(0);
            }
            Shorthand::Daily => midnight(&mut c),
            Shorthand::Monthly => {
                c.day = one(1);
                midnight(&mut c);
            }
            Shorthand::Weekly => {
                c.weekdays = Some(1);
                midnight(&mut c);
            }
            Shorthand::Yearly => {
                c.month = one(1);
                c.day = one(1);
                midnight(&mut c);
            }
            Shorthand::Quarterly => {
                c.month = many(&[1, 4, 7, 10]);
                c.day = one(1);
                midnight(&mut c);
            }
            Shorthand::Semiannually => {
                c.month = many(&[1, 7]);
                c.day = one(1);
                midnight(&mut c);
            }
            Shorthand::None => {
                let mut p = Cursor {
                    spec,
                    s: body.as_bytes(),
                    at: 0,
                };
                p.weekdays(&mut c)?;
                if !p.date(&mut c)? {
                    p.time(&mut c)?;
                }
                if !p.done() {
                    return Err(p.err("unexpected text"));
                }
            }
        }
        c.normalize();
        c.validate(spec)?;
        Ok(c)
    }

    fn normalize(&mut self) {
        if matches!(self.weekdays, Some(0) | Some(ALL_WEEKDAYS)) {
            self.weekdays = None;
        }
        if self.end_of_month && self.day.is_empty() {
            self.end_of_month = false;
        }
        for c in &mut self.year {
            for v in std::iter::once(&mut c.start).chain(c.stop.as_mut()) {
                if (0..70).contains(v) {
                    *v += 2000;
                } else if (70..100).contains(v) {
                    *v += 1900;
                }
            }
        }
        for chain in [
            &mut self.year,
            &mut self.month,
            &mut self.day,
            &mut self.hour,
            &mut self.minute,
            &mut self.second,
        ] {
            for c in chain.iter_mut() {
                if let Some(stop) = c.stop.as_mut() {
                    if *stop > c.start && c.repeat > 0 {
                        *stop -= (*stop - c.start) % c.repeat;
                    }
                }
                // A step that cannot fire twice, or a one-value range, is a
                // single value.
                let once = c
                    .stop
                    .is_some_and(|s| s > c.start && c.repeat > 0 && c.start + c.repeat > s);
                if once || c.stop == Some(c.start) {
                    c.repeat = 0;
                    c.stop = None;
                }
            }
            chain.sort();
            chain.dedup();
        }
    }

    fn validate(&self, spec: &str) -> Result<(), CalendarError> {
        let fields: [(&'static str, &Vec<Component>, i64, i64, bool); 6] = [
            ("year", &self.year, MIN_YEAR, MAX_YEAR, false),
            ("month", &self.month, 1, 12, false),
            ("day", &self.day, 1, 31, self.end_of_month),
            ("hour", &self.hour, 0, 23, false),
            ("minute", &self.minute, 0, 59, false),
            ("second", &self.second, 0, 60 * USEC_PER_SEC - 1, false),
        ];
        for (field, chain, from, to, eom) in fields {
            let scale = if field == "second" { USEC_PER_SEC } else { 1 };
            let to = if eom { to - 3 } else { to };
            let err = |detail: String| CalendarError::Range {
                spec: spec.to_string(),
                field,
                detail,
            };
            let show = |v: i64| format_value(v, scale);
            let range = format!("{}..{}", show(from), show(to));
            for c in chain {
                if c.start < from || c.start > to {
                    return Err(err(format!("{} is outside {range}", show(c.start))));
                }
                if c.repeat > to - from {
                    return Err(err(format!(
                        "step {} is larger than the field",
                        show(c.repeat)
                    )));
                }
                match c.stop {
                    Some(stop) => {
                        if stop < from || stop > to {
                            return Err(err(format!("{} is outside {range}", show(stop))));
                        }
                        if c.start + c.repeat > stop {
                            return Err(err(format!(
                                "range {}..{} ends before it starts",
                                show(c.start),
                                show(stop)
                            )));
                        }
                    }
                    None if eom && c.start - c.repeat < from => {
                        return Err(err(format!(
                            "~{}/{} never repeats",
                            show(c.start),
                            show(c.repeat)
                        )))
                    }
                    None if !eom && c.start + c.repeat > to => {
                        return Err(err(format!(
                            "{}/{} never repeats within {range}",
                            show(c.start),
                            show(c.repeat)
                        )))
                    }
                    None => {}
                }
            }
        }
        Ok(())
    }
}

fn format_value(v: i64, scale: i64) -> String {
    if scale == 1 || v % scale == 0 {
        (v / scale).to_string()
    } else {
        format!("{}.{:06}", v / scale, v % scale)
    }
}

struct Cursor<'a> {
    spec: &'a str,
    s: &'a [u8],
    at: usize,
}

const WEEKDAY_NAMES: [(&str, u8); 14] = [
    ("monday", 0),
    ("mon", 0),
    ("tuesday", 1),
    ("tue", 1),
    ("wednesday", 2),
    ("wed", 2),
    ("thursday", 3),
    ("thu", 3),
    ("friday", 4),
    ("fri", 4),
    ("saturday", 5),
    ("sat", 5),
    ("sunday", 6),
    ("sun", 6),
];

impl Cursor<'_> {
    fn peek(&self) -> u8 {
        self.s.get(self.at).copied().unwrap_or(0)
    }
    fn peek2(&self) -> u8 {
        self.s.get(self.at + 1).copied().unwrap_or(0)
    }
    fn done(&self) -> bool {
        self.at >= self.s.len()
    }
    fn skip_spaces(&mut self) {
        while self.peek() == b' ' {
            self.at += 1;
        }
    }
    fn err(&self, reason: &'static str) -> CalendarError {
        CalendarError::Syntax {
            spec: self.spec.to_string(),
            rest: String::from_utf8_lossy(&self.s[self.at.min(self.s.len())..]).into_owned(),
            reason,
        }
    }
    fn range_err(&self, field: &'static str, detail: &str) -> CalendarError {
        CalendarError::Range {
            spec: self.spec.to_string(),
            field,
            detail: detail.to_string(),
        }
    }

    /// The weekday list: names (any case, long or short), `a..b` or
    /// `a-b` ranges, commas; ends at a space or the end.
    fn weekdays(&mut self, c: &mut CalendarSpec) -> Result<(), CalendarError> {
        let mut open: Option<u8> = None;
        let mut first = true;
        let mut bits = 0u8;
        loop {
            let rest = &self.s[self.at..];
            let found = WEEKDAY_NAMES.iter().find(|(n, _)| {
                rest.len() >= n.len() && rest[..n.len()].eq_ignore_ascii_case(n.as_bytes())
            });
            let Some(&(name, nr)) = found else {
                if first {
                    return Ok(());
                }
                return Err(self.err("expected a weekday"));
            };
            if !matches!(
                self.s.get(self.at + name.len()),
                None | Some(b'-' | b'.' | b',' | b' ')
            ) {
                return Err(self.err("a weekday must be followed by '..', ',' or a space"));
            }
            bits |= 1 << nr;
            if let Some(l) = open {
                if l > nr {
                    return Err(self.err("a weekday range must go forward (Mon..Sun)"));
                }
                for j in l + 1..nr {
                    bits |= 1 << j;
                }
            }
            self.at += name.len();
            c.weekdays = Some(bits);
            match self.peek() {
                0 => return Ok(()),
                b' ' => {
                    self.skip_spaces();
                    return Ok(());
                }
                b'.' => {
                    if open.is_some() || self.peek2() != b'.' {
                        return Err(self.err("expected '..' between two weekdays"));
                    }
                    open = Some(nr);
                    self.at += 2;
                }
                b'-' => {
                    if open.is_some() {
                        return Err(self.err("a weekday range has one end too many"));
                    }
                    open = Some(nr);
                    self.at += 1;
                }
                _ => {
                    // ','
                    open = None;
                    self.at += 1;
                }
            }
            if matches!(self.peek(), 0 | b' ') {
                if open.is_some() {
                    return Err(self.err("a weekday range needs an end"));
                }
                self.skip_spaces();
                return Ok(());
            }
            first = false;
        }
    }

    /// A decimal number (with up to six decimals for seconds, rounded on
    /// the seventh), in the field's unit (microseconds for seconds).
    fn decimal(&mut self, usec: bool, field: &'static str) -> Result<i64, CalendarError> {
        if !self.peek().is_ascii_digit() {
            return Err(self.err("expected a number"));
        }
        let start = self.at;
        while self.peek().is_ascii_digit() {
            self.at += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.at]).unwrap_or("");
        let too_large_err = self.range_err(field, &format!("value {digits} is too large"));
        let too_large = || too_large_err.clone();
        let mut value: i64 = digits.parse().map_err(|_| too_large())?;
        if usec {
            value = value.checked_mul(USEC_PER_SEC).ok_or_else(too_large)?;
            if self.peek() == b'.' && self.peek2() != b'.' {
                self.at += 1;
                if !self.peek().is_ascii_digit() {
                    return Err(self.err("expected digits after the decimal point"));
                }
                let mut frac = 0;
                for _ in 0..6 {
                    frac *= 10;
                    if self.peek().is_ascii_digit() {
                        frac += i64::from(self.peek() - b'0');
                        self.at += 1;
                    }
                }
                if (b'5'..=b'9').contains(&self.peek()) {
                    frac += 1;
                }
                while self.peek().is_ascii_digit() {
                    self.at += 1;
                }
                value += frac;
            }
        }
        if value > i64::from(i32::MAX) {
            return Err(too_large());
        }
        Ok(value)
    }

    /// A field's list: `*`, or comma-separated `a`, `a..b`, `a/s`, `a..b/s`.
    fn chain(&mut self, usec: bool, field: &'static str) -> Result<Vec<Component>, CalendarError> {
        if self.peek() == b'*' {
            self.at += 1;
            return Ok(if usec {
                vec![Component {
                    start: 0,
                    stop: None,
                    repeat: USEC_PER_SEC,
                }]
            } else {
                Vec::new()
            });
        }
        let mut chain = Vec::new();
        loop {
            if chain.len() > MAX_COMPONENTS {
                return Err(self.range_err(field, &format!("has more than {MAX_COMPONENTS} items")));
            }
            let start = self.decimal(usec, field)?;
            let mut stop = None;
            let mut repeat = 0;
            if self.peek() == b'.' && self.peek2() == b'.' {
                self.at += 2;
                stop = Some(self.decimal(usec, field)?);
                repeat = if usec { USEC_PER_SEC } else { 1 };
            }
            if self.peek() == b'/' {
                self.at += 1;
                repeat = self.decimal(usec, field)?;
                if repeat == 0 {
                    return Err(self.range_err(field, "step 0 never advances"));
                }
            } else if usec && stop.is_some_and(|s| start + repeat > s) {
                return Err(
                    self.range_err(field, "a range of seconds shorter than 1s needs a step")
                );
            }
            if !matches!(self.peek(), 0 | b' ' | b',' | b'-' | b'~' | b':') {
                return Err(self.err("unexpected character after a value"));
            }
            chain.push(Component {
                start,
                stop,
                repeat,
            });
            if self.peek() != b',' {
                return Ok(chain);
            }
            self.at += 1;
        }
    }

    /// The date part; true when it was `@SECONDS` (no time part follows).
    /// Leaves the cursor where it was when the text is a time, not a date.
    fn date(&mut self, c: &mut CalendarSpec) -> Result<bool, CalendarError> {
        if self.done() {
            return Ok(false);
        }
        if self.peek() == b'@' {
            self.at += 1;
            let start = self.at;
            while self.peek().is_ascii_digit() {
                self.at += 1;
            }
            let secs: i64 = std::str::from_utf8(&self.s[start..self.at])
                .ok()
                .and_then(|d| d.parse().ok())
                .ok_or_else(|| self.err("expected seconds since the epoch after '@'"))?;
            let tm = crate::civil::Tm::from_wall(secs, None);
            c.year = one(tm.year);
            c.month = one(tm.mon + 1);
            c.day = one(tm.mday);
            c.hour = one(tm.hour);
            c.minute = one(tm.min);
            c.second = one(tm.sec * USEC_PER_SEC);
            c.zone = CalendarZone::Utc;
            return Ok(true);
        }
        let save = self.at;
        let first = self.chain(false, "date")?;
        if matches!(self.peek(), 0 | b':') {
            self.at = save;
            return Ok(false);
        }
        self.date_sep(c)?;
        let second = self.chain(false, "day")?;
        if matches!(self.peek(), 0 | b' ') {
            self.skip_spaces();
            c.month = first;
            c.day = second;
            return Ok(false);
        }
        if c.end_of_month {
            return Err(self.err("'~' must come before the day"));
        }
        self.date_sep(c)?;
        let third = self.chain(false, "day")?;
        if !matches!(self.peek(), 0 | b' ') {
            return Err(self.err("expected a space after the date"));
        }
        self.skip_spaces();
        c.year = first;
        c.month = second;
        c.day = third;
        Ok(false)
    }

    fn date_sep(&mut self, c: &mut CalendarSpec) -> Result<(), CalendarError> {
        match self.peek() {
            b'~' => c.end_of_month = true,
            b'-' => {}
            _ => return Err(self.err("expected '-' or '~' in the date")),
        }
        self.at += 1;
        Ok(())
    }

    /// The time part `h:m[:s]`; none at all is 00:00:00.
    fn time(&mut self, c: &mut CalendarSpec) -> Result<(), CalendarError> {
        if self.done() {
            c.hour = one(0);
            c.minute = one(0);
            c.second = one(0);
            return Ok(());
        }
        c.hour = self.chain(false, "hour")?;
        if self.peek() != b':' {
            return Err(self.err("expected ':' after the hour"));
        }
        self.at += 1;
        c.minute = self.chain(false, "minute")?;
        if self.done() {
            c.second = one(0);
            return Ok(());
        }
        if self.peek() != b':' {
            return Err(self.err("expected ':' after the minute"));
        }
        self.at += 1;
        c.second = self.chain(true, "second")?;
        Ok(())
    }
}

/// A spec is carried (in a unit's JSON form) as its normalized text.
impl serde::Serialize for CalendarSpec {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for CalendarSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CalendarSpec, D::Error> {
        let text = String::deserialize(d)?;
        CalendarSpec::parse(&text).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for CalendarSpec {
    /// The normalized form, as `systemd-analyze calendar` prints it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(bits) = self.weekdays {
            format_weekdays(f, bits)?;
            f.write_str(" ")?;
        }
        format_chain(f, 4, &self.year, 1)?;
        f.write_str("-")?;
        format_chain(f, 2, &self.month, 1)?;
        f.write_str(if self.end_of_month { "~" } else { "-" })?;
        format_chain(f, 2, &self.day, 1)?;
        f.write_str(" ")?;
        format_chain(f, 2, &self.hour, 1)?;
        f.write_str(":")?;
        format_chain(f, 2, &self.minute, 1)?;
        f.write_str(":")?;
        format_chain(f, 2, &self.second, USEC_PER_SEC)?;
        match &self.zone {
            CalendarZone::Local => Ok(()),
            CalendarZone::Utc => f.write_str(" UTC"),
            CalendarZone::Named(n) => write!(f, " {n}"),
        }
    }
}

fn format_weekdays(f: &mut fmt::Formatter<'_>, bits: u8) -> fmt::Result {
    const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let mut need_comma = false;
    let mut run: Option<usize> = None;
    let close = |f: &mut fmt::Formatter<'_>, l: usize, x: usize| {
        if x > l + 1 {
            f.write_str(if x > l + 2 { ".." } else { "," })?;
            f.write_str(DAYS[x - 1])?;
        }
        Ok(())
    };
    for (x, day) in DAYS.iter().enumerate() {
        if bits & (1 << x) != 0 {
            if run.is_none() {
                if need_comma {
                    f.write_str(",")?;
                }
                need_comma = true;
                f.write_str(day)?;
                run = Some(x);
            }
        } else if let Some(l) = run.take() {
            close(f, l, x)?;
        }
    }
    match run {
        Some(l) => close(f, l, DAYS.len()),
        None => Ok(()),
    }
}

fn format_chain(
    f: &mut fmt::Formatter<'_>,
    width: usize,
    chain: &[Component],
    d: i64,
) -> fmt::Result {
    let star = chain.is_empty()
        || (d > 1
            && chain
                .iter()
                .any(|c| c.start == 0 && c.stop.is_none() && c.repeat == d));
    if star {
        return f.write_str("*");
    }
    for (i, c) in chain.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{:0width$}", c.start / d)?;
        if c.start % d > 0 {
            write!(f, ".{:06}", c.start % d)?;
        }
        if let Some(stop) = c.stop.filter(|&s| s > 0) {
            write!(f, "..{:0width$}", stop / d)?;
            if stop % d > 0 {
                write!(f, ".{:06}", stop % d)?;
            }
        }
        if c.repeat > 0 && !(c.stop.is_some_and(|s| s > 0) && c.repeat == d) {
            write!(f, "/{}", c.repeat / d)?;
        }
        if c.repeat % d > 0 {
            write!(f, ".{:06}", c.repeat % d)?;
        }
    }
    Ok(())
}
