//! Result rows as the store reads them: each row's cells in the order of its statement's columns,
//! which the statement's `Query` names once, decoded from D1's JSON straight into cells, without
//! a map or a key string per row (docs/benchmarks-history.md has the profile that measured the
//! maps); and a cell read as what it holds (`text`, `int`, `opt_text`, `stamp`, `kind`; `first`
//! and `each` over a batch's rows), for every statement of the store, here beside `Row::get`.

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::StoreError;
use crate::model::{Kind, Stamp};

/// One value of a row. The app stores only text, integers and NULL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    Null,
    Int(i64),
    Text(String),
}

/// A result row: its cells, in the order of `columns`, the statement's own list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    columns: &'static [&'static str],
    cells: Vec<Cell>,
}

impl Row {
    /// A row of the statement whose columns are `columns`; its cells must be as many.
    pub fn new(columns: &'static [&'static str], cells: Vec<Cell>) -> Result<Row, StoreError> {
        if cells.len() != columns.len() {
            return Err(StoreError::Decode(NOT_THE_COLUMNS));
        }
        Ok(Row { columns, cells })
    }

    /// The cell of `column`; `None` when the statement has no such column.
    pub fn get(&self, column: &str) -> Option<&Cell> {
        let index = self.columns.iter().position(|c| *c == column)?;
        self.cells.get(index)
    }
}

/// An integer column; `None` for NULL.
pub(super) fn int(row: &Row, column: &'static str) -> Result<Option<i64>, StoreError> {
    match row.get(column) {
        Some(Cell::Null) => Ok(None),
        Some(Cell::Int(n)) => Ok(Some(*n)),
        _ => Err(StoreError::Decode(column)),
    }
}

/// A stamp from a time column and a client column.
pub(super) fn stamp(row: &Row, at: &'static str, by: &'static str) -> Result<Stamp, StoreError> {
    Ok(Stamp {
        at_ms: int(row, at)?,
        by: opt_text(row, by)?.unwrap_or("unknown").to_owned(),
    })
}

/// Each row decoded by `decode`, or the first row's failure: a loop, which the Worker carries in
/// fewer bytes than `map` and `collect` into a `Result` (132 bytes gzip for one of them).
pub(super) fn each<'a, T>(
    rows: &'a [Row],
    mut decode: impl FnMut(&'a Row) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        out.push(decode(row)?);
    }
    Ok(out)
}

/// The rows of a batch's first statement.
pub(super) fn first(results: &[Vec<Row>]) -> Result<&Vec<Row>, StoreError> {
    results
        .first()
        .ok_or(StoreError::Decode("batch returned no result"))
}

/// A text column.
pub(super) fn text<'a>(row: &'a Row, column: &'static str) -> Result<&'a str, StoreError> {
    match row.get(column) {
        Some(Cell::Text(s)) => Ok(s),
        _ => Err(StoreError::Decode(column)),
    }
}

/// A text column; `None` for NULL.
pub(super) fn opt_text<'a>(
    row: &'a Row,
    column: &'static str,
) -> Result<Option<&'a str>, StoreError> {
    match row.get(column) {
        Some(Cell::Null) => Ok(None),
        Some(Cell::Text(s)) => Ok(Some(s)),
        _ => Err(StoreError::Decode(column)),
    }
}

/// A task's `kind` column.
pub(super) fn kind(row: &Row) -> Result<Kind, StoreError> {
    Kind::parse(text(row, "kind")?).ok_or(StoreError::Decode("kind"))
}

const NOT_THE_COLUMNS: &str = "a row does not have its statement's columns";

/// One statement's rows from a JSON array: each row an object whose keys are `columns` in order
/// (what D1's `all` and `batch` give: it builds each object from the columns in order, and none
/// of the app's column names is a number, which JavaScript would order first) or an array of its
/// cells in order (what `raw` gives). Any other shape is refused whole. Read from a `str`, whose
/// strings serde_json then takes as valid UTF-8 without checking each again.
pub fn from_json(columns: &'static [&'static str], json: &str) -> Result<Vec<Row>, StoreError> {
    let mut de = serde_json::Deserializer::from_str(json);
    RowsSeed(columns)
        .deserialize(&mut de)
        .and_then(|rows| de.end().map(|()| rows))
        .map_err(|e| match e.classify() {
            serde_json::error::Category::Data => StoreError::Decode(NOT_THE_COLUMNS),
            _ => StoreError::Decode("rows are not JSON"),
        })
}

/// The error for a value of the wrong kind. Every visitor here refuses each kind it does not take
/// in these words, never through serde's default `invalid_type`: its message can print a number,
/// and that alone would link Rust's float formatting, about 14 KB of wasm.
fn refusal<E: de::Error>() -> E {
    E::custom(NOT_THE_COLUMNS)
}

/// The scalar visits of a visitor that takes none, each a `refusal`.
macro_rules! refuse_scalars {
    () => {
        fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
            Err(refusal())
        }
        fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
            Err(refusal())
        }
        fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
            Err(refusal())
        }
        fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
            Err(refusal())
        }
        fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
            Err(refusal())
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Err(refusal())
        }
    };
}

