import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/** The cookie that carries the viewer's token once the printed URL was opened. */
export const TOKEN_COOKIE = "ts_viewer";

/**
 * The Content-Security-Policy of every page: nothing but the server itself (scripts and styles as
 * files, never inline), images from the server or `data:`, no frames, no plugins, no form posts elsewhere.
 */
export const VIEWER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** A random token (URL-safe, 256 bits). */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return null;
}

/** What the guard decided of a request. */
export type Admission = { ok: true; setCookie: boolean } | { ok: false; status: number; reason: string };

/**
 * Admits a request only when its `Host` header names the server's own address (a DNS-rebinding
 * page sends its own host name) and it carries the token: as `?token=` (the printed URL; the answer
 * then sets the cookie) or in the cookie (`SameSite=Strict`, `HttpOnly`).
 */
export function admit(req: IncomingMessage, url: URL, token: string, allowedHosts: ReadonlySet<string>): Admission {
  const host = (req.headers.host ?? "").toLowerCase();
  if (!allowedHosts.has(host)) return { ok: false, status: 421, reason: "unknown Host header" };
  const given = url.searchParams.get("token");
  if (given !== null && sameSecret(given, token)) return { ok: true, setCookie: true };
  const cookie = cookieOf(req, TOKEN_COOKIE);
  if (cookie !== null && sameSecret(cookie, token)) return { ok: true, setCookie: false };
  return { ok: false, status: 401, reason: "missing or wrong token: open the URL the server printed" };
}

/** The per-session CSRF token of write actions: derived from the server token, so a page from elsewhere cannot know it. */
export function csrfTokenFor(token: string, sessionId: string): string {
  return createHash("sha256").update(`${token}\u0000csrf\u0000${sessionId}`).digest("base64url");
}

/** True when a write action's CSRF field matches the session's. */
export function csrfOk(given: string | null, token: string, sessionId: string): boolean {
  return given !== null && sameSecret(given, csrfTokenFor(token, sessionId));
}

/** The headers every answer carries (the CSP, no sniffing, no referrer, no framing, no caching of private pages). */
export function securityHeaders(res: ServerResponse, token: string | null): void {
  res.setHeader("Content-Security-Policy", VIEWER_CSP);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Cross-Origin-Resource-Policy", "same-origin");
  res.setHeader("Cache-Control", "no-store");
  if (token !== null) res.setHeader("Set-Cookie", `${TOKEN_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict`);
}
