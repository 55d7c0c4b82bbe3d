//! Domain types: what a project's state is, independent of SQL and of the wire.
//! Nothing here knows JSON-RPC, HTTP or D1.

/// Longest project id; ids are also used inside resource URIs, hence the short ASCII rule.
pub const PROJECT_ID_MAX: usize = 64;

/// The project id rule: 1-64 ASCII letters, digits, '-', '_', '.', starting with a letter or
/// digit. Tools, resources and prompts all name projects by it, and ids appear inside resource
/// URIs, which this keeps unambiguous.
pub fn is_project_id(value: &str) -> bool {
    let ok_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    (1..=PROJECT_ID_MAX).contains(&value.len())
        && value.chars().all(ok_char)
        && value.starts_with(|c: char| c.is_ascii_alphanumeric())
}

/// What kind of work a task is. `Cleanup` and `Record` are deferred ("demoted"): they wait until
/// the North Star is reached. `Main` tasks are kept but never listed by get_state, so the focus
/// stays the one thing to do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Main,
    Cleanup,
    Record,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Main, Kind::Cleanup, Kind::Record];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Cleanup => "cleanup",
            Kind::Record => "record",
        }
    }

    pub fn parse(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Deferred kinds are stored with demoted = 1.
    pub fn demoted(self) -> bool {
        !matches!(self, Kind::Main)
    }
}

/// When something was last set and by which client. `at_ms` is UTC milliseconds since the
/// epoch, `None` for what was stored before timestamps were kept; `by` is the client's name as
/// it sent it (untrusted), `unknown` when none was known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    pub at_ms: Option<i64>,
    pub by: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Focus {
    pub statement: String,
    pub why: Option<String>,
    /// The exit criterion: when the focus counts as done.
    pub done_when: Option<String>,
    pub set: Stamp,
}

/// The project's North Star and focus: the two lines every write ends with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor {
    pub north_star: String,
    pub focus: Option<Focus>,
}

/// An open deferred task as get_state lists it, and who added it (`None` from before that was
/// kept).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Deferred {
    pub id: String,
    pub kind: Kind,
    pub body: String,
    pub by: Option<String>,
}

/// Most open deferred tasks a project keeps: add_task refuses one more, and get_state reads at
/// most this many (a project filled before the cap existed still reads, its list ending with a
/// count of the rest). 30 keeps get_state within `render::STATE_BUDGET` with every text at its
/// limit (docs/http.md, "Input rules").
pub const OPEN_DEFERRED_MAX: usize = 30;

/// Everything get_state shows about one project.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub project_id: String,
    pub north_star: String,
    pub north_star_set: Stamp,
    /// When the project was last written, in any way (UTC ms; 0 when its rows are older than
    /// the server's timestamps): what tells a client that the state changed since it read it.
    pub written_at: i64,
    pub focus: Option<Focus>,
    /// The open deferred tasks listed, oldest first.
    pub deferred: Vec<Deferred>,
    /// How many more open deferred tasks the project has than `deferred` lists.
    pub unlisted: u64,
}

/// What an event of the history records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    NorthStar,
    Focus,
    Completed(Kind),
}

/// One entry of a project's history: a North Star change, a focus change or a completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub at_ms: Option<i64>,
    pub what: EventKind,
    /// The new North Star, the new focus statement, or the completed task's body.
    pub value: String,
    /// The focus's why, or the completion's evidence.
    pub note: Option<String>,
    /// The focus's exit criterion.
    pub done_when: Option<String>,
    pub client: String,
}

/// A project's newest events, newest first, and how many older ones were left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    pub project_id: String,
    pub events: Vec<Event>,
    pub older: u64,
}

/// What a search hit is: a North Star or focus the history recorded, or a task as it stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    NorthStar,
    Focus,
    /// A task: its kind, its id, and whether it is done (an open one can still be completed).
    Task {
        kind: Kind,
        id: String,
        done: bool,
    },
}

/// One record a search found. `at_ms` is when it was set, or for a task when it was completed
/// (when added, while open); `by` is the client that did it. The texts are the record's own:
/// the statement (or the task's body), the why (or the evidence) and the exit criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub at_ms: Option<i64>,
    pub project_id: String,
    pub record: Record,
    pub text: String,
    pub note: Option<String>,
    pub done_when: Option<String>,
    pub by: String,
}

/// The hits a search shows, newest first, and how many records matched in all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hits {
    pub hits: Vec<Hit>,
    pub total: u64,
}

/// Everything a project holds, row for row: what an export writes and an import writes back.
/// Times are UTC ms (`None` from before times were kept); clients as they sent their names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Export {
    pub project: ExportProject,
    pub focus: Option<ExportFocus>,
    /// In insertion order, done ones included.
    pub tasks: Vec<ExportTask>,
    /// Oldest first.
    pub history: Vec<ExportEvent>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportProject {
    pub id: String,
    pub north_star: String,
    pub created_at: Option<i64>,
    pub updated_at: Option<i64>,
    pub updated_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFocus {
    pub statement: String,
    pub why: Option<String>,
    pub done_when: Option<String>,
    pub created_at: Option<i64>,
    pub updated_at: Option<i64>,
    pub updated_by: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportTask {
    pub id: String,
    pub body: String,
    pub kind: Kind,
    pub done: bool,
    pub created_at: Option<i64>,
    pub created_by: Option<String>,
    pub updated_at: Option<i64>,
    pub completed_at: Option<i64>,
    pub completed_by: Option<String>,
    pub evidence: Option<String>,
}

/// One event of the history with the task it completed, if it is a completion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportEvent {
    pub event: Event,
    pub task_id: Option<String>,
}
