//! The next elapse of a calendar event, searched the way systemd 252's
//! `calendar_spec_next_usec` searches: field by field on the local wall
//! clock, from the year down to the microsecond, each step folded back into
//! a real time by `mktime` (so a time in a daylight-saving gap moves past
//! the gap, and a time that occurs twice in a fold is taken once, at the
//! occurrence whose offset is in force where the search stands).

use super::{CalendarSpec, CalendarZone, Component, MAX_YEAR, USEC_PER_SEC};
use crate::civil::Tm;
use crate::tz::TimeZone;

/// systemd refuses to search from later than this (9999-12-30 23:59:59.999999
/// UTC, `USEC_TIMESTAMP_FORMATTABLE_MAX`).
const USEC_MAX: u64 = 253_402_214_399_999_999;
/// systemd gives up a search after this many rounds (a safety valve).
const MAX_ITERATIONS: usize = 1000;

impl CalendarSpec {
    /// The first instant strictly after `after` (microseconds since the
    /// epoch) at which the event elapses, or `None` if it never does again
    /// (a past date, the end of the calendar at 2199, or a search systemd
    /// would give up). `zone` is the zone of a [`CalendarZone::Local`] or
    /// [`CalendarZone::Named`] spec, which the caller loads; a
    /// [`CalendarZone::Utc`] spec ignores it.
    ///
    /// ```
    /// use flotilla_units::calendar::CalendarSpec;
    /// use flotilla_units::tz::TimeZone;
    /// let s = CalendarSpec::parse("*-*-* 10:00 UTC").unwrap();
    /// // 2024-01-01 00:00:00 UTC -> 10:00 the same day.
    /// let t = 1_704_067_200_000_000;
    /// assert_eq!(s.next_elapse(t, &TimeZone::utc()), Some(t + 36_000_000_000));
    /// ```
    pub fn next_elapse(&self, after: u64, zone: &TimeZone) -> Option<u64> {
        if after > USEC_MAX {
            return None;
        }
        let utc;
        let zone = if self.zone == CalendarZone::Utc {
            utc = TimeZone::utc();
            &utc
        } else {
            zone
        };
        let usec = after + 1;
        let t = i64::try_from(usec / USEC_PER_SEC as u64).ok()?;
        let mut s = Search {
            spec: self,
            zone,
            guess: 0,
        };
        let tm = zone.localtime(t);
        let frac = (usec % USEC_PER_SEC as u64) as i64;
        let (tm, frac) = s.find_next(tm, frac)?;
        let t = zone.mktime(&tm, &mut s.guess);
        let secs = u64::try_from(t).ok()?;
        Some(secs * USEC_PER_SEC as u64 + frac as u64)
    }
}

/// Which field a step works on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Field {
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

struct Search<'a> {
    spec: &'a CalendarSpec,
    zone: &'a TimeZone,
    /// glibc's `mktime` remembers the last offset it found.
    guess: i32,
}

