/**
 * The backends built in besides the file tree: each module registers itself with
 * `backend-registry.ts` when imported. A new backend adds its line here (docs/architecture.md).
 */
import "./postgres/pg-register.ts";
