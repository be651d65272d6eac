/** A URL without its password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, "$1:***@");
}
