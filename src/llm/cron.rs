//! A schedule said in words, read as the five-field cron expression it states:
//! `"every weekday at 6:30 in the morning"` is `30 6 * * 1-5`, `"every night at 1:30 am"` is
//! `30 1 * * *`. Only a text that states both the days and one time of day unambiguously has a
//! reading: an hour from 1 to 12 needs `am`/`pm` or a part of the day (`in the morning`), and a
//! text with any other number, a negation or an exception (`"every day except Sunday"`) has none.

/// Longest text read as a schedule.
const MAX_CHARS: usize = 200;

const DAY_NAMES: [(&str, u8); 7] = [
    ("sunday", 0),
    ("monday", 1),
    ("tuesday", 2),
    ("wednesday", 3),
    ("thursday", 4),
    ("friday", 5),
    ("saturday", 6),
];

/// Words that make a schedule something other than "these days at this time".
const EXCEPTIONS: [&str; 8] = [
    "except",
    "but",
    "unless",
    "not",
    "no",
    "other",
    "second",
    "excluding",
];

/// The interval, in seconds, at which a five-field cron expression that only steps runs
/// (`*/15 * * * *` every 15 minutes, `0 */6 * * *` every 6 hours, `* * * * *` every minute,
/// `0 * * * *` every hour), with its step as written. Steps that do not divide the minute's
/// 60 or the hour's 24 run at uneven gaps, and a schedule with a time of day or days is no
/// interval at all.
pub fn cron_interval(text: &str) -> Option<(f64, f64)> {
    let fields: Vec<&str> = text.split_whitespace().collect();
    let [minute, hour, "*", "*", "*"] = fields.as_slice() else {
        return None;
    };
    let step = |field: &str, whole: u32| -> Option<u32> {
        match field {
            "*" => Some(1),
            _ => field
                .strip_prefix("*/")?
                .parse::<u32>()
                .ok()
                .filter(|n| *n >= 1 && *n < whole && whole.is_multiple_of(*n)),
        }
    };
    match (*minute, *hour) {
        ("0", "*") => Some((3600.0, 1.0)),
        ("0", h) => step(h, 24).map(|n| (f64::from(n) * 3600.0, f64::from(n))),
        (m, "*") => step(m, 60).map(|n| (f64::from(n) * 60.0, f64::from(n))),
        _ => None,
    }
}

/// The cron expression `text` states, if it states exactly one.
pub fn cron_in_words(text: &str) -> Option<String> {
    let lower = schedule_text(text)?;
    let tokens = plain_schedule_tokens(&lower)?;
    let days = days(&tokens)?;
    let (hour, minute) = time_of_day(&tokens)?;
    Some(format!("{minute} {hour} * * {days}"))
}