impl Search<'_> {
    /// `mktime` then `localtime`: the fields folded into a real time.
    fn normalized(&mut self, tm: &Tm) -> Tm {
        let t = self.zone.mktime(tm, &mut self.guess);
        self.zone.localtime(t)
    }

    /// The day of the month that is `day` days before the month's end
    /// (`1` = the last day), or -1 when that is not in this month.
    fn end_of_month(&mut self, tm: &Tm, day: i64) -> i64 {
        let mut t = *tm;
        t.mon += 1;
        t.mday = 1 - day;
        let n = self.normalized(&t);
        if n.mon != tm.mon {
            -1
        } else {
            n.mday
        }
    }

    /// The earliest value >= `*val` that `chain` matches, stored in `*val`;
    /// `Some(true)` if it changed, `None` if there is none.
    fn matching(
        &mut self,
        chain: &[Component],
        field: Field,
        tm: &Tm,
        val: &mut i64,
    ) -> Option<bool> {
        if chain.is_empty() {
            return Some(false);
        }
        let eom = self.spec.end_of_month && field == Field::Day;
        let mut best: Option<i64> = None;
        for c in chain {
            let (mut start, mut stop) = (c.start, c.stop.unwrap_or(-1));
            if eom {
                start = self.end_of_month(tm, start);
                stop = self.end_of_month(tm, stop);
                if stop > 0 {
                    std::mem::swap(&mut start, &mut stop);
                }
            }
            if start >= *val {
                if best.is_none_or(|b| start < b) {
                    best = Some(start);
                }
            } else if c.repeat > 0 {
                let k = start + c.repeat * (*val - start + c.repeat - 1).div_euclid(c.repeat);
                if best.is_none_or(|b| k < b) && (stop < 0 || k <= stop) {
                    best = Some(k);
                }
            }
        }
        let d = best?;
        let changed = *val != d;
        *val = d;
        Some(changed)
    }

    /// systemd's `tm_within_bounds`: `Err` past 2199 or when folding would
    /// go back in time; `Ok(true)` if the fields are a real time as they
    /// are; `Ok(false)` after replacing them by the folded time (with the
    /// fields below the one that moved reset to their start).
    fn within_bounds(&mut self, tm: &mut Tm) -> Result<bool, ()> {
        if tm.year > MAX_YEAR {
            return Err(());
        }
        let mut t = self.normalized(tm);
        let cmp = if t.year != tm.year {
            t.mon = 0;
            t.year.cmp(&tm.year)
        } else if t.mon != tm.mon {
            t.mday = 1;
            t.mon.cmp(&tm.mon)
        } else if t.mday != tm.mday {
            t.hour = 0;
            t.mday.cmp(&tm.mday)
        } else if t.hour != tm.hour {
            t.min = 0;
            t.hour.cmp(&tm.hour)
        } else if t.min != tm.min {
            t.sec = 0;
            t.min.cmp(&tm.min)
        } else {
            t.sec.cmp(&tm.sec)
        };
        match cmp {
            std::cmp::Ordering::Less => Err(()),
            std::cmp::Ordering::Equal => Ok(true),
            std::cmp::Ordering::Greater => {
                *tm = t;
                Ok(false)
            }
        }
    }

    fn weekday_matches(&mut self, tm: &Tm) -> bool {
        let Some(bits) = self.spec.weekdays else {
            return true;
        };
        let t = self.normalized(tm);
        bits & (1 << t.weekday()) != 0
    }

    /// systemd's `find_next`: the first matching wall time at or after
    /// `tm` + `usec` microseconds, or `None`.
    fn find_next(&mut self, tm: Tm, usec: i64) -> Option<(Tm, i64)> {
        let spec = self.spec;
        let mut c = tm;
        let mut usec = usec;
        fn reset(c: &mut Tm, usec: &mut i64, from: Field) {
            let f = from as u8;
            if f <= Field::Month as u8 {
                c.mon = 0;
            }
            if f <= Field::Day as u8 {
                c.mday = 1;
            }
            if f <= Field::Hour as u8 {
                c.hour = 0;
            }
            if f <= Field::Minute as u8 {
                c.min = 0;
            }
            c.sec = 0;
            *usec = 0;
        }
        for _ in 0..MAX_ITERATIONS {
            c = self.normalized(&c);
            c.isdst = None;

            let mut v = c.year;
            let r = self.matching(&spec.year, Field::Year, &c, &mut v)?;
            c.year = v;
            if r {
                reset(&mut c, &mut usec, Field::Month);
            }
            if self.within_bounds(&mut c) != Ok(true) {
                return None;
            }

            let mut v = c.mon + 1;
            let r = self.matching(&spec.month, Field::Month, &c, &mut v);
            c.mon = v - 1;
            if r == Some(true) {
                reset(&mut c, &mut usec, Field::Day);
            }
            match r.map(|_| self.within_bounds(&mut c)) {
                None | Some(Err(())) => {
                    c.year += 1;
                    reset(&mut c, &mut usec, Field::Month);
                    continue;
                }
                Some(Ok(false)) => continue,
                Some(Ok(true)) => {}
            }

            let mut v = c.mday;
            let r = self.matching(&spec.day, Field::Day, &c, &mut v);
            c.mday = v;
            if r == Some(true) {
                reset(&mut c, &mut usec, Field::Hour);
            }
            match r.map(|_| self.within_bounds(&mut c)) {
                None | Some(Err(())) => {
                    c.mon += 1;
                    reset(&mut c, &mut usec, Field::Day);
                    continue;
                }
                Some(Ok(false)) => continue,
                Some(Ok(true)) => {}
            }

            if !self.weekday_matches(&c) {
                c.mday += 1;
                reset(&mut c, &mut usec, Field::Hour);
                continue;
            }

            let mut v = c.hour;
            let r = self.matching(&spec.hour, Field::Hour, &c, &mut v);
            c.hour = v;
            if r == Some(true) {
                reset(&mut c, &mut usec, Field::Minute);
            }
            match r.map(|_| self.within_bounds(&mut c)) {
                None | Some(Err(())) => {
                    c.mday += 1;
                    reset(&mut c, &mut usec, Field::Hour);
                    continue;
                }
                // The hour may not exist (a daylight-saving gap): search
                // again from the folded time.
                Some(Ok(false)) => continue,
                Some(Ok(true)) => {}
            }

            let mut v = c.min;
            let r = self.matching(&spec.minute, Field::Minute, &c, &mut v);
            c.min = v;
            if r == Some(true) {
                reset(&mut c, &mut usec, Field::Second);
            }
            match r.map(|_| self.within_bounds(&mut c)) {
                None | Some(Err(())) => {
                    c.hour += 1;
                    reset(&mut c, &mut usec, Field::Minute);
                    continue;
                }
                Some(Ok(false)) => continue,
                Some(Ok(true)) => {}
            }

            let mut v = c.sec * USEC_PER_SEC + usec;
            let r = self.matching(&spec.second, Field::Second, &c, &mut v);
            usec = v % USEC_PER_SEC;
            c.sec = v / USEC_PER_SEC;
            match r.map(|_| self.within_bounds(&mut c)) {
                None | Some(Err(())) => {
                    c.min += 1;
                    reset(&mut c, &mut usec, Field::Second);
                    continue;
                }
                Some(Ok(false)) => continue,
                Some(Ok(true)) => {}
            }
            return Some((c, usec));
        }
        None
    }
}
