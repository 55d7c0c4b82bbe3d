//! The export document (docs/export-format.md): a whole project as one JSON text, versioned,
//! and its reading back for an import, refused whole, with a sentence that names the record
//! and the rule, when anything in it breaks a rule the tools keep: each text is checked by the
//! very tool arguments that would have written it (`tools::args::check`), so the limits, the
//! control characters and the kinds are the tools' own. No storage and no HTTP here.

use std::borrow::Cow;

use serde_json::{json, Value as Json};

use crate::context::CLIENT_MAX;
use crate::json_read::Node;
use crate::json_write;
use crate::model::{
    self, Event, EventKind, Export, ExportEvent, ExportFocus, ExportProject, ExportTask, Kind,
};
use crate::render;
use crate::store;
use crate::tools::{self, args};

/// What the document says it is, and the one version this server writes and reads.
pub const FORMAT: &str = "handoff-mcp project";
pub const VERSION: i64 = 1;

/// The document as JSON text. Members are written in name order (serde_json's maps).
pub fn to_json(export: &Export, exported_at_ms: i64) -> String {
    let p = &export.project;
    let focus = export.focus.as_ref().map(|f| {
        json!({"statement": f.statement, "why": f.why, "done_when": f.done_when,
               "created_at": f.created_at, "updated_at": f.updated_at, "updated_by": f.updated_by})
    });
    let tasks: Vec<Json> = export
        .tasks
        .iter()
        .map(|t| {
            json!({"id": t.id, "body": t.body, "kind": t.kind.as_str(),
                   "status": if t.done { "done" } else { "open" },
                   "created_at": t.created_at, "created_by": t.created_by,
                   "updated_at": t.updated_at, "completed_at": t.completed_at,
                   "completed_by": t.completed_by, "evidence": t.evidence})
        })
        .collect();
    let history: Vec<Json> = export
        .history
        .iter()
        .map(|e| {
            let (what, kind) = match e.event.what {
                EventKind::NorthStar => ("north_star", None),
                EventKind::Focus => ("focus", None),
                EventKind::Completed(kind) => ("completed", Some(kind.as_str())),
            };
            json!({"at": e.event.at_ms, "what": what, "value": e.event.value,
                   "note": e.event.note, "done_when": e.event.done_when,
                   "task_id": e.task_id, "kind": kind, "client": e.event.client})
        })
        .collect();
    json_write::to_text(&json!({
        "format": FORMAT,
        "version": VERSION,
        "exported_at": exported_at_ms,
        "project": {"id": p.id, "north_star": p.north_star, "created_at": p.created_at,
                    "updated_at": p.updated_at, "updated_by": p.updated_by},
        "focus": focus,
        "tasks": tasks,
        "history": history,
    }))
}

/// Reads a document for an import into project `into` (its own id when `None`), checking every
/// record against the tools' rules. The refusal names the record and the rule.
pub fn parse(text: &[u8], into: Option<&str>) -> Result<Export, String> {
    let doc = Node::parse(text).map_err(|e| format!("the document is not JSON ({e})"))?;
    let top = Obj::new(
        &doc,
        "the document",
        &[
            "format",
            "version",
            "exported_at",
            "project",
            "focus",
            "tasks",
            "history",
        ],
    )?;
    if top.get("format").as_str() != Some(FORMAT) {
        return Err(format!(
            "the document's \"format\" must be \"{FORMAT}\"; this is not a handoff-mcp export"
        ));
    }
    match top.get("version") {
        Node::Number(n) if n.as_i64() == Some(VERSION) => {}
        other => {
            return Err(format!(
                "the document's version is {}; this server reads version {VERSION} only",
                short(other)
            ))
        }
    }
    top.time("exported_at")?;
    let p = Obj::new(
        top.get("project"),
        "project",
        &["id", "north_star", "created_at", "updated_at", "updated_by"],
    )?;
    let own = p.text("id")?;
    let id = into.unwrap_or(own).to_owned();
    if !model::is_project_id(&id) {
        return Err(format!(
            "the project id \"{}\" breaks the project-id rule: 1-{} ASCII letters, digits, '-', \
             '_' or '.', starting with a letter or digit",
            render::preview(&id),
            model::PROJECT_ID_MAX
        ));
    }
    let project = ExportProject {
        north_star: p.text("north_star")?.to_owned(),
        created_at: p.time("created_at")?,
        updated_at: p.time("updated_at")?,
        updated_by: p.client("updated_by", true)?,
        id,
    };
    checked(
        "project",
        "set_north_star",
        &[
            ("project_id", Some(&project.id)),
            ("text", Some(&project.north_star)),
        ],
    )?;
    let focus = match top.get("focus") {
        Node::Null => None,
        node => Some(focus(node, &project.id)?),
    };
    let tasks = list(top.get("tasks"), "tasks", |node, at| {
        task(node, at, &project.id)
    })?;
    for (i, t) in tasks.iter().enumerate() {
        if tasks[..i].iter().any(|earlier| earlier.id == t.id) {
            return Err(format!(
                "tasks[{i}]: the task id \"{}\" is given twice",
                render::preview(&t.id)
            ));
        }
    }
    let history = list(top.get("history"), "history", |node, at| {
        event(node, at, &project.id)
    })?;
    Ok(Export {
        project,
        focus,
        tasks,
        history,
    })
}

