// Our two backends run the conformance suite from the published entry, as a backend author would:
// `transcript-store/conformance` and `transcript-store` resolve through package.json "exports" to
// the built dist/ (`npm test` builds it first), so the suite, SessionManager and PostgresBackend
// are the package's own modules, not src/.
import { describe, it } from "vitest";
import { PostgresBackend } from "transcript-store";
import { runConformance } from "transcript-store/conformance";
import { describeBackends } from "./backends.ts";

describeBackends("conformance", (backend) => runConformance({ describe, test: it }, backend), PostgresBackend);
