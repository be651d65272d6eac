/** `engines.node` of the package, e.g. ">=22.19". */
export function requiredNode(): string;
/** Whether `version` ("22.23.3" or "v22.23.3") satisfies `range` (">=22.19"). */
export function satisfies(version: string, range: string): boolean;
