//! The first conversation docs/clients.md shows (the README links to it), byte for byte: the
//! `instructions` a client receives and what the model is answered in its first chat with a new
//! project and at the start of the next one, as docs/clients.md, "A first conversation", shows
//! them. Only the task ids differ: the server makes random UUIDs, this suite `task-N`, so each is
//! swapped for the doc's before comparing.

use std::fs;

use serde_json::{json, Value as Json};

use crate::support::{texts, Server, STATELESS};

const DOC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/clients.md");
/// The section the texts are shown in (its ```text blocks), up to the next heading of its level.
const SECTION: &str = "## A first conversation";
/// The ids the doc shows, in the order the tasks are added.
const IDS: [&str; 1] = ["0b9a3f2e-5c41-4d8e-9f67-2a1c8e4b7d90"];

/// A 2026-07-28 call as Claude Code 2.1.332 sends it (its name is what the history records).
fn call(s: &Server, method: &str, params: Json) -> Json {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
    });
    let name = params["name"].as_str().unwrap_or("").to_owned();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut headers = vec![("MCP-Protocol-Version", STATELESS), ("Mcp-Method", method)];
    if !name.is_empty() {
        headers.push(("Mcp-Name", name.as_str()));
    }
    let reply = s.post(&headers, &body);
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()["result"].clone()
}

fn tool(s: &Server, name: &str, arguments: Json) -> Vec<String> {
    texts(&call(
        s,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    ))
}

/// The text of every ```text block of the doc's section, in order.
fn shown() -> Vec<String> {
    let readme = fs::read_to_string(DOC).unwrap();
    let start = readme
        .find(&format!("\n{SECTION}\n"))
        .unwrap_or_else(|| panic!("docs/clients.md has no heading {SECTION:?}"));
    let rest = &readme[start + SECTION.len() + 2..];
    let end = ["\n# ", "\n## "]
        .iter()
        .filter_map(|heading| rest.find(heading))
        .min()
        .unwrap_or(rest.len());
    let mut blocks = Vec::new();
    let mut lines = rest[..end].lines();
    while let Some(line) = lines.next() {
        if line == "```text" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
            blocks.push(block.join("\n"));
        }
    }
    blocks
}

#[test]
fn the_readme_first_conversation_is_what_the_server_says() {
    let s = Server::new();
    let instructions = call(&s, "server/discover", json!({}))["instructions"]
        .as_str()
        .unwrap()
        .to_owned();
    let project = "recipe-box";
    let mut said = vec![instructions];
    said.extend(tool(&s, "get_state", json!({"project_id": project})));
    let north_star = "Share family recipes as a static site anyone can open offline";
    said.extend(tool(
        &s,
        "set_north_star",
        json!({"project_id": project, "text": north_star}),
    ));
    // The doc tells of these two without showing their answers.
    tool(
        &s,
        "set_focus",
        json!({"project_id": project, "statement": "Render one recipe page from Markdown",
               "why": "every other page is built the same way",
               "done_when": "recipes/miso-soup.md opens as a page"}),
    );
    tool(
        &s,
        "add_task",
        json!({"project_id": project, "body": "Pick a licence for the photos", "kind": "record"}),
    );
    said.extend(tool(&s, "get_state", json!({"project_id": project})));
    let said: Vec<String> = said
        .into_iter()
        .map(|text| {
            IDS.iter().enumerate().fold(text, |text, (i, id)| {
                text.replace(&format!("task-{}", i + 1), id)
            })
        })
        .collect();
    if std::env::var_os("PRINT_README").is_some() {
        for text in &said {
            println!("```text\n{text}\n```\n");
        }
    }
    assert_eq!(
        shown(),
        said,
        "docs/clients.md's {SECTION:?} differs from what the server says"
    );
}
