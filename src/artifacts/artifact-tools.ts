import { isStoreError, TranscriptStoreError } from "../errors.ts";
import type { ArtifactStore } from "./artifact-store.ts";
import { cutChars } from "./metadata.ts";
import { DEFAULT_PREVIEW_CHARS } from "./pointer.ts";

/** A JSON schema of type object, as model tool definitions expect. */
export interface ToolParameters {
  type: "object";
  properties: Record<string, { type: string; description: string }>;
  required: string[];
  additionalProperties: false;
}

/** A model tool definition; `execute` returns a value the runtime serializes for the model. */
export interface ArtifactTool {
  name: "getArtifact" | "listArtifacts" | "storeArtifact";
  description: string;
  parameters: ToolParameters;
  execute(args: Record<string, unknown>): Promise<unknown>;
}

/** One line of `listArtifacts`. */
export interface ListedArtifact {
  pointer: string;
  name?: string;
  toolType: string;
  sizeBytes: number;
  preview: string;
  contentType: string;
  storedAt: number;
}

function requireString(args: Record<string, unknown> | undefined, key: string): string {
  const value = args?.[key];
  if (typeof value !== "string" || value.length === 0)
    throw new TranscriptStoreError("INVALID_OPTION", `${key} must be a non-empty string`);
  return value;
}

/**
 * The three tools that let a model work with artifacts (docs/artifacts.md, Model tools). They
 * deliberately bypass the spill threshold: `getArtifact` hands back the full value however big, and
 * `storeArtifact` always stores, so a tool's own output is never wrapped into yet another pointer.
 */
export function artifactTools(store: ArtifactStore): ArtifactTool[] {
  return [
    {
      name: "getArtifact",
      description: "Read the full content of a stored artifact by its pointer (artifact://<id>), id or name.",
      parameters: {
        type: "object",
        properties: { pointerOrName: { type: "string", description: "artifact://<id>, a numeric id, or the artifact's name" } },
        required: ["pointerOrName"],
        additionalProperties: false,
      },
      async execute(args) {
        const key = requireString(args, "pointerOrName");
        let value: unknown;
        try {
          value = store.get(key);
        } catch (err) {
          if (!isStoreError(err, "INVALID_ARTIFACT_ID")) throw err;
          value = null;
        }
        return value === null ? `[no artifact found for '${key}']` : value;
      },
    },
    {
      name: "listArtifacts",
      description: "List the artifacts stored in this session, with a short preview of each.",
      parameters: { type: "object", properties: {}, required: [], additionalProperties: false },
      async execute() {
        return store.list().map((ref): ListedArtifact => {
          const item: ListedArtifact = {
            pointer: ref.uri,
            toolType: ref.toolType,
            sizeBytes: ref.sizeBytes,
            preview: cutChars(ref.summary, DEFAULT_PREVIEW_CHARS),
            contentType: ref.contentType,
            storedAt: ref.createdAt,
          };
          if (ref.name !== undefined) item.name = ref.name;
          return item;
        });
      },
    },
    {
      name: "storeArtifact",
      description: "Store a value as a named artifact so later steps can read it with getArtifact instead of repeating it.",
      parameters: {
        type: "object",
        properties: {
          name: { type: "string", description: "Name to find the artifact by later" },
          value: { type: "string", description: "The content to store" },
          contentType: { type: "string", description: "Optional MIME type, e.g. application/json" },
        },
        required: ["name", "value"],
        additionalProperties: false,
      },
      async execute(args) {
        const name = requireString(args, "name");
        const value = args?.value;
        if (typeof value !== "string") throw new TranscriptStoreError("INVALID_OPTION", "value must be a string");
        const contentType = args?.contentType;
        if (contentType !== undefined && typeof contentType !== "string")
          throw new TranscriptStoreError("INVALID_OPTION", "contentType must be a string");
        const ref = store.save(
          value,
          contentType === undefined ? { toolType: "artifact", name } : { toolType: "artifact", name, contentType },
        );
        return { pointer: ref.uri, preview: cutChars(value, DEFAULT_PREVIEW_CHARS), sizeBytes: ref.sizeBytes, name };
      },
    },
  ];
}
