//! D1's own failures: which of them pass (`classify`, from the error's text), and the one retry
//! every adapter runs its batches through (`once`). Pure: the D1 adapter hands in the message
//! text of the JavaScript error and the attempt to make again; no `worker::*`, no SQL here.
//!
//! Retrying a batch is safe because every batch of the app is: a read changes nothing, and each
//! write, repeated with the same statements, parameters and `Change` after its answer was lost,
//! leaves the same rows and no second history event (set_north_star and set_focus record an
//! event only when the value differs, add_task returns the open task with the same body,
//! complete_task records its event only while the task is open and tells its own earlier
//! completion by its `Change`; a migration's batch records its name under a UNIQUE key first).
//! tests/wire/faults.rs holds every tool to that at every point a batch can fail.

use std::future::Future;

use super::StoreError;

/// Fragments of the messages D1 documents as passing, with "Retry the operation" as the
/// recommended action (developers.cloudflare.com/d1/observability/debug-d1/, "List of
/// D1_ERRORs"; the retry-queries page's `shouldRetry` matches three of them the same way), each
/// as short as still names one message: "Network connection lost.", "D1 DB reset because its
/// code was updated." (the Durable Object D1 runs in words it "Durable Object reset …"),
/// "Internal error while starting up D1 DB storage caused object to be reset.", "Internal error
/// in D1 DB storage caused object to be reset.", "D1 DB storage operation exceeded timeout which
/// caused object to be reset." (the app's statements touch a handful of rows, so a timeout is
/// the load's, not the query's), "Cannot resolve D1 DB due to transient issue on remote node."
/// and "Can't read from request stream because client disconnected.".
const PASSING: &[&str] = &[
    "connection lost",
    "code was updated",
    "object to be reset",
    "transient issue",
    "client disconnected",
];

/// D1's overload messages ("D1 DB is overloaded. Requests queued for too long." and "D1 DB is
/// overloaded. Too many requests queued."; "Durable Object is overloaded." from the object
/// itself) pass too, but are not retried at once: D1's recommended action is to spread the load
/// over time, and the Durable Objects docs (reference/error-handling) say an overloaded error
/// should not be retried, since a retry worsens the overload.
const OVERLOADED: &str = "overloaded";

/// The class of a failure D1 reported, from its message (and cause): passing, overloaded, or
/// anything else, which is a refusal. A message this list does not know is not retried: the
/// memory and CPU limit resets ("exceeded its memory limit and was reset") are the query's own
/// and would recur, and a bare internal error may be a bug. The text is kept for the log.
pub fn classify(message: String) -> StoreError {
    if PASSING.iter().any(|fragment| message.contains(fragment)) {
        StoreError::Transient(message)
    } else if message.contains(OVERLOADED) {
        StoreError::Overloaded(message)
    } else {
        StoreError::Backend(message)
    }
}

