import { isRecord } from "../format/types.ts";

/** What a tool call did, in a line a reader knows: `$ npm test`, `read src/a.ts`, `edit src/b.ts`. */
export function toolLabel(name: string, args: unknown): string {
  const a = isRecord(args) ? args : typeof args === "string" ? parseArgs(args) : null;
  const lower = name.toLowerCase();
  const str = (...keys: string[]) => {
    for (const k of keys) {
      const v = a?.[k];
      if (typeof v === "string" && v !== "") return v;
      if (Array.isArray(v) && v.every((x) => typeof x === "string")) return (v as string[]).join(" ");
    }
    return null;
  };
  if (lower === "bash" || lower === "shell" || lower === "exec_command" || lower === "local_shell") {
    const command = str("command", "cmd");
    if (command !== null) return `$ ${command}`;
  }
  const path = str("path", "file_path", "filePath", "notebook_path");
  if (lower === "read" || lower === "view") return path === null ? name : `read ${path}`;
  if (lower === "edit" || lower === "multiedit" || lower === "str_replace") return path === null ? name : `edit ${path}`;
  if (lower === "write" || lower === "create") return path === null ? name : `write ${path}`;
  if (lower === "apply_patch") return "apply patch";
  if (lower === "grep" || lower === "glob" || lower === "find") {
    const pattern = str("pattern", "query", "glob");
    return pattern === null ? name : `${lower} ${pattern}${path === null ? "" : ` in ${path}`}`;
  }
  if (lower === "ls") return path === null ? "ls" : `ls ${path}`;
  return name;
}

function parseArgs(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isRecord(v) ? v : null;
  } catch {
    return null;
  }
}