fn focus(node: &Node, project: &str) -> Result<ExportFocus, String> {
    let f = Obj::new(
        node,
        "focus",
        &[
            "statement",
            "why",
            "done_when",
            "created_at",
            "updated_at",
            "updated_by",
        ],
    )?;
    let focus = ExportFocus {
        statement: f.text("statement")?.to_owned(),
        why: f.opt_text("why")?,
        done_when: f.opt_text("done_when")?,
        created_at: f.time("created_at")?,
        updated_at: f.time("updated_at")?,
        updated_by: f.client("updated_by", true)?,
    };
    checked(
        "focus",
        "set_focus",
        &[
            ("project_id", Some(project)),
            ("statement", Some(&focus.statement)),
            ("why", focus.why.as_deref()),
            ("done_when", focus.done_when.as_deref()),
        ],
    )?;
    Ok(focus)
}

fn task(node: &Node, at: &str, project: &str) -> Result<ExportTask, String> {
    // A task's members are the columns the export reads it with, name for name.
    let t = Obj::new(node, at, store::EXPORT_TASKS.columns)?;
    let done = match t.text("status")? {
        "open" => false,
        "done" => true,
        other => {
            return Err(format!(
                "{at}: status must be open or done; got \"{}\"",
                render::preview(other)
            ))
        }
    };
    let task = ExportTask {
        id: t.text("id")?.to_owned(),
        body: t.text("body")?.to_owned(),
        kind: t.kind("kind")?,
        done,
        created_at: t.time("created_at")?,
        created_by: t.client("created_by", true)?,
        updated_at: t.time("updated_at")?,
        completed_at: t.time("completed_at")?,
        completed_by: t.client("completed_by", true)?,
        evidence: t.opt_text("evidence")?,
    };
    checked(
        at,
        "add_task",
        &[
            ("project_id", Some(project)),
            ("body", Some(&task.body)),
            ("kind", Some(task.kind.as_str())),
        ],
    )?;
    checked(
        at,
        "complete_task",
        &[
            ("task_id", Some(&task.id)),
            ("evidence", task.evidence.as_deref()),
        ],
    )?;
    Ok(task)
}

fn event(node: &Node, at: &str, project: &str) -> Result<ExportEvent, String> {
    let e = Obj::new(
        node,
        at,
        &[
            "at",
            "what",
            "value",
            "note",
            "done_when",
            "task_id",
            "kind",
            "client",
        ],
    )?;
    let value = e.text("value")?.to_owned();
    let note = e.opt_text("note")?;
    let done_when = e.opt_text("done_when")?;
    let task_id = e.opt_text("task_id")?;
    let kind = match e.get("kind") {
        Node::Null => None,
        _ => Some(e.kind("kind")?),
    };
    let (what, tool, arguments) = match (e.text("what")?, kind) {
        ("north_star", None) => (EventKind::NorthStar, "set_north_star", vec![("text", Some(value.as_str()))]),
        ("focus", None) => (
            EventKind::Focus,
            "set_focus",
            vec![
                ("statement", Some(value.as_str())),
                ("why", note.as_deref()),
                ("done_when", done_when.as_deref()),
            ],
        ),
        ("completed", Some(kind)) => (
            EventKind::Completed(kind),
            "add_task",
            vec![("body", Some(value.as_str())), ("kind", Some(kind.as_str()))],
        ),
        (what, _) => {
            return Err(format!(
                "{at}: what must be north_star or focus (with no kind) or completed (with its task's kind); got \"{}\"",
                render::preview(what)
            ))
        }
    };
    let mut arguments = arguments;
    arguments.push(("project_id", Some(project)));
    checked(at, tool, &arguments)?;
    if let EventKind::Completed(_) = what {
        let completed = [
            ("task_id", task_id.as_deref()),
            ("evidence", note.as_deref()),
        ];
        checked(at, "complete_task", &completed)?;
    }
    Ok(ExportEvent {
        event: Event {
            at_ms: e.time("at")?,
            what,
            value,
            note,
            done_when,
            client: e.client("client", false)?.unwrap_or_default(),
        },
        task_id,
    })
}

