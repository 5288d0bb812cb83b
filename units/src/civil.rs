//! Civil (proleptic Gregorian) calendar arithmetic on plain integers: days
//! since 1970-01-01 from a date and back, weekdays, month lengths, and the
//! broken-down time [`Tm`] that the calendar search works on.

/// Seconds in a day.
pub(crate) const DAY: i64 = 86_400;

/// The number of days from 1970-01-01 to `year-month-day` (`month` 1..=12,
/// `day` 1..=31; no range check). Howard Hinnant's `days_from_civil`.
pub(crate) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date `(year, month 1..=12, day 1..=31)` of a day number since
/// 1970-01-01.
pub(crate) fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// True for a leap year.
pub(crate) fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The number of days of `month` (1..=12) in `year`.
pub(crate) fn month_days(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The weekday of a day number, 0 = Monday … 6 = Sunday (1970-01-01 was a
/// Thursday).
pub(crate) fn weekday(days: i64) -> i64 {
    (days + 3).rem_euclid(7)
}

/// A broken-down local time as C's `struct tm` holds it while the calendar
/// search adjusts it: any field may be out of range until [`Tm::wall`]
/// folds it in. `mon` counts from 0, as in C; `year` is the full year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tm {
    pub year: i64,
    pub mon: i64,
    pub mday: i64,
    pub hour: i64,
    pub min: i64,
    pub sec: i64,
    /// C's `tm_isdst`: `Some` when the time is known to be in (or out of)
    /// daylight saving time, `None` for "find out" (-1).
    pub isdst: Option<bool>,
}

impl Tm {
    /// The local wall-clock seconds since 1970-01-01 00:00 these fields
    /// name, folding out-of-range fields into the next larger unit as
    /// `mktime` does (day 32 of January is February 1st, hour 24 is the
    /// next day, day 0 the last day of the previous month).
    pub(crate) fn wall(&self) -> i64 {
        let year = self.year + self.mon.div_euclid(12);
        let mon = self.mon.rem_euclid(12);
        let days = days_from_civil(year, mon + 1, 1) + self.mday - 1;
        days * DAY + self.hour * 3600 + self.min * 60 + self.sec
    }

    /// The fields of local wall-clock seconds `wall` (with `isdst` as given).
    pub(crate) fn from_wall(wall: i64, isdst: Option<bool>) -> Tm {
        let days = wall.div_euclid(DAY);
        let secs = wall.rem_euclid(DAY);
        let (year, month, day) = civil_from_days(days);
        Tm {
            year,
            mon: month - 1,
            mday: day,
            hour: secs / 3600,
            min: secs / 60 % 60,
            sec: secs % 60,
            isdst,
        }
    }

    /// The weekday of these (in-range) fields, 0 = Monday.
    pub(crate) fn weekday(&self) -> i64 {
        weekday(self.wall().div_euclid(DAY))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_round_trip_over_four_centuries() {
        for d in -200_000..200_000 {
            let (y, m, dd) = civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(weekday(0), 3, "1970-01-01 was a Thursday");
    }

    #[test]
    fn wall_folds_out_of_range_fields_like_mktime() {
        let tm = |year, mon, mday, hour| Tm {
            year,
            mon,
            mday,
            hour,
            min: 0,
            sec: 0,
            isdst: None,
        };
        let w = |t: Tm| Tm::from_wall(t.wall(), None);
        assert_eq!(w(tm(2024, 0, 32, 0)), tm(2024, 1, 1, 0));
        assert_eq!(w(tm(2024, 12, 1, 0)), tm(2025, 0, 1, 0));
        assert_eq!(w(tm(2024, 2, 0, 0)), tm(2024, 1, 29, 0), "leap day");
        assert_eq!(w(tm(2023, 1, 29, 24)), tm(2023, 2, 2, 0));
        assert_eq!(month_days(1900, 2), 28);
        assert_eq!(month_days(2000, 2), 29);
    }
}
