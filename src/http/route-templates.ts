// Which methods a path answers to, so that an unknown method on a known path is 405 with Allow (a request's
// own route is Elysia's `route`), read from the app's public list of routes (`app.routes`), matched as
// Elysia's router prefers: at each segment a fixed name before a parameter, a parameter before a wildcard.

export interface RouteTemplates {
  /** The template a path is answered by for a method (methodsFor's question), undefined when none. */
  template(method: string, path: string): string | undefined;
  /** The methods a path answers to, sorted. */
  methodsFor(path: string): string[];
  /** Every method some route answers to, sorted (CORS allows them all: test/api/cors.test.ts). */
  methods: readonly string[];
}

interface Pattern {
  template: string;
  match: RegExp;
  /** Per segment: 0 a fixed name, 1 a parameter, 2 a wildcard; compared segment by segment. */
  rank: number[];
}

/** Built once every route is mounted. */
export function routeTemplates(routes: ReadonlyArray<{ method: string; path: string }>): RouteTemplates {
  // ALL and OPTIONS (CORS preflight, mounted on every path) say nothing about what a path is for.
  const real = routes.filter((route) => route.method !== "ALL" && route.method !== "OPTIONS");
  const methods = [...new Set(real.map((route) => route.method))].sort();
  /** Paths without parameters: path → method → template. */
  const fixed = new Map<string, Map<string, string>>();
  /** The others, by method, most specific first. */
  const patterns = new Map<string, Pattern[]>();
  for (const { method, path } of real) {
    if (!/[:*]/.test(path)) {
      const key = trimSlash(path);
      if (!fixed.has(key)) fixed.set(key, new Map());
      fixed.get(key)!.set(method, path);
      continue;
    }
    if (!patterns.has(method)) patterns.set(method, []);
    patterns.get(method)!.push(pattern(path));
  }
  for (const list of patterns.values()) list.sort((a, b) => compareRanks(a.rank, b.rank));

  function find(method: string, path: string): string | undefined {
    const trimmed = trimSlash(path);
    const exact = fixed.get(trimmed)?.get(method);
    if (exact !== undefined) return exact;
    return patterns.get(method)?.find((p) => p.match.test(trimmed))?.template;
  }

  return {
    // Elysia answers HEAD with a GET route (without the body).
    template: (method, path) => find(method, path) ?? (method === "HEAD" ? find("GET", path) : undefined),
    methodsFor: (path) => methods.filter((method) => find(method, path) !== undefined),
    methods,
  };
}

function pattern(template: string): Pattern {
  const segments = trimSlash(template).split("/");
  const rank = segments.map((segment) => (segment === "*" ? 2 : segment.startsWith(":") ? 1 : 0));
  const source = segments
    .map((segment, i) =>
      rank[i] === 2 ? ".*" : rank[i] === 1 ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return { template, match: new RegExp(`^${source}$`), rank };
}

function compareRanks(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  // A wildcard matches deeper paths too: the longer template is the more specific.
  return b.length - a.length;
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
