//! Text for a terminal: control characters from session data made visible, times in ISO 8601.

use std::borrow::Cow;

/// One line of session data, safe on a terminal: every control character (C0, DEL, C1; ESC
/// and so the CSI/OSC sequences it starts; NUL; newline and tab too, which would break the
/// line) and every bidirectional override is printed as a visible escape such as `\u{1b}`.
pub(crate) fn visible(text: &str) -> Cow<'_, str> {
    escape_controls(text, false)
}

/// [`visible`] for text printed as a block: its newlines and tabs stay layout.
pub(crate) fn visible_block(text: &str) -> Cow<'_, str> {
    escape_controls(text, true)
}

pub(crate) fn escape_controls(text: &str, keep_layout: bool) -> Cow<'_, str> {
    let is_layout = |c: char| keep_layout && matches!(c, '\n' | '\t');
    // Bidi embeddings, overrides and isolates reorder what follows them on screen.
    let is_hidden = |c: char| c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if !text.chars().any(|c| is_hidden(c) && !is_layout(c)) {
        return Cow::Borrowed(text);
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if is_layout(c) || !is_hidden(c) => shown.push(c),
            '\n' => shown.push_str("\\n"),
            '\t' => shown.push_str("\\t"),
            '\r' => shown.push_str("\\r"),
            c => shown.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    Cow::Owned(shown)
}

/// Epoch milliseconds as ISO 8601 UTC, exactly as JavaScript's `Date.prototype.toISOString`
/// prints them (`2026-11-30T12:34:56.789Z`; years outside 0–9999 as `+275760` / `-000001`).
/// Outside JavaScript's date range (±8.64e15 ms) the number itself is printed.
pub(crate) fn iso_time(epoch_ms: i64) -> String {
    const JS_DATE_LIMIT_MS: i64 = 8_640_000_000_000_000;
    if epoch_ms.abs() > JS_DATE_LIMIT_MS {
        return format!("{epoch_ms} (epoch ms)");
    }
    let (days, ms_of_day) = (epoch_ms.div_euclid(86_400_000), epoch_ms.rem_euclid(86_400_000));
    let (year, month, day) = civil_from_days(days);
    let year = match year {
        0..=9999 => format!("{year:04}"),
        _ => format!("{}{:06}", if year < 0 { '-' } else { '+' }, year.abs()),
    };
    let (hours, minutes) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (seconds, millis) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    format!("{year}-{month:02}-{day:02}T{hours:02}:{minutes:02}:{seconds:02}.{millis:03}Z")
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's
/// `civil_from_days`: shift to eras of 400 years starting on 0000-03-01).
pub(crate) fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::{iso_time, visible, visible_block};

    #[test]
    fn iso_time_prints_what_to_iso_string_prints() {
        // Each expected value is `new Date(ms).toISOString()` in Node.
        let cases = [
            (0, "1970-01-01T00:00:00.000Z"),
            (-1, "1969-12-31T23:59:59.999Z"),
            (951_782_400_000, "2000-02-29T00:00:00.000Z"),
            (1_796_042_096_789, "2026-11-30T12:34:56.789Z"),
            (4_107_542_399_999, "2100-02-28T23:59:59.999Z"),
            (-62_167_219_200_000, "0000-01-01T00:00:00.000Z"),
            (-62_167_219_200_001, "-000001-12-31T23:59:59.999Z"),
            (253_402_300_800_000, "+010000-01-01T00:00:00.000Z"),
            (8_640_000_000_000_000, "+275760-09-13T00:00:00.000Z"),
            (-8_640_000_000_000_000, "-271821-04-20T00:00:00.000Z"),
        ];
        for (ms, iso) in cases {
            assert_eq!(iso_time(ms), iso, "{ms}");
        }
        assert_eq!(iso_time(8_640_000_000_000_001), "8640000000000001 (epoch ms)");
    }

    #[test]
    fn controls_are_shown_not_sent() {
        assert_eq!(
            visible("a\u{1b}]0;x\u{7}b\0\u{7f}\u{9b}"),
            "a\\u{1b}]0;x\\u{7}b\\u{0}\\u{7f}\\u{9b}"
        );
        assert_eq!(visible("one\ntwo\tthree\r"), "one\\ntwo\\tthree\\r");
        assert_eq!(visible_block("one\ntwo\tthree\u{1b}[2J"), "one\ntwo\tthree\\u{1b}[2J");
        assert_eq!(visible("abc\u{202e}cba"), "abc\\u{202e}cba");
        assert!(matches!(visible("plain, ünïcödé, 修复"), std::borrow::Cow::Borrowed(_)));
    }
}
