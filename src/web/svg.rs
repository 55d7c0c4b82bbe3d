//! The focus timeline: how the focus moved over time, as a small inline SVG drawn on the server.
//! Each focus is a bar from the moment it was set to the next one (the last runs to now), with
//! its statement and time as the bar's tooltip; the ends are labelled with their dates. Built
//! with `Html`, so statements are escaped like everywhere else. No script, no external reference.

use super::html::Html;
use crate::render;

const WIDTH: i64 = 600;
const LEFT: i64 = 4;
const RIGHT: i64 = WIDTH - 4;
/// Bar fills, in turn, so neighbouring foci are told apart.
const FILLS: [&str; 4] = ["#3b82f6", "#10b981", "#f59e0b", "#a855f7"];

/// Draws the focus changes `(set at, statement)`, oldest first, up to `now_ms`. Nothing when
/// no focus change has a time.
pub fn focus_timeline(h: &mut Html, changes: &[(i64, &str)], now_ms: i64) {
    let Some(&(start, _)) = changes.first() else {
        return;
    };
    let end = now_ms.max(changes.last().map_or(start, |c| c.0));
    let span = (end - start).max(1);
    let x = |at: i64| LEFT + (at - start) * (RIGHT - LEFT) / span;
    let count = match changes.len() {
        1 => "1 focus".to_owned(),
        n => format!("{n} focus changes"),
    };
    h.fill(
        "<svg viewBox=\"0 0 600 56\" role=img aria-labelledby=tl><title id=tl>{}, \
         {} to {} UTC</title><line x1=4 y1=22 x2=596 y2=22 stroke=currentColor stroke-opacity=.3 />",
        &[&count, &render::utc(start), &render::utc(end)],
    );
    for (i, &(at, statement)) in changes.iter().enumerate() {
        let until = changes.get(i + 1).map_or(end, |next| next.0);
        // At least 3 units wide, so a focus that lasted a moment still shows.
        let (x0, x1) = (x(at), x(until).max(x(at) + 3));
        h.fill(
            "<rect x={} y=12 width={} height=20 rx=3 fill=\"{}\"><title>{} UTC: {}</title></rect>",
            &[
                &x0.to_string(),
                &(x1 - x0).to_string(),
                FILLS[i % FILLS.len()],
                &render::utc(at),
                statement,
            ],
        );
    }
    h.fill(
        "<text x=4 y=50 font-size=12 fill=currentColor>{}</text>\
         <text x=596 y=50 font-size=12 fill=currentColor text-anchor=end>now</text></svg>",
        &[&render::utc(start)],
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    fn draw(changes: &[(i64, &str)], now: i64) -> String {
        let mut h = Html::default();
        focus_timeline(&mut h, changes, now);
        h.finish()
    }

    #[test]
    fn each_focus_is_a_bar_up_to_the_next_and_the_last_runs_to_now() {
        let t0 = 1_796_112_000_000;
        let svg = draw(
            &[(t0, "one"), (t0 + DAY, "<two>"), (t0 + 3 * DAY, "three")],
            t0 + 4 * DAY,
        );
        let bars: Vec<&str> = svg.split("<rect ").skip(1).collect();
        assert_eq!(bars.len(), 3);
        // 592 units for 4 days: 148 a day.
        assert!(bars[0].starts_with("x=4 y=12 width=148 "), "{}", bars[0]);
        assert!(bars[1].starts_with("x=152 y=12 width=296 "), "{}", bars[1]);
        assert!(bars[2].starts_with("x=448 y=12 width=148 "), "{}", bars[2]);
        assert!(bars[1].contains("<title>2026-12-02 08:00 UTC: &lt;two&gt;</title>"));
        // Neighbouring bars never share a colour: the fills go round in order.
        let fill = |bar: &str| bar.split("fill=\"").nth(1).unwrap()[..7].to_owned();
        let fills: Vec<String> = bars.iter().map(|b| fill(b)).collect();
        assert_eq!(fills, ["#3b82f6", "#10b981", "#f59e0b"]);
        assert!(svg.contains(
            "<title id=tl>3 focus changes, 2026-12-01 08:00 to 2026-12-05 08:00 UTC</title>"
        ));
        assert!(!svg.contains("<two>"));
    }

    #[test]
    fn a_moment_still_shows_and_nothing_is_drawn_without_times() {
        let t0 = 1_796_112_000_000;
        let svg = draw(&[(t0, "a"), (t0, "b")], t0);
        assert_eq!(svg.matches("width=3 ").count(), 2, "{svg}");
        assert_eq!(draw(&[], t0), "");
    }
}
