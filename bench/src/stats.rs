//! Small statistics and the Markdown table every report is printed as. Pure functions only; no
//! clock and no I/O here.

/// The median of a non-empty sample (the mean of the two middle values for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The mean of a non-empty sample.
pub fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

/// The standard error of a sample's mean: its standard deviation (n − 1) over √n. NaN below two
/// values.
pub fn standard_error(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let m = mean(values);
    let variance = values.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
    (variance / n).sqrt()
}

/// The nearest-rank percentile `p` (0–100) of an already sorted sample.
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// `low–high` of a sample, for showing how far rounds spread.
pub fn range(values: &[f64], decimals: usize) -> String {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{low:.decimals$}–{high:.decimals$}")
}

/// `median (low–high)` of a sample: a figure with the spread beside it, so a difference can be
/// told from noise.
pub fn spread(values: &[f64], decimals: usize) -> String {
    format!(
        "{:.decimals$} ({})",
        median(values),
        range(values, decimals)
    )
}

/// The same for differences, signed: `+0.42 (+0.30 to +0.55)`.
pub fn spread_signed(values: &[f64], decimals: usize) -> String {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!(
        "{:+.decimals$} ({low:+.decimals$} to {high:+.decimals$})",
        median(values)
    )
}

/// A Markdown table built row by row.
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self) -> String {
        let line = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
        let mut out = line(&self.header);
        out.push_str(&line(&vec!["---".to_owned(); self.header.len()]));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn means_and_their_standard_error() {
        let sample = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert_eq!(mean(&sample), 5.0);
        // Sample standard deviation sqrt(32 / 7), over sqrt(8).
        let expected = (32.0f64 / 7.0).sqrt() / 8.0f64.sqrt();
        assert!((standard_error(&sample) - expected).abs() < 1e-12);
        assert!(standard_error(&[1.0]).is_nan());
    }

    #[test]
    fn nearest_rank_percentiles() {
        let sample: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&sample, 50.0), 50);
        assert_eq!(percentile(&sample, 99.0), 99);
        assert_eq!(percentile(&sample, 100.0), 100);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    #[test]
    fn spreads() {
        assert_eq!(spread(&[0.9, 1.0, 0.8], 2), "0.90 (0.80–1.00)");
        assert_eq!(spread_signed(&[0.5, -0.1, 0.2], 1), "+0.2 (-0.1 to +0.5)");
    }

    #[test]
    fn tables_are_markdown() {
        let mut t = Table::new(&["a", "b"]);
        t.row(vec!["1".into(), "2".into()]);
        assert_eq!(t.render(), "| a | b |\n| --- | --- |\n| 1 | 2 |\n");
    }
}
