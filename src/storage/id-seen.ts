/**
 * The entry ids seen so far in a pass over a session file, kept compactly: each id as a 64-bit
 * hash in an open-addressing table of 32-bit words (16 bytes an id at most, outside the JavaScript
 * heap), never as a string. `add` says whether the id (or one with the same 64-bit hash: then a
 * caller treats it as a repeat, the safe side) was seen before. Pure: no I/O.
 */
export class IdsSeen {
  private table = new Uint32Array(2 * 1024);
  private count = 0;

  /** Adds `id`; true when it was there already. */
  add(id: string): boolean {
    let a = 0x811c9dc5;
    let b = 0x01000193 ^ id.length;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
    }
    // (0, 0) marks an empty slot
    if (a === 0 && b === 0) a = 1;
    if (this.insert(a >>> 0, b >>> 0)) return true;
    if (++this.count * 2 > this.table.length / 2) this.grow();
    return false;
  }

  private insert(a: number, b: number): boolean {
    const slots = this.table.length / 2;
    for (let i = (a ^ b) & (slots - 1); ; i = (i + 1) & (slots - 1)) {
      const x = this.table[2 * i]!;
      const y = this.table[2 * i + 1]!;
      if (x === 0 && y === 0) {
        this.table[2 * i] = a;
        this.table[2 * i + 1] = b;
        return false;
      }
      if (x === a && y === b) return true;
    }
  }

  private grow(): void {
    const old = this.table;
    this.table = new Uint32Array(old.length * 2);
    for (let i = 0; i < old.length; i += 2) if (old[i] !== 0 || old[i + 1] !== 0) this.insert(old[i]!, old[i + 1]!);
  }
}
