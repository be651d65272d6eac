import { describe, expect, it } from "vitest";
import { mapCwd, parseCwdMap } from "../../src/bundle/cwd-map.ts";

describe("--cwd-map old=new", () => {
  const map = parseCwdMap(["/home/alice=/Users/bob", "/home/alice/work=/srv/work/", "/=/mnt/old"]);

  it("replaces the longest old that is the cwd or a parent of it, keeping the rest", () => {
    expect(mapCwd("/home/alice", map)).toBe("/Users/bob");
    expect(mapCwd("/home/alice/notes", map)).toBe("/Users/bob/notes");
    expect(mapCwd("/home/alice/work/app", map)).toBe("/srv/work/app");
    expect(mapCwd("/home/alice/work", map)).toBe("/srv/work");
  });

  it("matches whole path segments only: /home/alice is no parent of /home/alice2", () => {
    expect(mapCwd("/home/alice2/x", parseCwdMap(["/home/alice=/Users/bob"]))).toBe("/home/alice2/x");
    expect(mapCwd("/home/alice2/x", map)).toBe("/mnt/old/home/alice2/x");
  });

  it("maps to and from the root directory", () => {
    expect(mapCwd("/etc/app", parseCwdMap(["/=/mnt/old"]))).toBe("/mnt/old/etc/app");
    expect(mapCwd("/", parseCwdMap(["/=/mnt/old"]))).toBe("/mnt/old");
    expect(mapCwd("/mnt/old/etc", parseCwdMap(["/mnt/old=/"]))).toBe("/etc");
    expect(mapCwd("/mnt/old", parseCwdMap(["/mnt/old=/"]))).toBe("/");
  });

  it("leaves a cwd no mapping covers as it is", () => {
    expect(mapCwd("/opt/x", parseCwdMap(["/home=/Users"]))).toBe("/opt/x");
    expect(mapCwd("relative/dir", parseCwdMap(["/home=/Users"]))).toBe("relative/dir");
  });

  it("refuses a mapping without = or with an empty side (INVALID_OPTION)", () => {
    for (const bad of ["nonsense", "=/x", "/x=", ""])
      expect(() => parseCwdMap([bad])).toThrow(expect.objectContaining({ code: "INVALID_OPTION" }));
    expect(parseCwdMap(["/a=b=c"])).toEqual([{ from: "/a", to: "b=c" }]);
  });
});
