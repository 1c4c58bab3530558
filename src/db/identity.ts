// A database's identity and its event log's epoch (svc_database, category-events.ts): 16 random hex digits.
// A module of its own so that a first start (new-database.ts) makes one without loading Drizzle.

export function newIdentity(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
}
