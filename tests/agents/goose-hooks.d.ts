// goose's hook answers, written after its source (aaif-goose/goose 1.50,
// crates/goose/src/hooks/mod.rs: `classify_output`; goose publishes no
// package, types or schema of its hooks): what a command hook may print on
// stdout for PreToolUse and Stop, the two events that read an answer.
// Anything else a hook prints is a hook failure. tests/serve/agents.rs
// checks every answer hookrt gives goose against this with `tsc --strict`.

/** `block` denies the call (or keeps a turn going at Stop) on any exit code;
 * `allow` with exit 0 lets it run; the reason goes to the model. */
export interface HookResponse {
  decision: "block" | "allow";
  reason?: string;
}
