import { execFile } from "node:child_process";
import { accessSync, constants, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const MODULES = join(import.meta.dirname, "../../node_modules");

/** The real agents the devDependencies install (their native binaries), by name. */
export const AGENT_BINARIES = {
  claude: join(MODULES, "@anthropic-ai/claude-code-linux-x64/claude"),
  codex: join(MODULES, "@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"),
} as const;

/** The binary of `agent` when it is installed and runs here (Linux x64), else null. */
export function agentBinary(agent: keyof typeof AGENT_BINARIES): string | null {
  if (process.platform !== "linux" || process.arch !== "x64") return null;
  try {
    accessSync(AGENT_BINARIES[agent], constants.X_OK);
    return AGENT_BINARIES[agent];
  } catch {
    return null;
  }
}

/**
 * Whether a real-agent test file runs: with the agent's package installed, yes; without it a loud
 * SKIPPED line, except under CI=true, where the absence fails the run (CI installs the devDependencies).
 */
export function agentsAvailable(file: string, agents: Array<keyof typeof AGENT_BINARIES>): boolean {
  const missing = agents.filter((a) => agentBinary(a) === null);
  if (missing.length === 0) return true;
  const why = `${missing.join(", ")} not installed (npm ci installs @anthropic-ai/claude-code and @openai/codex; Linux x64 only)`;
  if (process.env.CI === "true") throw new Error(`${file}: ${why}, and CI=true: the real-agent tests must run`);
  console.warn(`SKIPPED ${file}: ${why}`);
  return false;
}

/** Runs an agent offline (stdin closed, a private environment) and gives its output; rejects on a non-zero exit. */
export function runAgent(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(bin, args, { cwd, env, timeout: 120_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(" ")}: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
    child.stdin?.end();
  });
}

/** Claude Code's environment: a private HOME, the mock as its API, nothing but the model call. */
export function claudeEnv(home: string, mockUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: "/usr/bin:/bin",
    HOME: home,
    ANTHROPIC_BASE_URL: mockUrl,
    ANTHROPIC_API_KEY: "sk-ant-test-dummy",
    DISABLE_TELEMETRY: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
  };
}

/**
 * Codex's environment: a private HOME and CODEX_HOME whose `config.toml` points the provider at the
 * mock (`provider`: Codex's own `openai` through `openai_base_url`, or a provider of that name).
 */
export function codexEnv(home: string, codexHome: string, mockUrl: string, provider = "openai"): NodeJS.ProcessEnv {
  mkdirSync(codexHome, { recursive: true });
  const config =
    provider === "openai"
      ? `openai_base_url = "${mockUrl}/v1"\nmodel = "gpt-5.4"\n`
      : `model = "gpt-5.4"\nmodel_provider = "${provider}"\n\n[model_providers.${provider}]\nname = "${provider}"\n` +
        `base_url = "${mockUrl}/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n`;
  writeFileSync(join(codexHome, "config.toml"), config);
  return { PATH: "/usr/bin:/bin", HOME: home, CODEX_HOME: codexHome, OPENAI_API_KEY: "sk-test-dummy" };
}

/** Every file under `dir` whose name ends with `.jsonl`, sorted. */
export function jsonlFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names.sort()) {
      const p = join(d, n);
      if (n.endsWith(".jsonl")) out.push(p);
      else walk(p);
    }
  };
  walk(dir);
  return out;
}

/** True when `needles` occur in `haystack` in this order. */
export function inOrder(haystack: string, needles: readonly string[]): boolean {
  let at = 0;
  for (const n of needles) {
    const i = haystack.indexOf(n, at);
    if (i === -1) return false;
    at = i + n.length;
  }
  return true;
}
