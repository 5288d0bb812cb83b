//! Time zones from TZif bytes (RFC 8536, versions 1 to 4) and POSIX `TZ`
//! rules: the UTC offset in force at an instant (`localtime`) and the
//! instant a local wall-clock time names (`mktime`, with glibc's answers in
//! daylight-saving gaps and folds, which systemd's calendar search relies
//! on).
//!
//! The caller reads the bytes (`/usr/share/zoneinfo/NAME`, `/etc/localtime`);
//! nothing here touches the file system. Leap-second records (the `right/`
//! zones) are skipped: time here is POSIX time, as systemd's is.

use crate::civil::{days_from_civil, is_leap, Tm, DAY};

/// A zone's local time type: its UTC offset, whether it is daylight saving
/// time, and its abbreviation (`CET`, `EDT`, `+0530`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalType {
    /// Seconds east of UTC.
    pub offset: i32,
    /// True for daylight saving time.
    pub isdst: bool,
    /// The abbreviation, e.g. `CEST`.
    pub abbrev: String,
}

/// A time zone: the transitions of a TZif table and the POSIX `TZ` rule
/// for instants past its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeZone {
    /// The name the caller gave (`Europe/Berlin`, `UTC`).
    pub name: String,
    /// Transition instants (seconds since the epoch, ascending) and the
    /// index into `types` in force from each.
    transitions: Vec<(i64, usize)>,
    types: Vec<LocalType>,
    /// The footer rule, for instants after the last transition.
    rule: Option<PosixTz>,
}

