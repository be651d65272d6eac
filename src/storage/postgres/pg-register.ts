import { registerBackend } from "../backend-registry.ts";
import { PostgresBackend } from "./pg-backend.ts";

registerBackend({
  schemes: ["postgres", "postgresql"],
  description: "a PostgreSQL store",
  open: (url, options) => PostgresBackend.of(url, options),
});
