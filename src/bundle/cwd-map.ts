import { TranscriptStoreError } from "../errors.ts";

/** One `--cwd-map old=new`: a session whose cwd is `from` or under it continues under `to`. */
export interface CwdMapping {
  from: string;
  to: string;
}

const trimSlash = (path: string) => (path.length > 1 ? path.replace(/\/+$/, "") : path);

/** `old=new` texts as mappings (`INVALID_OPTION` for one without `=` or with an empty side). */
export function parseCwdMap(texts: readonly string[]): CwdMapping[] {
  return texts.map((text) => {
    const at = text.indexOf("=");
    const from = at === -1 ? "" : text.slice(0, at);
    const to = at === -1 ? "" : text.slice(at + 1);
    if (from === "" || to === "") {
      throw new TranscriptStoreError("INVALID_OPTION", `--cwd-map takes old=new (two non-empty paths), got ${JSON.stringify(text)}`);
    }
    return { from: trimSlash(from), to: trimSlash(to) };
  });
}

/**
 * The cwd `cwd` becomes under `mappings`: the longest `from` that is `cwd` or a parent of it is
 * replaced by its `to`; `cwd` itself when none is.
 */
export function mapCwd(cwd: string, mappings: readonly CwdMapping[]): string {
  let best: CwdMapping | null = null;
  for (const m of mappings) {
    const under = cwd === m.from || cwd.startsWith(m.from === "/" ? "/" : `${m.from}/`);
    if (under && (best === null || m.from.length > best.from.length)) best = m;
  }
  if (best === null) return cwd;
  if (cwd === best.from) return best.to;
  const rest = best.from === "/" ? cwd : cwd.slice(best.from.length); // starts with "/"
  return best.to === "/" ? rest : `${best.to}${rest}`;
}
