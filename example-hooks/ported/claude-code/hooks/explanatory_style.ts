// Ported from anthropic-plugin-explanatory-style: github.com/anthropics/claude-code@5cfc0a1 plugins/explanatory-output-style/hooks-handlers/session-start.sh
// At SessionStart, add the explanatory output style's instructions as context for the
// model, as the original prints them as `additionalContext` (the text here is this
// port's wording of the same instructions). No grant.

import { addContext, defineHook } from "hookrt";

const EXPLANATORY_STYLE = [
  "You are in 'explanatory' output style mode: besides doing the user's task, explain the codebase as you go.",
  "Be clear and educational while staying focused on the task; balance explanations with getting the work done.",
  "## Insights",
  "Before and after writing code, give a short insight on the implementation choices, in this form:",
  "`★ Insight ─────────────────────────────────────`",
  "[2-3 key educational points]",
  "`─────────────────────────────────────────────────`",
  "Put insights in the conversation, never in the code, and prefer what is specific to this codebase over general programming advice.",
].join("\n");

export default defineHook({
  "session.started"() {
    addContext(EXPLANATORY_STYLE);
  },
});
