// Which methods a path answers to, so that an unknown method on a known path is 405 with Allow (a request's
// own route is Elysia's `route`), read from the app's public list of routes (`app.routes`).

export interface AllowedMethods {
  /** The methods a path answers to, sorted. */
  methodsFor(path: string): string[];
  /** Every method some route answers to, sorted (CORS allows them all: test/api/cors.test.ts). */
  methods: readonly string[];
}

/** Built once every route is mounted. */
export function allowedMethods(routes: ReadonlyArray<{ method: string; path: string }>): AllowedMethods {
  // ALL and OPTIONS (CORS preflight, mounted on every path) say nothing about what a path is for.
  const real = routes.filter((route) => route.method !== "ALL" && route.method !== "OPTIONS");
  const methods = [...new Set(real.map((route) => route.method))].sort();
  /** Paths without parameters, found at once: path → its methods. */
  const fixed = new Map<string, Set<string>>();
  /** The others, each as a pattern of its segments. */
  const patterns: { method: string; match: RegExp }[] = [];
  for (const { method, path } of real) {
    if (/[:*]/.test(path)) patterns.push({ method, match: pattern(path) });
    else fixed.set(trimSlash(path), (fixed.get(trimSlash(path)) ?? new Set()).add(method));
  }
  return {
    methodsFor(path) {
      const trimmed = trimSlash(path);
      const exact = fixed.get(trimmed);
      return methods.filter(
        (method) => exact?.has(method) || patterns.some((p) => p.method === method && p.match.test(trimmed)),
      );
    },
    methods,
  };
}

/** A template's segments as a pattern: a parameter matches one segment, a wildcard the rest of the path. */
function pattern(template: string): RegExp {
  const source = trimSlash(template)
    .split("/")
    .map((segment) =>
      segment === "*" ? ".*" : segment.startsWith(":") ? "[^/]+" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
    )
    .join("/");
  return new RegExp(`^${source}$`);
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}