struct RowsSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for RowsSeed {
    type Value = Vec<Row>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Vec<Row>, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RowsSeed {
    type Value = Vec<Row>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of rows")
    }

    refuse_scalars!();

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Vec<Row>, A::Error> {
        Err(refusal())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<Row>, A::Error> {
        let mut rows = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(row) = seq.next_element_seed(RowSeed(self.0))? {
            rows.push(row);
        }
        Ok(rows)
    }
}

struct RowSeed(&'static [&'static str]);

impl<'de> DeserializeSeed<'de> for RowSeed {
    type Value = Row;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Row, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RowSeed {
    type Value = Row;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a row: an object of the statement's columns, or an array of its cells")
    }

    refuse_scalars!();

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Row, A::Error> {
        let mut cells = Vec::with_capacity(self.0.len());
        while let Some(cell) = seq.next_element()? {
            cells.push(cell);
        }
        Row::new(self.0, cells).map_err(|_| refusal())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Row, A::Error> {
        let mut cells = Vec::with_capacity(self.0.len());
        for column in self.0 {
            match map.next_key_seed(KeyIs(column))? {
                Some(true) => cells.push(map.next_value()?),
                _ => return Err(refusal()),
            }
        }
        match map.next_key::<IgnoredAny>()? {
            None => Ok(Row {
                columns: self.0,
                cells,
            }),
            Some(_) => Err(refusal()),
        }
    }
}

/// A key, read only to say whether it is the column expected there.
struct KeyIs(&'static str);

impl<'de> DeserializeSeed<'de> for KeyIs {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<bool, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KeyIs {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a column name")
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<bool, E> {
        Ok(key == self.0)
    }
}

impl<'de> de::Deserialize<'de> for Cell {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Cell, D::Error> {
        de.deserialize_any(CellVisitor)
    }
}

struct CellVisitor;

impl<'de> Visitor<'de> for CellVisitor {
    type Value = Cell;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("text, an integer or null")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Cell, E> {
        Ok(Cell::Null)
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Cell, E> {
        Ok(Cell::Int(n))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Cell, E> {
        i64::try_from(n).map(Cell::Int).map_err(|_| refusal())
    }

    /// D1 hands numbers over as JavaScript doubles; the app's integers stay within ±2^53, so
    /// one that is whole is read exactly, and any other is refused.
    fn visit_f64<E: de::Error>(self, n: f64) -> Result<Cell, E> {
        let whole = n as i64;
        match whole as f64 == n {
            true => Ok(Cell::Int(whole)),
            false => Err(refusal()),
        }
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Cell, E> {
        Ok(Cell::Text(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Cell, E> {
        Ok(Cell::Text(s))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Cell, E> {
        Err(refusal())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<Cell, A::Error> {
        Err(refusal())
    }

    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Cell, A::Error> {
        Err(refusal())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: &[&str] = &["part", "a", "b"];

    fn cells(row: &Row) -> Vec<Option<&Cell>> {
        COLUMNS.iter().map(|c| row.get(c)).collect()
    }

    #[test]
    fn objects_and_arrays_decode_alike() {
        let objects = from_json(
            COLUMNS,
            r#"[{"part":0,"a":"x \"q\" \u00e9","b":null},{"part":2.0,"a":"","b":1733000000000}]"#,
        )
        .unwrap();
        let arrays = from_json(
            COLUMNS,
            r#"[[0,"x \"q\" \u00e9",null],[2.0,"",1733000000000]]"#,
        )
        .unwrap();
        assert_eq!(objects, arrays);
        assert_eq!(
            cells(&objects[0]),
            [
                Some(&Cell::Int(0)),
                Some(&Cell::Text("x \"q\" é".into())),
                Some(&Cell::Null)
            ]
        );
        assert_eq!(objects[1].get("b"), Some(&Cell::Int(1_733_000_000_000)));
        assert_eq!(objects[1].get("nope"), None);
        assert_eq!(from_json(COLUMNS, "[]").unwrap(), Vec::new());
    }

    #[test]
    fn a_row_of_another_shape_is_refused() {
        let wrong = StoreError::Decode(NOT_THE_COLUMNS).to_string();
        for json in [
            r#"[{"part":0,"b":null,"a":"x"}]"#,
            r#"[{"part":0,"a":"x"}]"#,
            r#"[{"part":0,"a":"x","b":null,"c":1}]"#,
            r#"[[0,"x"]]"#,
            r#"[[0,"x",null,1]]"#,
            r#"[[0,"x",true]]"#,
            r#"[[0.5,"x",null]]"#,
            r#"[[0,"x",[1,2]]]"#,
            r#"[1]"#,
            r#"{"part":0}"#,
        ] {
            let got = from_json(COLUMNS, json).map_err(|e| e.to_string());
            assert_eq!(got, Err(wrong.clone()), "{}", json);
        }
        for json in ["[[0,\"x\",null]", "[] []", ""] {
            let got = from_json(COLUMNS, json).map_err(|e| e.to_string());
            assert_eq!(
                got,
                Err(StoreError::Decode("rows are not JSON").to_string()),
                "{}",
                json
            );
        }
    }
}
