/**
 * Whether a set of artifact names (relative paths, `/`-separated) can all be files of one artifacts
 * directory on every file system a store may live on. Pure. Two names clash when one is a folder of
 * the other (`x` and `x/y`: `x` cannot be a file and a directory), or when they are one name to a
 * file system that folds case or normalizes Unicode (macOS, Windows): `Report.txt` and `report.txt`,
 * `café` in NFC and in NFD. Checked before anything is written, so a restore never fails half way
 * with a raw `EEXIST` nor writes one name's bytes over another's.
 */

/** The form two names share when some file system takes them for one name. */
function folded(name: string): string {
  return name.normalize("NFC").toLowerCase().normalize("NFC");
}

/** The first clashing pair of `names`, or null. */
export function artifactNameClash(names: Iterable<string>): [string, string] | null {
  const files = new Map<string, string>();
  const folders = new Map<string, string>();
  for (const name of names) {
    const key = folded(name);
    const same = files.get(key) ?? folders.get(key);
    if (same !== undefined) return [same, name];
    const parts = key.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      const file = files.get(folder);
      if (file !== undefined) return [file, name];
      if (!folders.has(folder)) folders.set(folder, name);
    }
    files.set(key, name);
  }
  return null;
}

/** The message of a clash, naming both. */
export function clashMessage([a, b]: [string, string]): string {
  const why = "a folder of the other, or one name where case or Unicode form is folded";
  return `artifact names ${JSON.stringify(a)} and ${JSON.stringify(b)} cannot both be files of one directory (${why})`;
}
