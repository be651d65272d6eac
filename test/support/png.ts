import { seededPng } from "../../fixtures/seeded.ts";

/** A real, valid RGB PNG whose noisy pixels come from `seed`. */
export function makePng(width: number, height: number, seed = 1): Buffer {
  return seededPng(width, height, seed);
}