/// Checks texts by the arguments of the tool that writes them; the refusal names `at`.
fn checked(at: &str, tool: &str, arguments: &[(&str, Option<&str>)]) -> Result<(), String> {
    let def = tools::find(tool).expect("a tool of ours");
    let members = arguments
        .iter()
        .filter_map(|(name, value)| Some((Cow::from(*name), Node::String(Cow::from((*value)?)))))
        .collect();
    args::check(def, Some(&Node::Object(members)))
        .map(drop)
        .map_err(|why| format!("{at}: {why}"))
}

/// Each item of an array member, read by `read` with its place (`tasks[3]`).
fn list<T>(
    node: &Node,
    name: &str,
    read: impl Fn(&Node, &str) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let Node::Array(items) = node else {
        return Err(format!("{name} must be an array"));
    };
    let mut all = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        all.push(read(item, &format!("{name}[{i}]"))?);
    }
    Ok(all)
}

/// A JSON value in a sentence: a short string quoted, anything else by its kind.
fn short(node: &Node) -> String {
    match node {
        Node::Number(n) => n.to_string(),
        Node::String(s) => format!("\"{}\"", render::preview(s)),
        Node::Null => "missing".into(),
        _ => "not a number".into(),
    }
}

/// An object of the document, whose members are exactly the ones named (each may be absent,
/// which reads as null): an unknown member is refused, not dropped.
struct Obj<'n, 'a> {
    node: &'n Node<'a>,
    at: &'n str,
}

const NULL: Node<'static> = Node::Null;

impl<'n, 'a> Obj<'n, 'a> {
    fn new(node: &'n Node<'a>, at: &'n str, names: &[&str]) -> Result<Self, String> {
        let Node::Object(members) = node else {
            return Err(format!("{at} must be an object"));
        };
        if let Some((unknown, _)) = members.iter().find(|(k, _)| !names.contains(&k.as_ref())) {
            return Err(format!(
                "{at} has a member \"{}\" that this version does not have",
                render::preview(unknown)
            ));
        }
        Ok(Obj { node, at })
    }

    fn get(&self, name: &str) -> &'n Node<'a> {
        self.node.get(name).unwrap_or(&NULL)
    }

    fn text(&self, name: &str) -> Result<&'n str, String> {
        self.get(name)
            .as_str()
            .ok_or_else(|| format!("{}: {name} must be a string", self.at))
    }

    fn opt_text(&self, name: &str) -> Result<Option<String>, String> {
        match self.get(name) {
            Node::Null => Ok(None),
            _ => self.text(name).map(|s| Some(s.to_owned())),
        }
    }

    fn kind(&self, name: &str) -> Result<Kind, String> {
        let kind = self.text(name)?;
        Kind::parse(kind).ok_or_else(|| {
            format!(
                "{}: {name} must be one of main, cleanup, record; got \"{}\"",
                self.at,
                render::preview(kind)
            )
        })
    }

    /// A time: null, or whole milliseconds since the epoch within JSON's exact integers.
    fn time(&self, name: &str) -> Result<Option<i64>, String> {
        match self.get(name) {
            Node::Null => Ok(None),
            Node::Number(n) => match n.as_i64() {
                Some(ms @ 0..=MAX_MS) => Ok(Some(ms)),
                _ => Err(format!(
                    "{}: {name} must be milliseconds since 1970 (0 to 2^53), got {n}",
                    self.at
                )),
            },
            _ => Err(format!(
                "{}: {name} must be a number of milliseconds or null",
                self.at
            )),
        }
    }

    /// A client's name as the server keeps it: at most `CLIENT_MAX` characters, no control
    /// character; null only where `nullable`.
    fn client(&self, name: &str, nullable: bool) -> Result<Option<String>, String> {
        if nullable && self.get(name).is_null() {
            return Ok(None);
        }
        let client = self.text(name)?;
        if client.chars().count() > CLIENT_MAX || client.chars().any(char::is_control) {
            return Err(format!(
                "{}: {name} must be at most {CLIENT_MAX} characters with no control character",
                self.at
            ));
        }
        Ok(Some(client.to_owned()))
    }
}

/// The largest integer JSON carries exactly (2^53).
const MAX_MS: i64 = 1 << 53;
