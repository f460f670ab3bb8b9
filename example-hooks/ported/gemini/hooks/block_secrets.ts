// Ported from gemini-docs-block-secrets: github.com/google-gemini/gemini-cli@0d5b7db docs/hooks/writing-hooks.md (block-secrets.sh)
// Denies Gemini CLI's file writes and edits (BeforeTool on write_file|replace) whose
// new content looks like it holds a secret (api_key, password, secret), as the
// original does with `grep -qiE` and `decision: deny`. No grant.

import { defineHook, type Approval } from "hookrt";

const SECRET = /api[_-]?key|password|secret/i;

export default defineHook({
  "actions.requested"(event) {
    return event.data.actions.map((action): Approval => {
      if (action.tool !== "write_file" && action.tool !== "replace") return "abstain";
      const input = (action.input ?? {}) as { content?: unknown; new_string?: unknown };
      const content = [input.content, input.new_string].filter((v) => typeof v === "string").join("\n");
      return SECRET.test(content) ? { deny: "Potential secret detected in file content" } : "abstain";
    });
  },
});
