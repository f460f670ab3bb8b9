//! File-edit ownership (a decision on `file.edit.requested`): refuses edits under the
//! path prefixes listed in `config.protected`, and refuses an edit whose `before_content`
//! differs from what the agent last read, so it cannot overwrite a change it never saw.
//! Every other edit is `NotHandled`: the agent's own write goes on.
//!
//! What the agent read is remembered per path in hook state (a hash of the content, never
//! the content), from `read_file` results shaped `{"path": ..., "content": ...}`, so the
//! check survives fresh instances and restarts.
//!
//! Configuration: `[hooks.protected-paths] config = { protected = ["secrets/", ".env"] }`.

use hookrt_sdk::prelude::*;

/// The refusal for an edit made from stale content. A refusal is `Failed`, never
/// `NotHandled`: that would let the agent write over the change anyway.
const CONFLICT: &str = "content changed since it was read; read it again before editing";

#[derive(Default)]
pub struct ProtectedPaths {
    protected: Vec<String>,
}

impl ProtectedPaths {
    fn setup(&mut self, config: &serde_json::Value) -> HookResult {
        let list = config.get("protected").ok_or_else(|| {
            HookError::new(
                "config.protected is missing: list the path prefixes to protect, e.g. \
                 [hooks.protected-paths] config = { protected = [\"secrets/\", \".env\"] }",
            )
        })?;
        self.protected = serde_json::from_value::<Vec<String>>(list.clone())
            .map_err(|err| {
                HookError::new(format!(
                    "config.protected must be a list of path prefixes (strings): {err}"
                ))
            })?
            .iter()
            .map(|prefix| normalize(prefix).to_owned())
            .collect();
        if self.protected.iter().any(String::is_empty) {
            return Err(HookError::new(
                "config.protected has an empty prefix, which would protect every path; remove it",
            ));
        }
        Ok(())
    }

    fn action_result(&mut self, event: &Event, _cx: &Context) -> HookResult {
        let result: ActionResult = event.data()?;
        if result.tool != "read_file" || result.status != ActionStatus::Ok {
            return Ok(());
        }
        let output = result.output.as_ref();
        let path = output.and_then(|o| o.get("path")).and_then(|p| p.as_str());
        let content = output
            .and_then(|o| o.get("content"))
            .and_then(|c| c.as_str());
        if let (Some(path), Some(content)) = (path, content) {
            // Keyed like the edit's path: a read of `./src/a.rs` is a read of `src/a.rs`.
            state::set_json(&read_key(normalize(path)), &fingerprint(content))?;
        }
        Ok(())
    }

    fn file_edit(&mut self, event: &Event, _cx: &Context) -> HookResult<FileEditAnswer> {
        let edit: FileEditRequested = event.data()?;
        let path = normalize(&edit.path);
        if let Some(prefix) = self.protected.iter().find(|p| path.starts_with(p.as_str())) {
            log::warn(
                "protected path edit refused",
                &[("prefix", prefix), ("event_id", event.id())],
            );
            return Ok(FileEditAnswer::failed(format!(
                "`{}` is protected by hookrt.toml (prefix `{prefix}` in [hooks.protected-paths] config.protected); \
                 ask a human to edit it",
                edit.path
            )));
        }
        let key = read_key(path);
        if let (Some(before), Some(known)) =
            (&edit.before_content, state::get_json::<String>(&key)?)
        {
            let written = fingerprint(&edit.content);
            if fingerprint(before) != known {
                // Delivery is at-least-once: after a crash between this hook's `set` below
                // and the delivery's ack, the same edit comes again and finds its own content
                // known. It overwrites nothing, so it is let through again.
                if event.is_retry() && known == written {
                    return Ok(FileEditAnswer::NotHandled);
                }
                log::warn("stale edit refused", &[("event_id", event.id())]);
                return Ok(FileEditAnswer::failed(CONFLICT));
            }
            // The agent now knows the file as its new content; a later edit starts from it.
            state::set_json(&key, &written)?;
        }
        Ok(FileEditAnswer::NotHandled)
    }
}

/// `./a/b` and `a/b` are the same workspace path.
fn normalize(path: &str) -> &str {
    path.trim_start_matches("./")
}

fn read_key(path: &str) -> String {
    format!("read:{path}")
}

/// FNV-1a 64 of the content, as hex: detects changes, it is not a defence against an
/// adversary crafting collisions (the agent's own reads are the input).
fn fingerprint(content: &str) -> String {
    let hash = content
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{hash:016x}")
}

