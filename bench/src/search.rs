//! `bench search`: the search tool's statement in-process over SQLite, at growing history sizes
//! (issue 34: one statement served by the index, flat in latency from 100 to 100,000 events).
//! Each size is one project of that many focus events, written straight into SQLite (the
//! triggers index them as the tools' writes are indexed), of which a fixed five hold the
//! Japanese phrase searched for; the rest are hex that no query here matches. Each query is timed
//! `calls` times, interleaved across sizes, and reported as the median per-call time with the
//! spread of the per-round medians. A query of under three characters takes the LIKE fallback,
//! which reads every row, and is reported as such, not as flat.

use std::time::Instant;

use handoff_mcp::auth::scope::Scope;
use handoff_mcp::sqlite::{block_on, Sqlite};
use handoff_mcp::store::{self, Search};

use crate::stats::{self, Table};

pub struct Options {
    pub sizes: Vec<u64>,
    pub rounds: usize,
    pub calls: usize,
}

/// The queries timed: (label, query). The phrase matches five events at every size.
const QUERIES: [(&str, &str); 3] = [
    ("phrase, 5 hits (index)", "ログイン画面"),
    ("no hit (index)", "kubernetes"),
    ("two characters (LIKE fallback)", "画面"),
];

fn seeded(events: u64) -> Result<Sqlite, String> {
    let db = Sqlite::migrated();
    db.conn
        .execute_batch(&format!(
            "INSERT INTO project (id, name, north_star, created_at, updated_at, updated_by)
               VALUES ('p', 'p', 'bench', 0, 0, 'bench');
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {events})
             INSERT INTO event (project_id, at, what, value, note, client)
               SELECT 'p', i, 'focus',
                 CASE WHEN i % ({events} / 5) = 0 THEN 'ログイン画面を直す ' || i
                      ELSE 'focus ' || i || ' ' || hex(randomblob(12)) END,
                 hex(randomblob(8)), 'bench' FROM n;"
        ))
        .map_err(|e| format!("seeding {events} events: {e}"))?;
    Ok(db)
}

/// Microseconds per call of `query` on `db`, over `calls` calls; also checks the hits.
fn time(db: &Sqlite, query: &str, calls: usize) -> Result<(f64, u64), String> {
    let ask = || {
        block_on(store::search(
            db,
            Search {
                query,
                reach: Scope::All.readable("p").expect("all reaches p").reach(),
                kind: None,
                limit: 20,
            },
        ))
        .map_err(|e| format!("search {query:?}: {e}"))
    };
    let total = ask()?.total;
    let start = Instant::now();
    for _ in 0..calls {
        ask()?;
    }
    Ok((start.elapsed().as_secs_f64() * 1e6 / calls as f64, total))
}

pub fn run(opts: &Options) -> Result<String, String> {
    let dbs: Vec<(u64, Sqlite)> = opts
        .sizes
        .iter()
        .map(|&n| seeded(n).map(|db| (n, db)))
        .collect::<Result<_, _>>()?;
    // per[size][query] = each round's µs per call.
    let mut per = vec![vec![Vec::new(); QUERIES.len()]; dbs.len()];
    let mut hits = vec![vec![0; QUERIES.len()]; dbs.len()];
    for _ in 0..opts.rounds {
        for (s, (_, db)) in dbs.iter().enumerate() {
            for (q, (_, query)) in QUERIES.iter().enumerate() {
                let (us, total) = time(db, query, opts.calls)?;
                per[s][q].push(us);
                hits[s][q] = total;
            }
        }
    }
    let mut header = vec!["events".to_owned()];
    header.extend(
        QUERIES
            .iter()
            .map(|(label, _)| format!("{label}: µs/call (rounds)")),
    );
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = Table::new(&header);
    for (s, (n, _)) in dbs.iter().enumerate() {
        let mut row = vec![n.to_string()];
        for q in 0..QUERIES.len() {
            row.push(format!(
                "{}, {} hits",
                stats::spread(&per[s][q], 1),
                hits[s][q]
            ));
        }
        table.row(row);
    }
    Ok(format!(
        "### search, in-process over SQLite ({} rounds × {} calls per size and query)\n\n{}",
        opts.rounds,
        opts.calls,
        table.render()
    ))
}
