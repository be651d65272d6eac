import { describe, expect, it } from "vitest";
import { type RedactionCounts, SecretRedactor } from "../../src/prepare/redact-secrets.ts";
import { BUILTIN_SECRET_RULES } from "../../src/prepare/secret-rules.ts";

/*
 * Outside review of issue 32's redaction forms: the same secret written in the other usual shapes
 * (a client's password variable as a JSON/YAML key or an object key, a PEM key inside a JSON or
 * .env string whose line breaks are `\n` escapes) is found, and the near misses stay.
 */

const KEY = Buffer.alloc(32, 7);

function redact(value: unknown): { out: string; counts: RedactionCounts } {
  const counts: RedactionCounts = new Map();
  const r = new SecretRedactor(BUILTIN_SECRET_RULES, () => KEY);
  const out = typeof value === "string" ? r.redactText(value, counts) : JSON.stringify(r.redactValue(value, counts));
  return { out, counts };
}

describe("a database client's password variable in every usual form (issue 32 #13/#14 sibling)", () => {
  it.each([
    ['{"env":{"PGPASSWORD":"hunter2"}}', "hunter2"],
    ['"MYSQL_PWD": "k3yZ9q"', "k3yZ9q"],
    ["services:\n  db:\n    environment:\n      POSTGRES_PASSWORD: Tq7xw2\n", "Tq7xw2"],
    ["    environment:\n      - MYSQL_ROOT_PASSWORD: 'Tq7xw2'\n", "Tq7xw2"],
  ])("text %j loses %s", (text, secret) => {
    const { out, counts } = redact(text);
    expect(out).not.toContain(secret);
    expect(counts.get("env-password")).toBe(1);
  });

  it("an object-form env (pi's tool arguments) is redacted as its JSON text is", () => {
    const args = { command: "psql -h db", env: { PGPASSWORD: "s3cr3t", MYSQL_PWD: "hunter2" } };
    const { out, counts } = redact(args);
    expect(out).not.toContain("s3cr3t");
    expect(out).not.toContain("hunter2");
    expect(counts.get("env-password")).toBe(2);
  });

  it.each([
    `"PGPASSWORD": "\${DB_PASSWORD}"`,
    '"PGPASSWORD": ""',
    "POSTGRES_PASSWORD: example\n",
    "PGPASSWORD: the variable psql reads its password from\n",
    "Set PGPASSWORD: see below",
    "const PGPASSWORD_ENV: string = name;",
    '{"POSTGRES_PASSWORD_FILE": "/run/secrets/pg"}',
  ])("near miss %j is kept", (text) => {
    expect(redact(text).out).toBe(text);
  });
});

describe("a PEM private key inside a JSON or .env string (line breaks as \\n escapes)", () => {
  const body =
    String.raw`MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj\n` +
    "MzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6dVMvDuictGeurT8jNbvJZHtCSuYEvu";

  it("cut off before its END line, its body is redacted", () => {
    const text = `PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\n${body}`;
    const { out, counts } = redact(text);
    expect(out).not.toContain("MIIEvQIBADAN");
    expect(out).not.toContain("MzEfYyjiWA4R4");
    expect(counts.get("pem-private-key")).toBe(1);
  });

  it("a public key in the same form is kept", () => {
    const text = `PUBLIC_KEY="-----BEGIN PUBLIC KEY-----\\n${body}`;
    expect(redact(text).out).toBe(text);
  });
});

describe("a quoted password in a connection string (ADO.NET/ODBC quoting, libpq quoting)", () => {
  it.each([
    ['Server=x;Database=db;User ID=u;Password="Zq8;kLm2pW9xR";', "connection-string-password"],
    ["Server=x;Database=db;User ID=u;Password='Zq8kLm2pW9xR';", "connection-string-password"],
    ["Driver={ODBC Driver 18};Server=x;UID=u;PWD={Zq8;kLm2pW9xR};", "connection-string-password"],
    ["host=db.internal user=app password='Zq8 kLm2pW9xR' dbname=app", "libpq-password"],
  ])("%j loses its password", (text, rule) => {
    const { out, counts } = redact(text);
    expect(out).not.toContain("kLm2pW9xR");
    expect(counts.get(rule)).toBe(1);
  });

  it.each([
    "Server=x;Database=db;User ID=u;Password={your_password};",
    'Server=x;Database=db;User ID=u;Password="";',
    'Server=x;Database=db;User ID=u;Password="$DB_PASSWORD";',
    "host=db.internal user=app password='' dbname=app",
  ])("near miss %j is kept", (text) => {
    expect(redact(text).out).toBe(text);
  });
});
