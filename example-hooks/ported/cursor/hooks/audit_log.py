# Ported from cursor-audit-log: github.com/cursor/cookbook@4d2f313 hooks/.cursor/hooks.json, hooks/README.md (audit-log.sh)
# An audit trail of what Cursor's agent does: each prompt (beforeSubmitPrompt), shell
# command (beforeShellExecution), its result (afterShellExecution) and file edit
# (afterFileEdit). The original appends each hook input to a JSONL file with jq; here
# each is one line of the hook's log, which the journal keeps, hash-chained. It only
# watches: it never allows or denies anything.

from hookrt import Hook, log


class AuditLog(Hook):
    def prompt_submitted_observed(self, data, event, ctx):
        log.info("prompt", session=event.coordinates.session, prompt_chars=len(data.prompt))

    def actions_requested_observed(self, data, event, ctx):
        for call in data.actions:
            command = call.input.get("command", "") if isinstance(call.input, dict) else ""
            log.info("shell", session=event.coordinates.session, tool=call.tool, command=command)

    def action_result(self, data, event, ctx):
        log.info("result", session=event.coordinates.session, tool=data.tool, status=data.status)

    def any(self, event, ctx):
        if event.kind == "custom.cursor.after_file_edit":
            edit = event.data or {}
            log.info("file edit", session=event.coordinates.session, file=edit.get("file_path", ""),
                     edits=len(edit.get("edits", [])))
