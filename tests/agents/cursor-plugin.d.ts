// Cursor's plugin files, written after the JSON Schemas Cursor publishes in
// github.com/cursor/plugins (schemas/plugin.schema.json and
// schemas/marketplace.schema.json at 195d9359, 2026-08-07; both closed:
// `additionalProperties: false`) and its hooks file as cursor.com/docs/agent/hooks
// gives it. tests/serve/plugin_e2e.rs checks what `hookrt package --agent
// cursor` writes against these with `tsc --strict`. A name's pattern
// (`^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$`) is checked by hookrt's own tests.

type StringOrStrings = string | string[];

/** `.cursor-plugin/plugin.json`. */
export interface Plugin {
  name: string;
  displayName?: string;
  description?: string;
  version?: string;
  minClientVersions?: Record<string, string>;
  author?: { name: string; email?: string };
  publisher?: string;
  homepage?: string;
  repository?: string;
  license?: string;
  logo?: string;
  keywords?: string[];
  category?: string;
  tags?: string[];
  commands?: StringOrStrings;
  agents?: StringOrStrings;
  skills?: StringOrStrings;
  rules?: StringOrStrings;
  hooks?: string | object;
  variables?: { type: "object"; properties?: object; required?: string[] };
  mcpServers?: string | object | (string | object)[];
}

/** `.cursor-plugin/marketplace.json`. */
export interface Marketplace {
  name: string;
  owner?: { name: string; email?: string };
  metadata?: { description?: string; [key: string]: unknown };
  plugins: {
    name: string;
    source: string;
    description?: string;
    minClientVersions?: Record<string, string>;
  }[];
}

/** A command hook of `hooks/hooks.json` (as of `.cursor/hooks.json`). */
export interface CommandHook {
  command: string;
  timeout?: number;
  failClosed?: boolean;
  matcher?: string;
  loop_limit?: number | null;
}

/** `hooks/hooks.json`: version 1, camelCase events. */
export interface Hooks {
  version: 1;
  hooks: Record<string, CommandHook[]>;
}
