// Which route template a request matched (for metrics and the access line) and which methods a path
// answers to (so an unknown method on a known path is 405 with Allow). Built once from Elysia's routes.

export interface Route {
  method: string;
  path: string;
}

export interface RouteIndex {
  /** The template a request is answered by, such as /svc-api/v1/users/:id; undefined when none. */
  template(method: string, path: string): string | undefined;
  /** The methods a path answers to, sorted. */
  methodsFor(path: string): string[];
}

interface Pattern {
  method: string;
  template: string;
  regex: RegExp;
}

export function routeIndex(routes: readonly Route[]): RouteIndex {
  // ALL and OPTIONS (CORS preflight, mounted on every path) say nothing about what a path is for.
  const real = routes.filter((r) => r.method !== "ALL" && r.method !== "OPTIONS");
  // Most requests hit a path without parameters: a lookup by path, then method; no regex, no key built.
  const exact = new Map<string, Map<string, string>>();
  const patterns: Pattern[] = [];
  for (const { method, path } of real) {
    if (!/[:*]/.test(path)) {
      const key = trimSlash(path);
      let byMethod = exact.get(key);
      if (!byMethod) exact.set(key, (byMethod = new Map()));
      byMethod.set(method, path);
    }
    patterns.push({ method, template: path, regex: routeRegex(path) });
  }
  // As Elysia's router: a parameter before a wildcard.
  patterns.sort((a, b) => Number(a.template.includes("*")) - Number(b.template.includes("*")));
  return {
    template(method, path) {
      const found = exact.get(trimSlash(path))?.get(method);
      if (found !== undefined) return found;
      for (const p of patterns) if (p.method === method && p.regex.test(path)) return p.template;
      return undefined;
    },
    methodsFor(path) {
      return [...new Set(patterns.filter((p) => p.regex.test(path)).map((p) => p.method))].sort();
    },
  };
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

function routeRegex(path: string): RegExp {
  const body = path
    .replace(/\/+$/, "")
    .split("/")
    .map((part) => (part.startsWith(":") ? "[^/]+" : part === "*" ? ".*" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${body}/?$`);
}
