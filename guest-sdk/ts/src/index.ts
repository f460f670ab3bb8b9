/**
 * The module a hook imports as `"hookrt"`: everything `hookrt.ts` (`defineHook`,
 * typed events and answers, `log`, `state`, `metrics`, `addContext`) and
 * `grants.ts` (world 0.4.0's `exec`, `read`, `transcript`, `secret`, `notify`,
 * `write`, and `GrantError`) export.
 */

export * from "./hookrt";
export * from "./grants";