/// Makes `attempt` (one round trip of one batch: the same statements, parameters and clock value
/// each time) and, if it failed in passing, makes it once more. Generic over what an attempt
/// answers, so the D1 adapter retries its round trip alone and decodes only the answer that
/// stays (retrying its whole batch future cost the Worker's bundle 0.3 KB gzip more). After a passing failure the first attempt may
/// have committed, so a second failure of any kind is reported as passing: "nothing was written"
/// would no longer be known. D1 also retries a read-only statement itself, up to twice, before
/// it answers (its 2025-09-11 changelog); this retry covers the writes, which it never retries.
pub async fn once<T, F, Fut>(attempt: F) -> Result<T, StoreError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<T, StoreError>>,
{
    match attempt().await {
        Err(StoreError::Transient(first)) => attempt()
            .await
            .map_err(|second| StoreError::Transient(format!("{first}; retried: {second}"))),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::future::ready;

    use super::*;
    use crate::sqlite::block_on;
    use crate::store::Rows;

    /// Every message D1's error list documents, with the class it gets, as D1 words it (with the
    /// `D1_ERROR: ` prefix and, as the adapter joins them, a cause after `: `).
    #[test]
    fn d1s_documented_messages_are_classified() {
        let passing = [
            "D1_ERROR: Network connection lost.",
            "D1_ERROR: D1 DB reset because its code was updated.",
            "Durable Object reset because its code was updated.",
            "D1_ERROR: Internal error while starting up D1 DB storage caused object to be reset.",
            "D1_ERROR: Internal error in D1 DB storage caused object to be reset.",
            "D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset.",
            "D1_ERROR: Cannot resolve D1 DB due to transient issue on remote node.",
            "D1_ERROR: Can't read from request stream because client disconnected.",
            "D1_ERROR: D1 batch failed: Network connection lost.",
        ];
        let overloaded = [
            "D1_ERROR: D1 DB is overloaded. Requests queued for too long.",
            "D1_ERROR: D1 DB is overloaded. Too many requests queued.",
            "Durable Object is overloaded. Too many requests queued.",
        ];
        let refused = [
            "D1_ERROR: D1 DB's isolate exceeded its memory limit and was reset.",
            "D1_ERROR: D1 DB exceeded its CPU time limit and was reset.",
            "D1_ERROR: no such table: project: SQLITE_ERROR",
            "D1_ERROR: UNIQUE constraint failed: d1_migrations.name: SQLITE_CONSTRAINT",
            "D1_TYPE_ERROR: Type 'undefined' not supported for value 'undefined'",
            "D1_EXEC_ERROR: Error in line 1: INSERTZ: sql error: near \"INSERTZ\": syntax error",
            "internal error; reference = 0123456789abcdef",
            "",
        ];
        for message in passing {
            let class = classify(message.into());
            assert_eq!(class, StoreError::Transient(message.into()));
        }
        for message in overloaded {
            let class = classify(message.into());
            assert_eq!(class, StoreError::Overloaded(message.into()));
        }
        for message in refused {
            let class = classify(message.into());
            assert_eq!(class, StoreError::Backend(message.into()));
        }
    }

    /// Answers each attempt with the next of `answers`, and counts the attempts.
    fn attempts(answers: Vec<Rows>) -> (Rows, usize) {
        let answers = RefCell::new(answers.into_iter());
        let made = RefCell::new(0);
        let rows = block_on(once(|| {
            *made.borrow_mut() += 1;
            ready(answers.borrow_mut().next().expect("no attempt too many"))
        }));
        (rows, made.into_inner())
    }

    fn passing(text: &str) -> Rows {
        Err(StoreError::Transient(text.into()))
    }

    #[test]
    fn a_passing_failure_is_retried_once_and_nothing_else_is() {
        assert_eq!(
            attempts(vec![Ok(vec![Vec::new()])]),
            (Ok(vec![Vec::new()]), 1)
        );
        assert_eq!(
            attempts(vec![passing("lost"), Ok(Vec::new())]),
            (Ok(Vec::new()), 2)
        );
        for once_only in [
            StoreError::Backend("refused".into()),
            StoreError::Overloaded("busy".into()),
            StoreError::Decode("shape"),
        ] {
            let answers = vec![Err(once_only.clone()), Ok(Vec::new())];
            assert_eq!(attempts(answers), (Err(once_only), 1));
        }
    }

    /// The first attempt may have committed, so whatever the second says, the outcome is passing:
    /// a refusal then must not read as "nothing was written". Both texts reach the log.
    #[test]
    fn a_second_failure_after_a_passing_one_is_passing() {
        for second in [
            passing("lost again"),
            Err(StoreError::Backend("UNIQUE constraint failed".into())),
            Err(StoreError::Decode("shape")),
        ] {
            let detail = second.clone().unwrap_err().to_string();
            assert_eq!(
                attempts(vec![passing("lost"), second]),
                (
                    Err(StoreError::Transient(format!("lost; retried: {detail}"))),
                    2
                )
            );
        }
    }
}