/// The cron expression of an interval said in words (`"every six hours, at a quarter past"`
/// is `15 */6 * * *`, `"every 15 minutes"` is `*/15 * * * *`, `"hourly, on the hour"` reads
/// nothing: no interval is counted). `every`, then a count (digits or a word, or none for one)
/// and `minutes` or `hours`; for hours, the minute past the hour: none or `on the hour` is 0,
/// `a quarter past` 15, `half past` 30, `N minutes past` N. The step must divide the minute's
/// 60 or the day's 24, and the text states no other number, no day and no exception.
pub fn interval_in_words(text: &str) -> Option<String> {
    let lower = schedule_text(text)?;
    let tokens = plain_schedule_tokens(&lower)?;
    let count = |t: &str| {
        t.parse::<u32>()
            .ok()
            .or_else(|| super::readings::number_word(t).map(|n| n as u32))
    };
    let every = tokens.iter().position(|t| *t == "every")?;
    let (step, unit_at) = match tokens.get(every + 1).copied().and_then(count) {
        Some(n) => (n, every + 2),
        None => (1, every + 1),
    };
    let unit = *tokens.get(unit_at)?;
    let rest = &tokens[unit_at + 1..];
    let numbers_left = rest
        .iter()
        .filter(|t| count(t).is_some() && **t != "a")
        .count();
    match unit {
        "minute" | "minutes" if numbers_left == 0 && rest.iter().all(|t| !is_time_word(t)) => {
            match step {
                1 => Some("* * * * *".to_string()),
                n if n < 60 && 60 % n == 0 => Some(format!("*/{n} * * * *")),
                _ => None,
            }
        }
        "hour" | "hours" => {
            let minute = minute_past(rest)?;
            match step {
                1 => Some(format!("{minute} * * * *")),
                n if n < 24 && 24 % n == 0 => Some(format!("{minute} */{n} * * *")),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `text` lower-cased, where it is short enough to be read as a schedule.
fn schedule_text(text: &str) -> Option<String> {
    (text.chars().count() <= MAX_CHARS).then(|| text.to_lowercase())
}

/// The words of a schedule that states no exception (`"except Sunday"`, `"not on weekends"`).
fn plain_schedule_tokens(lower: &str) -> Option<Vec<&str>> {
    let tokens = tokens(lower);
    (!tokens.iter().any(|t| EXCEPTIONS.contains(t))).then_some(tokens)
}

/// Words of a day or a time of day, which make an interval something else.
fn is_time_word(t: &str) -> bool {
    t.contains(':')
        || DAY_NAMES.iter().any(|(d, _)| t.starts_with(&d[..3]))
        || matches!(
            t,
            "am" | "pm"
                | "day"
                | "days"
                | "daily"
                | "night"
                | "morning"
                | "evening"
                | "weekday"
                | "weekdays"
        )
}

/// The minute past the hour the words after an hourly interval state: none (0), `on the hour`,
/// `a quarter past`, `half past`, `N minutes past`; any other number or time word reads none.
fn minute_past(rest: &[&str]) -> Option<u8> {
    if rest.iter().any(|t| is_time_word(t)) {
        return None;
    }
    let has = |pair: [&str; 2]| rest.windows(2).any(|w| w == pair);
    let numbers: Vec<u32> = rest.iter().filter_map(|t| t.parse::<u32>().ok()).collect();
    match numbers.as_slice() {
        [] if has(["quarter", "past"]) => Some(15),
        [] if has(["half", "past"]) => Some(30),
        [] if rest.iter().any(|t| matches!(*t, "quarter" | "half")) => None,
        [] => Some(0),
        [n] if (has(["minute", "past"]) || has(["minutes", "past"])) && *n < 60 => Some(*n as u8),
        _ => None,
    }
}

/// On UPDATE, the stored cron with its time of day moved to the one the text states
/// (`"03:30 instead of 02:00"` over `0 2 * * 0` is `30 3 * * 0`): the stored minute and hour
/// must be plain numbers, and the text, its remarks aside, must state clock times (`H:MM`,
/// with `am`/`pm` or on a 24-hour clock) that are one new time and at most the stored one
/// again, and no other number. The days and months stay as stored: a change note about the
/// time says nothing about them.
pub fn moved_time(said: &str, stored: &str) -> Option<String> {
    if said.chars().count() > MAX_CHARS {
        return None;
    }
    let fields: Vec<&str> = stored.split_whitespace().collect();
    let [minute, hour, days @ ..] = fields.as_slice() else {
        return None;
    };
    if days.len() != 3 {
        return None;
    }
    let stored_time: (u8, u8) = (hour.parse().ok()?, minute.parse().ok()?);
    let lower = crate::certainty::without_remarks(said).to_lowercase();
    let tokens = tokens(&lower);
    let mut new_time: Option<(u8, u8)> = None;
    for (i, token) in tokens.iter().enumerate() {
        if !token.chars().any(|c| c.is_ascii_digit()) {
            continue;
        }
        if !split_meridiem(token).0.contains(':') {
            return None;
        }
        let (hour, minute, _) = clock_at(&tokens, i)?;
        if (hour, minute) == stored_time {
            continue;
        }
        if new_time.is_some_and(|t| t != (hour, minute)) {
            return None;
        }
        new_time = Some((hour, minute));
    }
    let (hour, minute) = new_time?;
    Some(format!("{minute} {hour} {}", days.join(" ")))
}

/// The day-of-week field: every day (`every day`, `daily`, `every night`, `nightly`), the
/// working week (`weekday(s)`, `Mon-Fri`), the weekend, or the days named.
fn days(tokens: &[&str]) -> Option<String> {
    let every_day = tokens.windows(2).any(|w| {
        matches!(w[0], "every" | "each")
            && matches!(w[1], "day" | "night" | "morning" | "evening" | "afternoon")
    }) || tokens.iter().any(|t| matches!(*t, "daily" | "nightly"));
    let weekdays = tokens.iter().any(|t| {
        matches!(
            *t,
            "weekday" | "weekdays" | "mon-fri" | "monday-friday" | "monday-to-friday"
        )
    });
    let weekend = tokens.iter().any(|t| matches!(*t, "weekend" | "weekends"));
    let mut named: Vec<u8> = tokens.iter().filter_map(|t| day_number(t)).collect();
    named.sort_unstable();
    named.dedup();
    match (every_day, weekdays, weekend, named.is_empty()) {
        (true, false, false, true) => Some("*".into()),
        (false, true, false, true) => Some("1-5".into()),
        (false, false, true, true) => Some("0,6".into()),
        (false, false, false, false) => Some(
            named
                .iter()
                .map(u8::to_string)
                .collect::<Vec<_>>()
                .join(","),
        ),
        _ => None,
    }
}

/// A day named in full or by its plural (`monday`, `mondays`).
fn day_number(token: &str) -> Option<u8> {
    let singular = token.strip_suffix('s').unwrap_or(token);
    DAY_NAMES
        .iter()
        .find(|(name, _)| *name == token || *name == singular)
        .map(|(_, n)| *n)
}

/// The one time of day `text` states (`"8am"`, `"6:30pm"`, `"noon"`), as a 24-hour clock writes
/// it: with seconds (`08:00:00`), then without (`08:00`), for a field whose pattern takes one.
pub fn clock_spellings(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    match time_of_day(&tokens(&lower)) {
        Some((h, m)) => vec![format!("{h:02}:{m:02}:00"), format!("{h:02}:{m:02}")],
        None => Vec::new(),
    }
}

/// Is `written`, a 24-hour clock (`08:00:00`, `18:30`), the time of day `said` states?
pub fn same_time_of_day(said: &str, written: &str) -> bool {
    let clock = written
        .strip_suffix(":00")
        .filter(|c| c.len() >= 4)
        .unwrap_or(written);
    let Some((hour, minute, _)) = clock_time(clock) else {
        return false;
    };
    written.contains(':') && time_of_day(&tokens(&said.to_lowercase())) == Some((hour, minute))
}

/// The one time of day the text states, on a 24-hour clock.
fn time_of_day(tokens: &[&str]) -> Option<(u8, u8)> {
    let mut found: Option<(u8, u8, bool)> = None;
    let mut numbers = 0;
    for (i, token) in tokens.iter().enumerate() {
        if token.chars().any(|c| c.is_ascii_digit()) {
            numbers += 1;
            found = Some(clock_at(tokens, i)?);
        } else if matches!(*token, "midnight" | "noon" | "midday") {
            numbers += 1;
            found = Some((if *token == "midnight" { 0 } else { 12 }, 0, true));
        }
    }
    let (hour, minute, certain) = found.filter(|_| numbers == 1)?;
    if certain {
        return Some((hour, minute));
    }
    // An hour from 1 to 12 is in the morning or in the evening: the text must say which.
    let part = |words: &[&str]| tokens.iter().any(|t| words.contains(t));
    let pm = part(&["afternoon", "evening", "tonight"]);
    let am = part(&["morning"]);
    let night = part(&["night", "nightly"]);
    match (am, pm, night) {
        (true, false, false) => Some((hour % 12, minute)),
        (false, true, false) => twelve_hour(hour, true).map(|h| (h, minute)),
        // At night, 1 to 5 is after midnight and 8 to 11 before it; 6, 7 and 12 say neither.
        (false, false, true) if (1..=5).contains(&hour) => Some((hour, minute)),
        (false, false, true) if (8..=11).contains(&hour) => Some((hour + 12, minute)),
        _ => None,
    }
}

/// The lower-case words of a schedule, punctuation around them trimmed.
fn tokens(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')'))
        .map(|t| t.trim_matches(|c: char| matches!(c, '.' | '!' | '?' | '"' | '\'')))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The time of day at `tokens[i]` on a 24-hour clock (`6:30`, `1:30am`, `11 pm`), and whether
/// the text makes it certain: `am`/`pm`, a leading zero, or an hour only a 24-hour clock has.
fn clock_at(tokens: &[&str], i: usize) -> Option<(u8, u8, bool)> {
    let (clock, glued) = split_meridiem(tokens[i]);
    let (hour, minute, zero_padded) = clock_time(clock)?;
    let next = glued.or_else(|| tokens.get(i + 1).copied().filter(|t| is_meridiem(t)));
    let hour = match next {
        Some(m) => twelve_hour(hour, m.starts_with('p'))?,
        None => hour,
    };
    Some((
        hour,
        minute,
        next.is_some() || zero_padded || hour == 0 || hour > 12,
    ))
}

fn is_meridiem(token: &str) -> bool {
    matches!(token, "am" | "pm" | "a.m" | "p.m")
}

/// `"1:30am"` → (`"1:30"`, `Some("am")`).
fn split_meridiem(token: &str) -> (&str, Option<&str>) {
    for m in ["am", "pm"] {
        if let Some(clock) = token.strip_suffix(m) {
            if clock.ends_with(|c: char| c.is_ascii_digit()) {
                return (clock, Some(m));
            }
        }
    }
    (token, None)
}

/// `H`, `H:MM` or `HH:MM` on a clock; whether the hour was written with a leading zero.
fn clock_time(token: &str) -> Option<(u8, u8, bool)> {
    let (h, m) = match token.split_once(':') {
        Some((h, m)) if m.len() == 2 => (h, m),
        Some(_) => return None,
        None => (token, "0"),
    };
    if h.is_empty() || h.len() > 2 || !h.chars().chain(m.chars()).all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (hour, minute): (u8, u8) = (h.parse().ok()?, m.parse().ok()?);
    (hour < 24 && minute < 60).then_some((hour, minute, h.len() == 2 && h.starts_with('0')))
}

/// An hour from 1 to 12 with `am` or `pm`, on a 24-hour clock.
fn twelve_hour(hour: u8, pm: bool) -> Option<u8> {
    if !(1..=12).contains(&hour) {
        return None;
    }
    Some(match (hour, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (h, false) => h,
        (h, true) => h + 12,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_of_day_is_written_as_a_24_hour_clock() {
        assert_eq!(clock_spellings("8am"), ["08:00:00", "08:00"]);
        assert_eq!(clock_spellings("6:30pm")[0], "18:30:00");
        assert!(clock_spellings("6:30").is_empty());
        assert!(same_time_of_day("6:30pm", "18:30:00"));
        assert!(same_time_of_day("8am", "08:00"));
        assert!(!same_time_of_day("8am", "20:00:00"));
        assert!(!same_time_of_day("8am", "8"));
    }

    #[test]
    fn a_cron_that_only_steps_is_an_interval() {
        for (text, seconds) in [
            ("*/15 * * * *", 900.0),
            ("* * * * *", 60.0),
            ("0 * * * *", 3600.0),
            ("0 */6 * * *", 21600.0),
        ] {
            assert_eq!(cron_interval(text).map(|(s, _)| s), Some(seconds), "{text}");
        }
        // Uneven steps, a time of day, days, or no cron at all.
        for text in [
            "*/7 * * * *",
            "30 2 * * *",
            "*/15 * * * 1-5",
            "5 */6 * * *",
            "*/15 * * *",
            "every 15 minutes",
        ] {
            assert_eq!(cron_interval(text), None, "{text}");
        }
    }

    #[test]
    fn an_interval_in_words_is_its_stepped_cron() {
        let read = |t: &str| interval_in_words(t);
        assert_eq!(
            read("every six hours, at a quarter past").as_deref(),
            Some("15 */6 * * *")
        );
        assert_eq!(read("every 15 minutes").as_deref(), Some("*/15 * * * *"));
        assert_eq!(
            read("every hour, on the hour").as_deref(),
            Some("0 * * * *")
        );
        assert_eq!(
            read("every 2 hours, 10 minutes past").as_deref(),
            Some("10 */2 * * *")
        );
        for text in [
            "every 7 hours",
            "every 6 hours from 2 am",
            "every 6 hours except at night",
            "every 45 minutes",
            "every day at 6 am",
            "every 6 hours, at a quarter to",
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }

    #[test]
    fn a_time_said_for_a_stored_cron_moves_only_its_time() {
        assert_eq!(
            moved_time(
                "03:30 instead of 02:00 (the dump now runs at 2)",
                "0 2 * * 0"
            )
            .as_deref(),
            Some("30 3 * * 0")
        );
        assert_eq!(
            moved_time("at 11:15pm from now on", "0 1 * * 1-5").as_deref(),
            Some("15 23 * * 1-5")
        );
        // Two new times, a bare number, a stored time that is no plain number: no reading.
        assert!(moved_time("03:30 or 04:00", "0 2 * * 0").is_none());
        assert!(moved_time("03:30 on day 5", "0 2 * * 0").is_none());
        assert!(moved_time("03:30", "*/5 * * * *").is_none());
        assert!(moved_time("02:00", "0 2 * * 0").is_none());
        assert!(moved_time("03:30", "@daily").is_none());
    }

    #[test]
    fn a_schedule_in_words_is_the_cron_it_states() {
        let read = |t: &str| cron_in_words(t);
        assert_eq!(
            read("every weekday at 6:30 in the morning").as_deref(),
            Some("30 6 * * 1-5")
        );
        assert_eq!(
            read("every night at 1:30 am").as_deref(),
            Some("30 1 * * *")
        );
        assert_eq!(read("daily at 18:45").as_deref(), Some("45 18 * * *"));
        assert_eq!(
            read("Mondays and Thursdays at 9pm").as_deref(),
            Some("0 21 * * 1,4")
        );
        assert_eq!(read("every day at midnight").as_deref(), Some("0 0 * * *"));
        assert_eq!(read("weekends at 07:00").as_deref(), Some("0 7 * * 0,6"));
        assert_eq!(read("every night at 11").as_deref(), Some("0 23 * * *"));
    }

    #[test]
    fn a_schedule_that_leaves_a_doubt_has_no_reading() {
        for text in [
            // 6:30 in the morning or in the evening?
            "every weekday at 6:30",
            // No days, or two times.
            "at 6:30 am",
            "every day at 6 am and 6 pm",
            // Exceptions and intervals are more than days and a time.
            "every day except Sunday at 3 am",
            "every other day at 3 am",
            "every 2 days at 3 am",
            // At night, 6 or 7 says neither.
            "every night at 6",
            "every day at 25:00",
        ] {
            assert_eq!(cron_in_words(text), None, "{text}");
        }
    }
}
