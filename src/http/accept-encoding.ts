// Whether a client takes a gzipped body, by its Accept-Encoding (RFC 9110, 12.5.3): "gzip;q=0" is a
// refusal, not an acceptance, and "*" stands for every coding the header does not name.

/** Weights are at most three decimals; anything else is not a weight and leaves the coding at 1. */
const WEIGHT = /;\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i;

export function acceptsGzip(header: string | null): boolean {
  if (!header) return false;
  let wildcard = 0;
  for (const part of header.split(",")) {
    const semicolon = part.indexOf(";");
    const coding = (semicolon === -1 ? part : part.slice(0, semicolon)).trim().toLowerCase();
    if (coding !== "gzip" && coding !== "x-gzip" && coding !== "*") continue;
    const weight = semicolon === -1 ? 1 : Number(WEIGHT.exec(part.slice(semicolon))?.[1] ?? 1);
    if (coding !== "*") return weight > 0;
    wildcard = weight;
  }
  return wildcard > 0;
}
