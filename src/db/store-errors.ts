// The storage contract's own errors, apart from store.ts (which re-exports them) so that the code
// implementing the contract imports them without importing the contract that imports it.

/** A write referred to a row that no longer exists (a user deleted while the request ran). */
export class ReferenceGone extends Error {
  override name = "ReferenceGone";
}

/** A conditional change found the record at another version: nothing was written. */
export class StaleVersion extends Error {
  override name = "StaleVersion";
  constructor(readonly current: number) {
    super(`the record is at version ${current}`);
  }
}

/** A bulk load (`svc copy`) was refused or rolled back: the target is as it was. */
export class LoadRefused extends Error {
  override name = "LoadRefused";
}

/** The database file is damaged (SQLite's integrity check found a problem); nothing was written to it. */
export class DamagedDatabase extends Error {
  override name = "DamagedDatabase";
}

/** Opening with `existing` found no svc database there; nothing was created. */
export class NoSuchDatabase extends Error {
  override name = "NoSuchDatabase";
}
