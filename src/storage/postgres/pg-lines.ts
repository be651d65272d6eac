import { type PreparedLine, parseHeader, prepareStoredLine, previewOfLine, storedLineRow, entriesOf } from "../stored-lines.ts";

/**
 * The PostgreSQL backend's names for the neutral stored-line helpers (storage/stored-lines.ts): an
 * entry row is a stored line, the database's `PgLine` and `PgEntry` have their shape.
 */
export type PreparedRow = PreparedLine;
export const prepareRow = prepareStoredLine;
export { entriesOf, parseHeader, previewOfLine, storedLineRow };