/// What is wrong with a TZif file or a POSIX `TZ` string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TzError {
    /// The data does not start with `TZif`.
    #[error("not a TZif file (it does not start with \"TZif\")")]
    NotTzif,
    /// The data ends before a part its header announces.
    #[error("truncated TZif file: {0} is cut short")]
    Truncated(&'static str),
    /// A count or index of the file is out of range.
    #[error("malformed TZif file: {0}")]
    Malformed(String),
    /// The POSIX `TZ` string (the v2+ footer) cannot be read.
    #[error("invalid POSIX TZ rule {rule:?}: {reason}")]
    BadRule {
        /// The rule as written.
        rule: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl TimeZone {
    /// UTC: offset 0 at every instant.
    pub fn utc() -> TimeZone {
        TimeZone {
            name: "UTC".to_string(),
            transitions: Vec::new(),
            types: vec![LocalType {
                offset: 0,
                isdst: false,
                abbrev: "UTC".to_string(),
            }],
            rule: None,
        }
    }

    /// Reads a TZif file (versions 1 to 4). For v2 and later the 64-bit
    /// table and the footer's POSIX rule are used; a v1 file has only its
    /// 32-bit table.
    pub fn from_tzif(name: &str, data: &[u8]) -> Result<TimeZone, TzError> {
        let mut r = Reader { data, at: 0 };
        let v1 = Header::read(&mut r)?;
        if v1.version == 0 {
            let (transitions, types) = v1.read_body(&mut r, 4)?;
            return TimeZone::build(name, transitions, types, None);
        }
        r.skip(v1.body_len(4), "the version 1 data block")?;
        let v2 = Header::read(&mut r)?;
        let (transitions, types) = v2.read_body(&mut r, 8)?;
        let footer = r.rest();
        let rule = match footer.strip_prefix(b"\n") {
            Some(f) => {
                let end = f
                    .iter()
                    .position(|&b| b == b'\n')
                    .ok_or(TzError::Truncated("the footer"))?;
                let text = std::str::from_utf8(&f[..end])
                    .map_err(|_| TzError::Malformed("the footer is not text".to_string()))?;
                if text.is_empty() {
                    None
                } else {
                    Some(PosixTz::parse(text)?)
                }
            }
            None => None,
        };
        TimeZone::build(name, transitions, types, rule)
    }

    /// A zone from a POSIX `TZ` string alone (`CET-1CEST,M3.5.0,M10.5.0/3`).
    pub fn from_posix(name: &str, rule: &str) -> Result<TimeZone, TzError> {
        let rule = PosixTz::parse(rule)?;
        let types = vec![rule.std.clone()];
        TimeZone::build(name, Vec::new(), types, Some(rule))
    }

    fn build(
        name: &str,
        transitions: Vec<(i64, usize)>,
        types: Vec<LocalType>,
        rule: Option<PosixTz>,
    ) -> Result<TimeZone, TzError> {
        if types.is_empty() {
            return Err(TzError::Malformed("no local time types".to_string()));
        }
        if transitions.windows(2).any(|w| w[0].0 >= w[1].0) {
            return Err(TzError::Malformed(
                "transition times are not ascending".to_string(),
            ));
        }
        Ok(TimeZone {
            name: name.to_string(),
            transitions,
            types,
            rule,
        })
    }

    /// The local time type in force at instant `t` (seconds since the
    /// epoch): `localtime`'s offset.
    pub fn local_type(&self, t: i64) -> LocalType {
        let idx = self.transitions.partition_point(|&(at, _)| at <= t);
        match (idx, &self.rule) {
            (i, Some(rule)) if i == self.transitions.len() => rule.local_type(t),
            // Before the first transition: the first type (RFC 8536 3.2).
            (0, _) => self.types[0].clone(),
            (i, _) => self.types[self.transitions[i - 1].1].clone(),
        }
    }

    /// The UTC offset in force at `t`.
    pub fn offset(&self, t: i64) -> i32 {
        self.local_type(t).offset
    }

    /// `localtime`: the wall-clock fields at instant `t`, with `isdst` set.
    pub(crate) fn localtime(&self, t: i64) -> Tm {
        let lt = self.local_type(t);
        Tm::from_wall(t + i64::from(lt.offset), Some(lt.isdst))
    }

    /// glibc's `mktime`: the instant the fields of `tm` name (out-of-range
    /// fields folded in), updating `guess`, the offset of the previous call,
    /// as glibc keeps it. A wall time that occurs twice (a fold) is the
    /// occurrence with the requested `isdst`, or without one the occurrence
    /// whose offset is `guess` (the one in force where the search stands);
    /// a wall time that does not occur (a gap) is read with the offset
    /// before the gap, which lands after it, as glibc does when the later
    /// side is daylight saving time.
    pub(crate) fn mktime(&self, tm: &Tm, guess: &mut i32) -> i64 {
        let wall = tm.wall();
        let t = self.mktime_wall(wall, tm.isdst, *guess);
        *guess = self.offset(t);
        t
    }

    fn mktime_wall(&self, wall: i64, isdst: Option<bool>, guess: i32) -> i64 {
        // glibc iterates t = wall - offset(t) from the previous offset.
        let mut off = guess;
        let mut prev: Option<i32> = None;
        let mut found = None;
        for _ in 0..6 {
            let o = self.offset(wall - i64::from(off));
            if o == off {
                found = Some(wall - i64::from(off));
                break;
            }
            if prev == Some(o) {
                break; // oscillating between two offsets: a gap
            }
            prev = Some(off);
            off = o;
        }
        // The offsets in force around this wall time (at most one
        // transition in two days, as in every real zone).
        let before = self.local_type(wall - 2 * DAY);
        let after = self.local_type(wall + 2 * DAY);
        let Some(t) = found else {
            let ta = wall - i64::from(before.offset); // lands after the gap
            let tb = wall - i64::from(after.offset); // lands before it
            return match (self.local_type(ta).isdst, self.local_type(tb).isdst) {
                (false, true) => tb,
                _ => ta,
            };
        };
        let Some(want) = isdst else {
            return t;
        };
        if self.local_type(t).isdst == want {
            return t;
        }
        // The other reading of a folded wall time, if it has the wanted isdst.
        for o in [before.offset, after.offset] {
            let t2 = wall - i64::from(o);
            let lt = self.local_type(t2);
            if lt.offset == o && lt.isdst == want {
                return t2;
            }
        }
        // No such reading: glibc reads the time with the offset of the
        // nearest time that has the wanted isdst.
        for k in 1..=60 {
            for dir in [-1, 1] {
                let lt = self.local_type(t + dir * k * 7 * DAY);
                if lt.isdst == want {
                    return wall - i64::from(lt.offset);
                }
            }
        }
        t
    }
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], TzError> {
        let end = self.at.checked_add(n).ok_or(TzError::Truncated(what))?;
        let s = self
            .data
            .get(self.at..end)
            .ok_or(TzError::Truncated(what))?;
        self.at = end;
        Ok(s)
    }
    fn skip(&mut self, n: usize, what: &'static str) -> Result<(), TzError> {
        self.take(n, what).map(|_| ())
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, TzError> {
        let b = self.take(4, what)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn rest(&self) -> &'a [u8] {
        &self.data[self.at.min(self.data.len())..]
    }
}

struct Header {
    version: u8,
    isutcnt: usize,
    isstdcnt: usize,
    leapcnt: usize,
    timecnt: usize,
    typecnt: usize,
    charcnt: usize,
}

impl Header {
    fn read(r: &mut Reader) -> Result<Header, TzError> {
        let magic = r.take(4, "the header").map_err(|_| TzError::NotTzif)?;
        if magic != b"TZif" {
            return Err(TzError::NotTzif);
        }
        let version = match r.take(1, "the header")?[0] {
            0 => 0,
            b @ b'2'..=b'9' => b - b'0',
            b => return Err(TzError::Malformed(format!("unknown version byte {b:#04x}"))),
        };
        r.skip(15, "the header")?;
        let mut n = || -> Result<usize, TzError> {
            Ok(usize::try_from(r.u32("the header")?).unwrap_or(usize::MAX))
        };
        Ok(Header {
            version,
            isutcnt: n()?,
            isstdcnt: n()?,
            leapcnt: n()?,
            timecnt: n()?,
            typecnt: n()?,
            charcnt: n()?,
        })
    }

    fn body_len(&self, time_size: usize) -> usize {
        let parts = [
            self.timecnt.saturating_mul(time_size + 1),
            self.typecnt.saturating_mul(6),
            self.charcnt,
            self.leapcnt.saturating_mul(time_size + 4),
            self.isstdcnt,
            self.isutcnt,
        ];
        parts.iter().fold(0usize, |a, b| a.saturating_add(*b))
    }

    #[allow(clippy::type_complexity)]
    fn read_body(
        &self,
        r: &mut Reader,
        time_size: usize,
    ) -> Result<(Vec<(i64, usize)>, Vec<LocalType>), TzError> {
        if self.typecnt == 0 {
            return Err(TzError::Malformed("typecnt is 0".to_string()));
        }
        let times = r.take(
            self.timecnt.saturating_mul(time_size),
            "the transition times",
        )?;
        let idxs = r.take(self.timecnt, "the transition types")?;
        let infos = r.take(self.typecnt.saturating_mul(6), "the local time types")?;
        let chars = r.take(self.charcnt, "the abbreviations")?;
        r.skip(
            self.leapcnt.saturating_mul(time_size + 4),
            "the leap-second records",
        )?;
        r.skip(self.isstdcnt, "the standard/wall indicators")?;
        r.skip(self.isutcnt, "the UT/local indicators")?;
        let mut types = Vec::with_capacity(self.typecnt);
        for info in infos.chunks_exact(6) {
            let offset = i32::from_be_bytes([info[0], info[1], info[2], info[3]]);
            let isdst = info[4] != 0;
            let at = usize::from(info[5]);
            let tail = chars.get(at..).ok_or_else(|| {
                TzError::Malformed(format!("abbreviation index {at} past the table"))
            })?;
            let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
            types.push(LocalType {
                offset,
                isdst,
                abbrev: String::from_utf8_lossy(&tail[..end]).into_owned(),
            });
        }
        let mut transitions = Vec::with_capacity(self.timecnt);
        for (i, &idx) in idxs.iter().enumerate() {
            let b = &times[i * time_size..(i + 1) * time_size];
            let at = if time_size == 4 {
                i64::from(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            } else {
                i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
            };
            let idx = usize::from(idx);
            if idx >= types.len() {
                return Err(TzError::Malformed(format!(
                    "transition {i} names local time type {idx} of {}",
                    types.len()
                )));
            }
            transitions.push((at, idx));
        }
        Ok((transitions, types))
    }
}

/// A POSIX `TZ` rule: `STD offset [DST [offset] [,start[/time],end[/time]]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PosixTz {
    std: LocalType,
    dst: Option<(LocalType, RuleDate, i64, RuleDate, i64)>,
}

/// The day a daylight-saving change happens in a year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RuleDate {
    /// `Jn`: day 1..=365, February 29th never counted.
    Julian1(i64),
    /// `n`: day 0..=365, February 29th counted.
    Julian0(i64),
    /// `Mm.w.d`: weekday `d` (0 = Sunday) of week `w` (5 = last) of month `m`.
    MonthWeek(i64, i64, i64),
}

impl RuleDate {
    /// The day number (since 1970-01-01) of this date in `year`.
    fn day(self, year: i64) -> i64 {
        let jan1 = days_from_civil(year, 1, 1);
        match self {
            RuleDate::Julian1(n) => jan1 + n - 1 + i64::from(is_leap(year) && n >= 60),
            RuleDate::Julian0(n) => jan1 + n,
            RuleDate::MonthWeek(m, w, d) => {
                let first = days_from_civil(year, m, 1);
                // 1970-01-01 was a Thursday (4 with Sunday = 0).
                let wd_first = (first + 4).rem_euclid(7);
                let mut day = first + (d - wd_first).rem_euclid(7) + (w - 1) * 7;
                let len = crate::civil::month_days(year, m);
                while day >= first + len {
                    day -= 7;
                }
                day
            }
        }
    }
}

impl PosixTz {
    fn parse(text: &str) -> Result<PosixTz, TzError> {
        let bad = |reason| TzError::BadRule {
            rule: text.to_string(),
            reason,
        };
        let mut p = RuleParser {
            s: text.as_bytes(),
            at: 0,
        };
        let std_name = p.name().ok_or_else(|| bad("no standard time name"))?;
        let std_off = -p.hms(24).ok_or_else(|| bad("no standard time offset"))?;
        let std = LocalType {
            offset: to_i32(std_off),
            isdst: false,
            abbrev: std_name,
        };
        if p.done() {
            return Ok(PosixTz { std, dst: None });
        }
        let dst_name = p
            .name()
            .ok_or_else(|| bad("bad daylight saving time name"))?;
        let dst_off = if p.peek() == Some(b',') || p.done() {
            std_off + 3600
        } else {
            -p.hms(24)
                .ok_or_else(|| bad("bad daylight saving time offset"))?
        };
        let dst = LocalType {
            offset: to_i32(dst_off),
            isdst: true,
            abbrev: dst_name,
        };
        let (start, start_t, end, end_t) = if p.done() {
            // POSIX leaves the default open; glibc and tzcode use the US rule.
            (
                RuleDate::MonthWeek(3, 2, 0),
                7200,
                RuleDate::MonthWeek(11, 1, 0),
                7200,
            )
        } else {
            p.expect(b',')
                .ok_or_else(|| bad("expected ',' before the start rule"))?;
            let start = p.date().ok_or_else(|| bad("bad start date"))?;
            let start_t = p.time().ok_or_else(|| bad("bad start time"))?;
            p.expect(b',')
                .ok_or_else(|| bad("expected ',' before the end rule"))?;
            let end = p.date().ok_or_else(|| bad("bad end date"))?;
            let end_t = p.time().ok_or_else(|| bad("bad end time"))?;
            (start, start_t, end, end_t)
        };
        if !p.done() {
            return Err(bad("text after the rule"));
        }
        Ok(PosixTz {
            std,
            dst: Some((dst, start, start_t, end, end_t)),
        })
    }

    fn local_type(&self, t: i64) -> LocalType {
        let Some((dst, start, start_t, end, end_t)) = &self.dst else {
            return self.std.clone();
        };
        let (year, _, _) = crate::civil::civil_from_days(t.div_euclid(DAY));
        let std_off = i64::from(self.std.offset);
        let dst_off = i64::from(dst.offset);
        // Check this year's and its neighbours' periods, so a period that
        // crosses New Year in UTC is found too.
        for y in [year - 1, year, year + 1] {
            let on = start.day(y) * DAY + start_t - std_off;
            let off = end.day(y) * DAY + end_t - dst_off;
            let in_dst = if on < off {
                on <= t && t < off
            } else {
                // Southern hemisphere: DST spans New Year.
                let next_off = end.day(y + 1) * DAY + end_t - dst_off;
                on <= t && t < next_off
            };
            if in_dst {
                return dst.clone();
            }
        }
        self.std.clone()
    }
}

fn to_i32(v: i64) -> i32 {
    i32::try_from(v).unwrap_or(if v < 0 { i32::MIN } else { i32::MAX })
}

struct RuleParser<'a> {
    s: &'a [u8],
    at: usize,
}

