// Cursor's hook answers, written after cursor.com/docs/agent/hooks (Cursor
// publishes no package, types or schema of its hooks): what each event's
// command hook may print on stdout. tests/serve/agents.rs checks every
// answer hookrt gives Cursor against these with `tsc --strict`.

/** beforeShellExecution, beforeMCPExecution: a permission and its messages. */
export interface PermissionOutput {
  permission?: "allow" | "deny" | "ask";
  /** Shown to the user. */
  user_message?: string;
  /** Sent to the agent. */
  agent_message?: string;
}

/** preToolUse: a permission, a rewritten input, context for the agent. */
export interface PreToolUseOutput extends PermissionOutput {
  updated_input?: Record<string, unknown>;
  additional_context?: string;
}

/** beforeReadFile, beforeTabFileRead: allow or deny only. */
export interface ReadFileOutput {
  permission?: "allow" | "deny";
  user_message?: string;
  agent_message?: string;
}

/** beforeSubmitPrompt: let the prompt through or not. */
export interface SubmitPromptOutput {
  continue?: boolean;
  user_message?: string;
}

/** stop, subagentStop: a follow-up sent as the next user message. */
export interface StopOutput {
  followup_message?: string;
}

/** postToolUse, sessionStart: context for the agent. */
export interface ContextOutput {
  additional_context?: string;
}

/** Every other event: observed, nothing is read back. */
export type NoOutput = Record<string, never>;
