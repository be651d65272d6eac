/** The content child `label` writes as its i-th artifact: recognisable and a few KB long. */
export function childContent(label: string, i: number): string {
  return `${label}:${i}\n${`${label}-${i} `.repeat(200)}\n`;
}