impl RuleParser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }
    fn done(&self) -> bool {
        self.at >= self.s.len()
    }
    fn expect(&mut self, b: u8) -> Option<()> {
        (self.peek() == Some(b)).then(|| self.at += 1)
    }
    /// `abc` (3+ letters) or `<+0530>` (anything but `>`).
    fn name(&mut self) -> Option<String> {
        let start = self.at;
        if self.expect(b'<').is_some() {
            while self.peek()? != b'>' {
                self.at += 1;
            }
            let name = String::from_utf8_lossy(&self.s[start + 1..self.at]).into_owned();
            self.at += 1;
            return (name.len() >= 3).then_some(name);
        }
        while self.peek().is_some_and(|b| b.is_ascii_alphabetic()) {
            self.at += 1;
        }
        (self.at - start >= 3)
            .then(|| String::from_utf8_lossy(&self.s[start..self.at]).into_owned())
    }
    fn num(&mut self) -> Option<i64> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .parse()
            .ok()
    }
    /// `[+-]hh[:mm[:ss]]` in seconds, hours at most `max_h`.
    fn hms(&mut self, max_h: i64) -> Option<i64> {
        let sign = match self.peek() {
            Some(b'-') => {
                self.at += 1;
                -1
            }
            Some(b'+') => {
                self.at += 1;
                1
            }
            _ => 1,
        };
        let h = self.num()?;
        let mut secs = h * 3600;
        if self.expect(b':').is_some() {
            let m = self.num()?;
            secs += m * 60;
            if self.expect(b':').is_some() {
                secs += self.num()?;
            }
        }
        (h <= max_h).then_some(sign * secs)
    }
    fn date(&mut self) -> Option<RuleDate> {
        match self.peek()? {
            b'J' => {
                self.at += 1;
                let n = self.num()?;
                (1..=365).contains(&n).then_some(RuleDate::Julian1(n))
            }
            b'M' => {
                self.at += 1;
                let m = self.num()?;
                self.expect(b'.')?;
                let w = self.num()?;
                self.expect(b'.')?;
                let d = self.num()?;
                ((1..=12).contains(&m) && (1..=5).contains(&w) && (0..=6).contains(&d))
                    .then_some(RuleDate::MonthWeek(m, w, d))
            }
            _ => {
                let n = self.num()?;
                (0..=365).contains(&n).then_some(RuleDate::Julian0(n))
            }
        }
    }
    /// `[/time]`, default 02:00; version 3 allows -167..=167 hours.
    fn time(&mut self) -> Option<i64> {
        if self.expect(b'/').is_some() {
            self.hms(167)
        } else {
            Some(7200)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ymd(y: i64, m: i64, d: i64, h: i64, mi: i64) -> i64 {
        days_from_civil(y, m, d) * DAY + h * 3600 + mi * 60
    }

    #[test]
    fn posix_rules_of_europe_and_the_us() {
        let berlin = TimeZone::from_posix("x", "CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        // 2024: CEST from 03-31 01:00 UTC to 10-27 01:00 UTC.
        assert_eq!(berlin.offset(ymd(2024, 3, 31, 0, 59)), 3600);
        assert_eq!(berlin.offset(ymd(2024, 3, 31, 1, 0)), 7200);
        assert_eq!(berlin.offset(ymd(2024, 10, 27, 0, 59)), 7200);
        assert_eq!(berlin.offset(ymd(2024, 10, 27, 1, 0)), 3600);
        let ny = TimeZone::from_posix("x", "EST5EDT,M3.2.0,M11.1.0").unwrap();
        // 2024: EDT from 03-10 07:00 UTC to 11-03 06:00 UTC.
        assert_eq!(ny.offset(ymd(2024, 3, 10, 6, 59)), -18000);
        assert_eq!(ny.offset(ymd(2024, 3, 10, 7, 0)), -14400);
        assert_eq!(ny.offset(ymd(2024, 11, 3, 5, 59)), -14400);
        assert_eq!(ny.offset(ymd(2024, 11, 3, 6, 0)), -18000);
        assert_eq!(ny.local_type(ymd(2024, 7, 1, 0, 0)).abbrev, "EDT");
    }

    #[test]
    fn posix_rules_of_the_south_and_odd_forms() {
        // Sydney: DST from the first Sunday of October to the first of April.
        let syd = TimeZone::from_posix("x", "AEST-10AEDT,M10.1.0,M4.1.0/3").unwrap();
        assert_eq!(syd.offset(ymd(2024, 1, 15, 0, 0)), 39600);
        assert_eq!(syd.offset(ymd(2024, 6, 15, 0, 0)), 36000);
        assert_eq!(syd.offset(ymd(2024, 12, 31, 23, 0)), 39600);
        let ist = TimeZone::from_posix("x", "<+0530>-5:30").unwrap();
        assert_eq!(ist.offset(0), 19800);
        assert_eq!(ist.local_type(0).abbrev, "+0530");
        // Version 3: DST all year (start Jan 1 00:00, end past Dec 31 24:00).
        let all = TimeZone::from_posix("x", "EST5EDT,0/0,J365/25").unwrap();
        assert_eq!(all.offset(ymd(2024, 6, 1, 0, 0)), -14400);
        assert_eq!(all.offset(ymd(2023, 12, 31, 22, 0)), -14400);
        for bad in [
            "",
            "C",
            "CET",
            "CET-1CEST,M3.5.0",
            "CET-1CEST,M13.5.0,M10.5.0",
            "CET-1x",
        ] {
            assert!(TimeZone::from_posix("x", bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn mktime_in_gaps_and_folds() {
        let berlin = TimeZone::from_posix("x", "CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        let tm = |y: i64, mo: i64, d: i64, h: i64, mi: i64, isdst| Tm {
            year: y,
            mon: mo - 1,
            mday: d,
            hour: h,
            min: mi,
            sec: 0,
            isdst,
        };
        let mut g = 3600;
        // Gap: 02:30 on 2024-03-31 is read as 02:30 CET = 03:30 CEST.
        assert_eq!(
            berlin.mktime(&tm(2024, 3, 31, 2, 30, None), &mut g),
            ymd(2024, 3, 31, 1, 30)
        );
        // Fold: 02:30 on 2024-10-27 is the occurrence of the guessed offset.
        let mut g = 7200;
        assert_eq!(
            berlin.mktime(&tm(2024, 10, 27, 2, 30, None), &mut g),
            ymd(2024, 10, 27, 0, 30)
        );
        let mut g = 3600;
        assert_eq!(
            berlin.mktime(&tm(2024, 10, 27, 2, 30, None), &mut g),
            ymd(2024, 10, 27, 1, 30)
        );
        let mut g = 0;
        assert_eq!(
            berlin.mktime(&tm(2024, 10, 27, 2, 30, Some(true)), &mut g),
            ymd(2024, 10, 27, 0, 30)
        );
        assert_eq!(g, 7200);
        assert_eq!(
            berlin.localtime(ymd(2024, 10, 27, 1, 30)),
            tm(2024, 10, 27, 2, 30, Some(false))
        );
    }

    #[test]
    fn bad_tzif_data_says_what_is_wrong() {
        assert_eq!(TimeZone::from_tzif("x", b"nope"), Err(TzError::NotTzif));
        assert_eq!(TimeZone::from_tzif("x", b""), Err(TzError::NotTzif));
        let mut h = b"TZif2".to_vec();
        h.extend([0; 15]);
        assert_eq!(
            TimeZone::from_tzif("x", &h),
            Err(TzError::Truncated("the header"))
        );
        let mut v1 = b"TZif\0".to_vec();
        v1.extend([0; 15]);
        // isutcnt isstdcnt leapcnt timecnt typecnt charcnt
        for n in [0u32, 0, 0, 1, 1, 4] {
            v1.extend(n.to_be_bytes());
        }
        assert_eq!(
            TimeZone::from_tzif("x", &v1),
            Err(TzError::Truncated("the transition times"))
        );
        v1.extend(0i32.to_be_bytes()); // one transition at 0
        v1.push(3); // to type 3 of 1
        v1.extend(3600i32.to_be_bytes());
        v1.extend([0, 0]);
        v1.extend(b"CET\0");
        assert!(
            matches!(TimeZone::from_tzif("x", &v1), Err(TzError::Malformed(m)) if m.contains("type 3 of 1"))
        );
    }
}
