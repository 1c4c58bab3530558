// The readers every area of the configuration shares: each takes a variable, its fallback and its bounds,
// and returns the value or throws one ConfigError naming the variable.

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    accepts: string,
    got: string,
  ) {
    super(`${variable}: ${accepts} (got ${JSON.stringify(got)})`);
    this.name = "ConfigError";
  }
}

export function oneOf<const T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(name, `one of ${allowed.join(", ")}`, value);
}

export function nonEmpty(env: Env, name: string, fallback: string): string {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if (value.trim() === "") throw new ConfigError(name, "a host name or address", value);
  return value;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  const parsed = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`, value);
  }
  return parsed;
}

export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = env[name];
  if (value === undefined || value === "") return fallback;
  if (value === "true") return true;
  if (value === "false") return false;
  throw new ConfigError(name, "true or false", value);
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** "90", "90s", "15m", "1h" or "7d" in whole seconds; null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^(\d{1,15})([smhd]?)$/.exec(text);
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2] || "s"]! : NaN;
  return Number.isSafeInteger(seconds) ? seconds : null;
}

/** Parses a duration (see parseDuration) into whole seconds within [min, max]. */
export function duration(env: Env, name: string, fallback: string, min: number, max: number): number {
  const value = env[name] || fallback;
  const seconds = parseDuration(value) ?? NaN;
  if (!(seconds >= min && seconds <= max)) {
    throw new ConfigError(name, `a duration such as 30s, 15m, 1h or 7d, from ${min}s to ${max}s`, value);
  }
  return seconds;
}

// A loop, not recursion: called once per node, a recursive walk crossed the JIT's threshold and
// compiled itself before svc listened (docs/performance.md, "Footprint": a start that compiles nothing
// holds less).
export function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node && typeof node === "object" && !(node instanceof Uint8Array)) {
      pending.push(...Object.values(node));
      Object.freeze(node);
    }
  }
  return value;
}

/**
 * The URL as an error may quote it: whatever stands between the scheme and the last "@" (the user and
 * password, however malformed: a raw "/", "@" or "%" in them must not decide what is shown) becomes ***.
 */
export function withoutCredentials(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? "";
  const at = url.lastIndexOf("@");
  return at < scheme.length ? url : `${scheme}***@${url.slice(at + 1)}`;
}
