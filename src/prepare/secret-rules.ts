/**
 * The built-in secret rules of the redaction stage (`redact-secrets.ts`). Each rule names the
 * cheap substrings (`keywords`) one of which every match contains: one case-insensitive search for
 * all keywords picks the rules whose regexes run on a string; a string holding none of them is never
 * given to any regex (as gitleaks does). A regex's first capture group, when it
 * has one, is the secret (the rest is context kept as it is); without one the whole match is.
 * `check`, when present, vets a candidate secret (entropy, placeholders) before it is redacted.
 * Patterns follow the public formats of each provider and the rules of gitleaks and detect-secrets.
 */
import { isName, literalPassword, randomLooking, shannonEntropy, wordy } from "./secret-shape.ts";

export interface SecretRule {
  /** Named in the marker: `[REDACTED:<id>:<hash>]`. Lowercase letters, digits and `-`. */
  id: string;
  /** A regex with the `g` flag (a string is compiled with `g`). */
  pattern: RegExp;
  /** Substrings (found in any letter case), one of which is in every match; none: the regex always runs. */
  keywords?: readonly string[];
  /**
   * The farthest (in characters) a match starts before the first keyword in it: the regex is then
   * tried only there (sticky), not over the whole text. Unset: the whole text, when a keyword occurs.
   */
  back?: number;
  /** Extra vetting of a candidate secret (`match`: the whole match, its context); false keeps it. */
  check?: (secret: string, match: string) => boolean;
}

/** A password rule's check: a literal password (`secret-shape.ts`) of at least 6 characters. */
function realPassword(secret: string): boolean {
  return literalPassword(secret, 6);
}

/** The environment variables database clients read their password from. */
const ENV_PASSWORD_NAMES = "PGPASSWORD|MYSQL_PWD|MYSQL_PASSWORD|MYSQL_ROOT_PASSWORD|POSTGRES_PASSWORD|REDISCLI_AUTH";

const PEM_BODY = /[A-Za-z0-9+/=]{40,}/;