hookrt_sdk::define_hook!(ProtectedPaths {
    configure => setup,
    "action.result" => action_result,
    "file.edit.requested" => file_edit,
});

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: &str, data: serde_json::Value) -> Event {
        let line = serde_json::json!({"schema_version": 1, "id": "e", "kind": kind, "timestamp": "t",
            "coordinates": {"agent": "a", "session": "s", "sequence": 0}, "data": data});
        Event::from_json(&line.to_string()).expect("event")
    }

    fn edit(hook: &mut ProtectedPaths, path: &str, before: &str) -> FileEditAnswer {
        edit_attempt(hook, path, before, "new", 1)
    }

    fn edit_attempt(
        hook: &mut ProtectedPaths,
        path: &str,
        before: &str,
        content: &str,
        attempt: u32,
    ) -> FileEditAnswer {
        let mut line = serde_json::json!({"schema_version": 1, "id": "e", "kind": "file.edit.requested",
            "timestamp": "t", "coordinates": {"agent": "a", "session": "s", "sequence": 0},
            "data": {"path": path, "content": content, "before_content": before, "global_storage": false}});
        line["attempt"] = attempt.into();
        let e = Event::from_json(&line.to_string()).expect("event");
        hook.file_edit(
            &e,
            &Context::new("file.edit.requested", "protected-paths", 100),
        )
        .expect("answer")
    }

    /// The agent read `content` from `path` with `read_file`.
    fn read(hook: &mut ProtectedPaths, path: &str, content: &str) {
        let read = event(
            "action.result",
            serde_json::json!({"call_id": "c", "tool": "read_file", "status": "ok",
            "output": {"path": path, "content": content}}),
        );
        hook.action_result(
            &read,
            &Context::new("action.result", "protected-paths", 100),
        )
        .expect("remembered");
    }

    fn configured() -> ProtectedPaths {
        let mut hook = ProtectedPaths::default();
        hook.setup(&serde_json::json!({"protected": ["secrets/", ".env"]}))
            .expect("config");
        hook
    }

    #[test]
    fn config_without_protected_is_refused_naming_the_key() {
        let err = ProtectedPaths::default()
            .setup(&serde_json::json!({}))
            .expect_err("refused");
        assert!(err.message().contains("config.protected"), "{err}");
    }

    #[test]
    fn protected_prefixes_fail_the_edit() {
        let answer = edit(&mut configured(), "./secrets/key.pem", "");
        assert!(
            matches!(answer, FileEditAnswer::Failed(m) if m.contains("is protected by hookrt.toml"))
        );
    }

    #[test]
    fn an_edit_from_stale_content_conflicts_and_a_fresh_one_passes() {
        let mut hook = configured();
        read(&mut hook, "src/a.rs", "old");
        assert_eq!(
            edit(&mut hook, "src/a.rs", "changed meanwhile"),
            FileEditAnswer::failed(CONFLICT)
        );
        assert_eq!(
            edit(&mut hook, "src/a.rs", "old"),
            FileEditAnswer::NotHandled
        );
        // The agent's own edit is now the known content.
        assert_eq!(
            edit(&mut hook, "src/a.rs", "new"),
            FileEditAnswer::NotHandled
        );
        assert_eq!(
            edit(&mut hook, "src/never-read.rs", "x"),
            FileEditAnswer::NotHandled
        );
    }

    #[test]
    fn a_repeat_of_an_edit_it_let_through_is_let_through_again_and_only_a_repeat() {
        let mut hook = configured();
        read(&mut hook, "src/c.rs", "old");
        assert_eq!(
            edit(&mut hook, "src/c.rs", "old"),
            FileEditAnswer::NotHandled
        );
        // A crash after the `set` and before the ack: the same edit, attempt 2.
        assert_eq!(
            edit_attempt(&mut hook, "src/c.rs", "old", "new", 2),
            FileEditAnswer::NotHandled
        );
        // A first delivery from the old content is stale, whatever it writes.
        assert_eq!(
            edit(&mut hook, "src/c.rs", "old"),
            FileEditAnswer::failed(CONFLICT)
        );
        // A repeat that writes other than the known content is stale too.
        assert_eq!(
            edit_attempt(&mut hook, "src/c.rs", "old", "other", 2),
            FileEditAnswer::failed(CONFLICT)
        );
    }

    #[test]
    fn a_read_through_dot_slash_is_the_same_path_as_the_edit() {
        let mut hook = configured();
        read(&mut hook, "./src/b.rs", "old");
        assert_eq!(
            edit(&mut hook, "src/b.rs", "changed meanwhile"),
            FileEditAnswer::failed(CONFLICT)
        );
    }
}
