import { makePng } from "../../support/png.ts";

/**
 * The image of entry `i` (odd) of writer `tag` in the gc race: every other one is one of three
 * images all writers share, the rest are the writer's own (so a blob is both shared and fresh).
 */
export function imageOf(tag: string, i: number): Buffer {
  if (i % 4 === 1) return makePng(16, 16, 1 + (i % 3));
  return makePng(16, 16, 1000 + Number(tag.replace(/\D/g, "")) * 1000 + i);
}