/** A JWT's first segment decodes to a JSON object (its header). */
function jwtHeader(token: string): boolean {
  const head = token.slice(0, token.indexOf("."));
  try {
    const parsed: unknown = JSON.parse(Buffer.from(head, "base64url").toString("utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

export const BUILTIN_SECRET_RULES: readonly SecretRule[] = [
  {
    id: "pem-private-key",
    // With its END line, or cut off before it (a `head`, a truncated output): then the body lines that
    // follow, their breaks real or `\n` escapes (a key inside a JSON or .env string).
    pattern: new RegExp(
      "-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----" +
        String.raw`(?:[\s\S]{40,}?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|` +
        String.raw`(?:(?:\r?\n|(?:\\r)?\\n)(?:[A-Za-z0-9+/=]+|[A-Za-z-]+: [^\n\\]*)?)+)`,
      "g",
    ),
    keywords: ["PRIVATE KEY"],
    back: 110,
    check: (secret) => PEM_BODY.test(secret),
  },
  {
    id: "aws-access-key",
    pattern: /\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b/g,
    keywords: ["AKIA", "ASIA", "ABIA", "ACCA", "A3T"],
    back: 0,
  },
  {
    id: "aws-secret-key",
    pattern: /aws_?(?:secret)?_?(?:access)?_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    keywords: ["aws"],
    back: 0,
    // The key shape is strict (40 base64 characters after an aws key name): AWS's own documented example counts.
    check: (secret) => /[0-9]/.test(secret) && /[A-Za-z]/.test(secret) && shannonEntropy(secret) >= 3.5,
  },
  {
    id: "google-api-key",
    pattern: /\b(AIza[0-9A-Za-z_-]{35})(?![0-9A-Za-z_-])/g,
    keywords: ["AIza"],
    back: 0,
  },
  {
    id: "azure-storage-key",
    pattern: /AccountKey=([A-Za-z0-9+/]{86}==)/g,
    keywords: ["AccountKey="],
    back: 0,
  },
  {
    id: "azure-client-secret",
    pattern: /(?<![A-Za-z0-9_~.-])([A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34})(?![A-Za-z0-9_~.-])/g,
    keywords: ["Q~"],
    back: 4,
    check: (secret) => shannonEntropy(secret) >= 3,
  },
  {
    id: "github-token",
    pattern: /\b((?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{82})(?![A-Za-z0-9_])/g,
    keywords: ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"],
    back: 0,
  },
  {
    id: "gitlab-token",
    pattern: /\b((?:glpat|glptt|gldt|glrt|glcbt|gloas|glsoat|glffct|glimt|glagent|glft)-[A-Za-z0-9_-]{20,50})(?![A-Za-z0-9_-])/g,
    keywords: ["glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glffct-", "glimt-", "glagent-", "glft-"],
    back: 0,
  },
  {
    id: "anthropic-api-key",
    pattern: /\b(sk-ant-(?:api|admin|sid)\d{2}-[A-Za-z0-9_-]{80,})(?![A-Za-z0-9_-])/g,
    keywords: ["sk-ant-"],
    back: 0,
  },
  {
    id: "openai-api-key",
    pattern:
      // Legacy keys hold T3BlbkFJ (base64 of "OpenAI"); project, service-account and admin keys a prefix.
      /\b(sk-(?:(?:proj|svcacct|admin)-)?[\w-]{20,}T3BlbkFJ[\w-]{20,}|sk-(?:proj|svcacct|admin)-[\w-]{40,})(?![\w-])/g,
    keywords: ["T3BlbkFJ", "sk-proj-", "sk-svcacct-", "sk-admin-"],
  },
  {
    id: "slack-token",
    pattern: /\b(xox[baprseo]-[0-9A-Za-z]{1,}-[0-9A-Za-z-]{8,})(?![0-9A-Za-z-])/g,
    keywords: ["xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "xoxe-", "xoxo-"],
    back: 0,
  },
  {
    id: "slack-webhook",
    pattern: /(?:https?:\/\/)?hooks\.slack\.com\/(?:services|workflows|triggers)\/([A-Za-z0-9+/_-]{20,})/g,
    keywords: ["hooks.slack.com"],
    back: 8,
  },
  {
    id: "stripe-key",
    pattern: /\b((?:sk|rk|whsec)_(?:test|live|prod)_[A-Za-z0-9]{10,99})(?![A-Za-z0-9])/g,
    keywords: ["sk_test_", "sk_live_", "sk_prod_", "rk_test_", "rk_live_", "rk_prod_", "whsec_test_", "whsec_live_", "whsec_prod_"],
    back: 0,
  },
  {
    id: "jwt",
    pattern: /\b(eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}(?:\.[A-Za-z0-9_-]{10,})?)(?![A-Za-z0-9_-])/g,
    keywords: ["eyJ"],
    back: 0,
    check: jwtHeader,
  },
  {
    id: "url-password",
    // The user may be empty (`redis://:pw@host`).
    pattern: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}:\/\/[^\s:/@"'<>`]{0,100}:([^\s:/@"'<>`]{1,200})@[A-Za-z0-9.[\]-]+/g,
    keywords: ["://"],
    back: 21,
    check: realPassword,
  },
  {
    id: "url-query-password",
    pattern: /[?&](?:password|passwd|pwd)=([^&\s"'#<>`;]{1,200})/gi,
    keywords: ["password=", "passwd=", "pwd="],
    back: 1,
    check: (secret) => literalPassword(secret, 4),
  },
  {
    id: "connection-string-password",
    // ADO.NET / ODBC (`…;Password=…;`) and `password=` in text. After a `;` the string is a
    // connection string, so any literal counts; elsewhere a wordy identifier is code (`password=userPassword;`).
    // A quoted value (`"…"`, `'…'`, ODBC's `{…}`, which may hold `;`) counts after a `;` only.
    pattern: new RegExp(
      String.raw`(?:^|[;\s"'])(?:password|pwd)\s*=\s*(?:(?<=;\s*(?:password|pwd)\s*=\s*)` +
        String.raw`(?:"([^"\r\n]{1,200})"|'([^'\r\n]{1,200})'|\{([^}\r\n]{1,200})\})|([^;"'\s]{1,200}))`,
      "gi",
    ),
    keywords: ["password", "pwd"],
    back: 1,
    check: (secret, match) => {
      if (/[()]/.test(secret)) return false;
      if (match.startsWith(";")) return literalPassword(secret, 4);
      return realPassword(secret) && !isName(secret.replace(/,$/, ""));
    },
  },
  {
    id: "libpq-password",
    // A libpq conninfo: `password=` among its other `key=value` words (host, port, dbname, user…).
    pattern: new RegExp(
      String.raw`(?<=\b(?:host|hostaddr|port|dbname|user|sslmode)=[^\s"'=,()]+\s+(?:[a-z_]+=[^\s"'=,()]+\s+)*)` +
        String.raw`password=(?:'((?:[^'\\\r\n]|\\.){1,200})'|([^\s"',()]{1,200})(?![,(]))` +
        String.raw`|\bpassword=([^\s"',()]{1,200})(?=(?:\s+[a-z_]+=[^\s"'=,()]+)*\s+(?:host|hostaddr|port|dbname|user|sslmode)=)`,
      "g",
    ),
    keywords: ["password="],
    back: 0,
    check: (secret) => literalPassword(secret, 4),
  },
  {
    id: "env-password",
    // The password variables of database clients: even a short value is the password. Assigned with
    // an equals sign, or a key with its value: quoted (JSON, an object's key) or a YAML line's key
    // (at its start), the value then all that follows on its line.
    pattern: new RegExp(
      String.raw`\b(?:${ENV_PASSWORD_NAMES})(?:=["']?|(?<=(?:^[ \t]*(?:-[ \t]+)?|["'])(?:${ENV_PASSWORD_NAMES}))["']?[ \t]*:[ \t]*["']?` +
        String.raw`(?=[^\s"';&|]{1,200}["']?[ \t]*(?:[,}\r\n]|$)))([^\s"';&|]{1,200})`,
      "gm",
    ),
    keywords: ENV_PASSWORD_NAMES.split("|"),
    back: 0,
    check: (secret) => literalPassword(secret, 3),
  },
  {
    id: "curl-user-password",
    // `-u` within 300 characters of `curl` on its line: a line of many `curl`s costs each one that much, no more.
    pattern: /\bcurl\b[^\n]{0,300}?\s(?:-u|--user)\s*["']?[^\s:"']*:([^\s"']{1,200})/g,
    keywords: ["curl"],
    back: 0,
    check: (secret) => literalPassword(secret, 4),
  },
  {
    id: "basic-auth-header",
    pattern: /authorization["']?\s*[:=]\s*["']?basic\s+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])/gi,
    keywords: ["authorization"],
    back: 0,
    // The credential decodes to `user:password`.
    check: (secret) => /^[\x20-\x7e]*:[\x20-\x7e]+$/.test(Buffer.from(secret, "base64").toString("latin1")),
  },
  {
    id: "npm-token",
    pattern: /\b(npm_[A-Za-z0-9]{36})(?![A-Za-z0-9_])/g,
    keywords: ["npm_"],
    back: 0,
    check: (secret) => !wordy(secret.slice(4)) && shannonEntropy(secret) >= 3.5,
  },
  {
    id: "huggingface-token",
    pattern: /\b(hf_[A-Za-z0-9]{34})(?![A-Za-z0-9_])/g,
    keywords: ["hf_"],
    back: 0,
    check: (secret) => !wordy(secret.slice(3)) && shannonEntropy(secret) >= 3.5,
  },
  {
    id: "slack-app-token",
    pattern: /\b(xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+)(?![A-Za-z0-9-])/gi,
    keywords: ["xapp-"],
    back: 0,
  },
  {
    id: "secret-assignment",
    pattern: new RegExp(
      // Starts at the keyword (not at the name's start): the regex engine then skips ahead to a keyword.
      String.raw`(?:secret|token|passw(?:or)?d|api_?key|access_?key|private_?key|auth_?key|credentials?)[\w-]*` +
        String.raw`["']?\s*(?::=|=|:)\s*["']?([\w/+.=~-]{20,200})(?![\w/+.=~([\`-])`,
      "gi",
    ),
    keywords: [
      "secret",
      "token",
      "passw",
      "api_key",
      "apikey",
      "access_key",
      "accesskey",
      "private_key",
      "privatekey",
      "auth_key",
      "authkey",
      "credential",
    ],
    back: 0,
    check: (secret) => randomLooking(secret, 3.7),
  },
];
