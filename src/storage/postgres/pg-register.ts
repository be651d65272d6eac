import { registerBackend } from "../backend-registry.ts";
import { PostgresBackend } from "./pg-backend.ts";

registerBackend({
  schemes: ["postgres", "postgresql"],
  description: "a PostgreSQL store, its schema ?schema=… or $TRANSCRIPT_STORE_PG_SCHEMA",
  open: (url, options) => PostgresBackend.of(url, options),
});
