import { request } from "node:http";

/** One HTTP answer: status, headers, body text. */
export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request to the viewer (any Host, cookie, method, body), as a browser or an attacker would send it. */
export function http(
  url: string,
  options: { method?: string; host?: string; cookie?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: options.method ?? "GET",
        headers: {
          Host: options.host ?? u.host,
          ...(options.cookie ? { Cookie: options.cookie } : {}),
          ...(options.body !== undefined ? { "Content-Type": "application/x-www-form-urlencoded" } : {}),
          ...options.headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      },
    );
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** Opens the printed URL and returns the session cookie the answer sets. */
export async function login(printedUrl: string): Promise<string> {
  const first = await http(printedUrl);
  const set = first.headers["set-cookie"];
  const cookie = (Array.isArray(set) ? set[0] : set)?.split(";")[0];
  if (first.status !== 303 || cookie === undefined) throw new Error(`login failed: ${first.status}`);
  return cookie;
}
