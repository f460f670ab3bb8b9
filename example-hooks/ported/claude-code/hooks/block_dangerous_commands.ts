// Ported from karanb192-block-dangerous-commands: github.com/karanb192/claude-code-hooks@811aeb7 plugins/block-dangerous-commands/block-dangerous-commands.js
// Denies dangerous Bash commands before Claude Code runs them (PreToolUse on Bash):
// deleting home, root or system folders, dd onto a disk, mkfs, fork bombs, piping a
// download into a shell, force-pushing to main, chmod 777 and more, at a safety level
// (`critical`, `high`: the default, or `strict`) set in `config.safety_level`. As the
// original, the reason names the rule: `🚨 [rule] why`. The original also logs each
// block to ~/.claude/hooks-logs; here that is the hook's log. No grant.

import { defineHook, log, type Approval } from "hookrt";

type Level = "critical" | "high" | "strict";

interface Rule {
  level: Level;
  id: string;
  regex: RegExp;
  reason: string;
}

const RULES: Rule[] = [
  { level: "critical", id: "rm-home", regex: /\brm\s+(-[a-zA-Z]*\s+)*(~|\$HOME)\/?(\s|$)/, reason: "rm targeting the home folder" },
  { level: "critical", id: "rm-root", regex: /\brm\s+(-[a-zA-Z]*\s+)*\/(\*|\s|$)/, reason: "rm targeting the root folder" },
  { level: "critical", id: "rm-system", regex: /\brm\s+(-[a-zA-Z]*\s+)*\/(etc|usr|var|bin|sbin|lib|boot|dev|proc|sys)(\/|\s|$)/, reason: "rm targeting a system folder" },
  { level: "critical", id: "dd-disk", regex: /\bdd\b.*\bof=\/dev\/(sd|hd|nvme|xvd|vd|disk)/, reason: "dd writing onto a disk" },
  { level: "critical", id: "mkfs", regex: /\bmkfs(\.\w+)?\b/, reason: "formatting a file system" },
  { level: "critical", id: "fork-bomb", regex: /:\s*\(\s*\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:/, reason: "fork bomb" },
  { level: "critical", id: "disk-overwrite", regex: />\s*\/dev\/(sd|hd|nvme|xvd|vd)[a-z0-9]*/, reason: "redirecting onto a disk" },
  { level: "high", id: "curl-pipe-sh", regex: /\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/, reason: "piping a download into a shell" },
  { level: "high", id: "force-push-main", regex: /\bgit\s+push\b.*(--force|-f)\b.*\b(main|master)\b|\bgit\s+push\b.*\b(main|master)\b.*(--force|-f)\b/, reason: "force push to main/master" },
  { level: "high", id: "git-reset-hard", regex: /\bgit\s+reset\s+--hard\b/, reason: "git reset --hard discards work" },
  { level: "high", id: "chmod-777", regex: /\bchmod\s+(-R\s+)?777\b/, reason: "chmod 777 makes files writable by everyone" },
  { level: "high", id: "rm-rf-dot", regex: /\brm\s+-[a-zA-Z]*r[a-zA-Z]*f?[a-zA-Z]*\s+(\.|\.\/|\*)(\s|$)/, reason: "recursive delete of the current folder" },
  { level: "strict", id: "any-force-push", regex: /\bgit\s+push\b.*(--force|-f)\b/, reason: "force push" },
  { level: "strict", id: "sudo", regex: /(^|[;&|]\s*)sudo\b/, reason: "sudo" },
  { level: "strict", id: "git-clean", regex: /\bgit\s+clean\s+-[a-zA-Z]*f/, reason: "git clean deletes untracked files" },
];

const LEVELS: Record<Level, Level[]> = {
  critical: ["critical"],
  high: ["critical", "high"],
  strict: ["critical", "high", "strict"],
};

let active: Level[] = LEVELS.high;

export default defineHook<{ safety_level?: Level }>({
  configure(config) {
    const level = config.safety_level ?? "high";
    if (!(level in LEVELS)) throw new Error(`safety_level must be critical, high or strict, not ${JSON.stringify(level)}`);
    active = LEVELS[level];
  },

  "actions.requested"(event) {
    return event.data.actions.map((action): Approval => {
      const input = action.input as { command?: unknown } | undefined;
      if (action.tool !== "Bash" || typeof input?.command !== "string") return "abstain";
      const rule = RULES.find((r) => active.includes(r.level) && r.regex.test(input.command as string));
      if (rule === undefined) return "abstain";
      log.warn("blocked", { rule: rule.id, level: rule.level, session: event.coordinates.session });
      return { deny: `🚨 [${rule.id}] ${rule.reason}` };
    });
  },
});
