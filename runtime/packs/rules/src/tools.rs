//! Every agent's tools as the packs read them: which tool runs a shell
//! command and what the command is, which reads or writes files and which
//! paths. Tool names differ between agents (docs/agents.md, "What hooks
//! see"); they are compared without case, an extension's or MCP server's
//! tool by its own name (goose's `developer__shell` is a `shell`).

/// What a tool call does with a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads it (or lists or searches it).
    Read,
    /// Writes, edits or creates it (or moves a file to it).
    Write,
    /// Deletes it, or moves it away.
    Delete,
}

/// Shell tools: Claude Code's and Codex's `Bash`, Copilot's and OpenCode's
/// `bash`, Gemini's `run_shell_command`, Cursor's `shell`, Codex's
/// `local_shell` and `exec_command`, Cline's `run_commands`, OpenHands'
/// `terminal`, Antigravity CLI's `run_command`.
const SHELL_TOOLS: &[&str] = &[
    "bash",
    "shell",
    "run_shell_command",
    "local_shell",
    "exec_command",
    "run_shell",
    "run_commands",
    "terminal",
    "run_command",
];

/// Tools that write the paths in their input; any other tool with a path
/// is taken to read it (unless it deletes them, [`DELETE_TOOLS`]). Cursor's
/// are `Write`, `StrReplace`, `Edit`, `TabWrite` and `Delete`; Cline's
/// `editor`; OpenHands' `file_editor` (its `view` reads, but is taken to
/// write: a protected path is refused either way); Antigravity CLI's
/// `write_to_file`, `replace_file_content` and `multi_replace_file_content`.
const WRITE_TOOLS: &[&str] = &[
    "write",
    "edit",
    "multiedit",
    "notebookedit",
    "write_file",
    "replace",
    "edit_file",
    "create",
    "str_replace",
    "str_replace_editor",
    "strreplace",
    "tabwrite",
    "apply_patch",
    "editor",
    "file_editor",
    "write_to_file",
    "replace_file_content",
    "multi_replace_file_content",
];

/// Tools that delete the paths in their input, or move them away.
const DELETE_TOOLS: &[&str] = &["delete", "delete_file", "move", "rename"];

/// Input fields that hold one path (Antigravity CLI's are PascalCase).
const PATH_FIELDS: &[&str] = &[
    "file_path",
    "path",
    "absolute_path",
    "notebook_path",
    "filePath",
    "target_file",
    "dir_path",
    "TargetFile",
    "AbsolutePath",
    "DirectoryPath",
];

/// A tool's own name, lowercased: what follows the last `__` of an
/// extension's or MCP server's tool (goose's `developer__shell`, Claude
/// Code's `mcp__fs__write_file`), else the whole name.
fn own_name(tool: &str) -> String {
    let own = tool.rsplit_once("__").map_or(tool, |(_, own)| own);
    own.to_ascii_lowercase()
}

/// The folder a call runs in, from the event's `data` and the call's
/// `input`: the call's own `cwd` (Cursor's shell events), `workdir`
/// (OpenCode's `bash`) or `Cwd` (Antigravity CLI's `run_command`), the event's
/// (every other agent), or the first workspace root.
/// An agent that names none runs its shell in the project: a stand-in
/// root, so relative paths are inside and absolute ones outside.
pub fn call_folder(data: &serde_json::Value, input: &serde_json::Value) -> String {
    let absolute = |v: Option<&serde_json::Value>| {
        v.and_then(|c| c.as_str())
            .filter(|c| c.starts_with('/'))
            .map(str::to_owned)
    };
    absolute(input.get("cwd"))
        .or_else(|| absolute(input.get("workdir")))
        .or_else(|| absolute(input.get("Cwd")))
        .or_else(|| absolute(data.get("cwd")))
        .or_else(|| absolute(data.pointer("/workspace_roots/0")))
        .unwrap_or_else(|| "/.project".to_owned())
}

