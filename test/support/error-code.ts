/** The `code` of what `fn` throws, or undefined when it does not throw. */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
}

/** Asserts that `promise` rejects with a `TranscriptStoreError` of `code`. */
export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  let caught: unknown = null;
  try {
    await promise;
  } catch (err) {
    caught = err;
  }
  if (caught === null) throw new Error(`expected a rejection with ${code}, but it resolved`);
  const actual = (caught as { code?: string }).code;
  if (actual !== code) throw new Error(`expected ${code}, got ${actual ?? "no code"}: ${(caught as Error).message}`);
}
