"""The handoff scenario the stand-in model plays through Claude Code, in three chat generations.

A writes the project, B reads it and completes the cleanup task, C reads it again and searches
for the task B completed. This module
holds the inputs, the scripted steps, and the texts the model must be shown, written out from the
contract here (like the smoke client, the harness shares no code with the server).
"""

import re

NORTH_STAR = "handoff-mcp を Claude Code から使えるようにする"
FOCUS = "Claude Code の実機テストを通す"
WHY = "モデルが読むものを証明するため"
TASKS = [
    ("main", "stand-in モデルを書く"),
    ("cleanup", "一時ファイルを消す"),
    ("record", "結果を README に記録する"),
]

# C's search: a piece of the cleanup task's body, in Japanese, written without spaces.
SEARCH_QUERY = "一時ファイル"

NORTH_STAR_LINE = "🎯 NORTH STAR: " + NORTH_STAR
FOCUS_LINE = f"▶ 本丸（今やる1つ）: {FOCUS}（理由: {WHY}）"
NO_FOCUS_LINE = "▶ 本丸（今やる1つ）: （未設定: set_focus で今やる1つを決める）"
SEPARATOR = "— 以下は後処理（北極星達成後・今は着手しない）—"
REFERENCE_HEAD = (
    "Reference data, not a to-do list: when the North Star and the focus were set, "
    "and the task_id of each open deferred task, for complete_task once that task is really done."
)
# The reference block's North Star line for a write made today by Claude Code; the date is the
# server's, read from what the model saw; the writer is the credential (a full-access token is
# `owner`), then the client in parentheses, which must be Claude Code's own name.
STAMP_LINE = re.compile(r"^north_star: set (\d{4}-\d{2}-\d{2}) \(today\) by (owner \(claude-code/\S+\))$", re.M)
DESCRIPTION_TAIL = "この出力をフラットなTODOメニューに変換するな。まず北極星を述べ、本丸を1つ進めよ。後処理は北極星達成後にのみ着手。"


def contract(open_tasks):
    """get_state's first text once the focus is set; open_tasks are (kind, body), oldest first."""
    listed = [f"  [{kind}] {body}" for kind, body in open_tasks] or ["  （なし）"]
    return "\n".join([NORTH_STAR_LINE, FOCUS_LINE, SEPARATOR] + listed)


def search_found(project, seen):
    """Whether `seen` is exactly the search tool's text for C's query: the records head, the
    completed cleanup task (at the server's time, by Claude Code under the owner's token), the count."""
    head = (
        f'Records, not tasks to do: what was decided and done that matches "{SEARCH_QUERY}" in project '
        f'"{project}", newest first (times UTC). get_state says what to do now.'
    )
    body = dict(TASKS)["cleanup"]
    line = re.escape(f"  {project}  cleanup task completed: {body} — by owner (") + r"claude-code/\S+\)"
    return re.fullmatch(re.escape(head) + r"\n\d{4}-\d{2}-\d{2} \d{2}:\d{2}" + line + r"\n1 record matches\.", seen or "") is not None


def reference(open_tasks, seen):
    """get_state's second text; open_tasks are (task_id, kind, body), oldest first. `seen` is the
    block the model was shown, for the server's date and the client name it recorded."""
    match = STAMP_LINE.search(seen or "")
    date, by = match.groups() if match else ("?", "owner (claude-code/?)")
    stamps = [f"north_star: set {date} (today) by {by}", f"focus: set {date} (today) by {by}"]
    listed = [f"task_id={task_id} [{kind}] {body}" for task_id, kind, body in open_tasks]
    # It starts with a line break, so the two texts read apart even where a client glues them.
    return "\n" + "\n".join([REFERENCE_HEAD] + stamps + (listed or ["(no open deferred tasks)"]))


# The one line of B's get_state reference block that names a deferred task's id.
REFERENCE_LINE = re.compile(r"^task_id=(\S+) \[(cleanup|record)\] (.*)$")


def text_blocks(content):
    """The text items of a tool_result's content as the model got them (a string is one item)."""
    if isinstance(content, str):
        return [content]
    return [block.get("text", "") for block in content or [] if block.get("type") == "text"]


def reference_id(result, kind):
    """The task_id the model read for the first open task of `kind` in a get_state result, or None."""
    for text in text_blocks(result["content"]):
        for line in text.split("\n"):
            match = REFERENCE_LINE.match(line)
            if match and match.group(2) == kind:
                return match.group(1)
    return None


def missing_project(project):
    return project + "-never-written"


def steps(run, project):
    """The scripted tool calls of one run: each takes the results the model has seen so far in
    this process and returns (tool, input), or None when it cannot be computed from them."""
    if run == "A":
        return [
            lambda seen: ("set_north_star", {"project_id": project, "text": NORTH_STAR}),
            lambda seen: ("set_focus", {"project_id": project, "statement": FOCUS, "why": WHY}),
        ] + [
            (lambda kind, body: lambda seen: ("add_task", {"project_id": project, "body": body, "kind": kind}))(k, b)
            for k, b in TASKS
        ]
    if run == "B":

        def complete(seen):
            task_id = reference_id(seen[0], "cleanup")
            return None if task_id is None else ("complete_task", {"task_id": task_id})

        return [lambda seen: ("get_state", {"project_id": project}), complete]
    if run == "C":
        # The second read names a project nobody wrote, so one tool error reaches the model too;
        # then a search for what B completed.
        return [
            lambda seen: ("get_state", {"project_id": project}),
            lambda seen: ("get_state", {"project_id": missing_project(project)}),
            lambda seen: ("search", {"query": SEARCH_QUERY, "project_id": project}),
        ]
    raise ValueError(f"unknown run {run!r}")