/// The shell command of a call, if the tool is a shell: `{"command": "…"}`
/// (or a list of words, Codex's `local_shell`), Cline's `{"commands": […]}`
/// (its lines, one script), Antigravity CLI's `{"CommandLine": "…"}`, or
/// the input as a string.
pub fn shell_command(tool: &str, input: &serde_json::Value) -> Option<String> {
    if !SHELL_TOOLS.contains(&own_name(tool).as_str()) {
        return None;
    }
    // Cline's `run_commands`: whole command lines, run one after another.
    if let Some(lines) = input.get("commands").and_then(|c| c.as_array()) {
        let lines: Vec<&str> = lines.iter().filter_map(|l| l.as_str()).collect();
        return (!lines.is_empty()).then(|| lines.join("\n"));
    }
    let command = input
        .get("command")
        .or_else(|| input.get("cmd"))
        .or_else(|| input.get("CommandLine"))
        .unwrap_or(input);
    match command {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(words) => {
            let words: Vec<String> = words.iter().filter_map(|w| w.as_str()).map(quote).collect();
            Some(words.join(" "))
        }
        _ => None,
    }
}

/// A word quoted for the shell reader when it needs it.
fn quote(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@+,%".contains(c))
    {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A patch's text in a file tool's input: `{"patch": PATCH}` or `{"input":
/// PATCH}` (Codex's function form), and for `apply_patch` also the bare
/// text (its freeform form) and `{"command": PATCH}`, as Codex's hooks see it.
pub fn patch_text<'a>(tool: &str, input: &'a serde_json::Value) -> Option<&'a str> {
    let field = |k: &str| input.get(k).and_then(|v| v.as_str());
    field("patch").or_else(|| field("input")).or_else(|| {
        tool.eq_ignore_ascii_case("apply_patch")
            .then(|| input.as_str().or_else(|| field("command")))
            .flatten()
    })
}

/// The files a patch (Codex's `apply_patch` format) names in its `*** …
/// File:` lines, and what it does to each: an added or updated file, and
/// the target of a `*** Move to:`, is written; a deleted file, and one
/// moved away, deleted.
pub fn patch_files(patch: &str) -> Vec<(Access, &str)> {
    let mut out = Vec::new();
    // An updated file is written, unless the next line moves it away.
    let mut updated = None;
    for line in patch.lines() {
        if let Some(to) = line.strip_prefix("*** Move to: ") {
            out.extend(updated.take().map(|from| (Access::Delete, from)));
            out.push((Access::Write, to.trim()));
            continue;
        }
        out.extend(updated.take().map(|p| (Access::Write, p)));
        if let Some(p) = line.strip_prefix("*** Update File: ") {
            updated = Some(p.trim());
        } else if let Some(p) = line.strip_prefix("*** Add File: ") {
            out.push((Access::Write, p.trim()));
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            out.push((Access::Delete, p.trim()));
        }
    }
    out.extend(updated.map(|p| (Access::Write, p)));
    out
}

/// The paths a file tool's call names, and what it does with them. A
/// patch (Codex's `apply_patch`) names its files in `*** … File:` lines.
pub fn file_paths(tool: &str, input: &serde_json::Value) -> Vec<(Access, String)> {
    let lower = own_name(tool);
    if SHELL_TOOLS.contains(&lower.as_str()) {
        return Vec::new();
    }
    let access = if DELETE_TOOLS.contains(&lower.as_str()) {
        Access::Delete
    } else if WRITE_TOOLS.contains(&lower.as_str()) {
        Access::Write
    } else {
        Access::Read
    };
    let mut out = Vec::new();
    for field in PATH_FIELDS {
        if let Some(p) = input.get(field).and_then(|v| v.as_str()) {
            out.push((access, p.to_owned()));
        }
    }
    for list in ["paths", "files"] {
        for p in input
            .get(list)
            .and_then(|v| v.as_array())
            .into_iter()
            .flatten()
        {
            if let Some(p) = p
                .as_str()
                .or_else(|| p.get("path").and_then(|v| v.as_str()))
            {
                out.push((access, p.to_owned()));
            }
        }
    }
    for (access, p) in patch_text(tool, input).map(patch_files).unwrap_or_default() {
        out.push((access, p.to_owned()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_runs_in_its_own_folder_then_the_events_then_the_workspaces() {
        let data = json!({"cwd": "/p", "workspace_roots": ["/w"]});
        assert_eq!(call_folder(&data, &json!({"cwd": "/c"})), "/c");
        assert_eq!(call_folder(&data, &json!({"workdir": "/o"})), "/o");
        assert_eq!(call_folder(&data, &json!({"cwd": "rel"})), "/p");
        assert_eq!(
            call_folder(&json!({"workspace_roots": ["/w"]}), &json!({})),
            "/w"
        );
        assert_eq!(call_folder(&json!({}), &json!({})), "/.project");
    }

    #[test]
    fn reads_every_agents_shell_and_file_tools() {
        // goose's extension tools, Antigravity CLI's PascalCase arguments.
        assert_eq!(
            shell_command("developer__shell", &json!({"command": "ls"})).as_deref(),
            Some("ls")
        );
        assert_eq!(
            file_paths(
                "developer__write",
                &json!({"path": "/p/a.rs", "content": "x"})
            ),
            vec![(Access::Write, "/p/a.rs".to_owned())]
        );
        assert_eq!(
            shell_command("run_command", &json!({"CommandLine": "ls", "Cwd": "/p"})).as_deref(),
            Some("ls")
        );
        assert_eq!(
            file_paths("write_to_file", &json!({"TargetFile": "/p/a.rs"})),
            vec![(Access::Write, "/p/a.rs".to_owned())]
        );
        assert_eq!(call_folder(&json!({}), &json!({"Cwd": "/c"})), "/c");
        // Cline's `run_commands`: its commands, one script.
        assert_eq!(
            shell_command("run_commands", &json!({"commands": ["cd a", "rm -rf b"]})).as_deref(),
            Some("cd a\nrm -rf b")
        );
        assert_eq!(
            shell_command("run_commands", &json!({"commands": []})),
            None
        );
        assert_eq!(
            file_paths("editor", &json!({"path": "/p/a.rs", "new_text": "x"})),
            vec![(Access::Write, "/p/a.rs".to_owned())]
        );
        assert_eq!(
            shell_command("Bash", &json!({"command": "ls"})).as_deref(),
            Some("ls")
        );
        assert_eq!(
            shell_command("run_shell_command", &json!({"command": "ls"})).as_deref(),
            Some("ls")
        );
        assert_eq!(
            shell_command(
                "local_shell",
                &json!({"command": ["bash", "-lc", "rm -rf /"]})
            )
            .as_deref(),
            Some("bash -lc 'rm -rf /'")
        );
        assert_eq!(shell_command("Read", &json!({"command": "ls"})), None);
        assert_eq!(
            file_paths("Write", &json!({"file_path": "/p/.env"})),
            [(Access::Write, "/p/.env".to_owned())]
        );
        assert_eq!(
            file_paths("read_file", &json!({"absolute_path": "/p/a"})),
            [(Access::Read, "/p/a".to_owned())]
        );
        let patch =
            "*** Begin Patch\n*** Update File: src/a.rs\n@@\n*** Delete File: .env\n*** End Patch";
        assert_eq!(file_paths("apply_patch", &json!({"input": patch})).len(), 2);
        // As Codex's hooks see it (`tool_input: {"command": PATCH}`).
        assert_eq!(
            file_paths("apply_patch", &json!({"command": patch})).len(),
            2
        );
        assert!(file_paths("Write", &json!({"command": patch})).is_empty());
        let moved = "*** Begin Patch\n*** Add File: n.rs\n+x\n*** Update File: a.rs\n*** Move to: b.rs\n@@\n*** Delete File: c.rs\n*** End Patch";
        assert_eq!(
            patch_files(moved),
            [
                (Access::Write, "n.rs"),
                (Access::Delete, "a.rs"),
                (Access::Write, "b.rs"),
                (Access::Delete, "c.rs"),
            ]
        );
        assert_eq!(patch_text("Write", &json!({"command": moved})), None);
        assert_eq!(patch_text("apply_patch", &json!(moved)), Some(moved));
        assert_eq!(
            file_paths("StrReplace", &json!({"file_path": "/p/.git/config"})),
            [(Access::Write, "/p/.git/config".to_owned())]
        );
    }
}
