// The storage contract in domain words. Every database svc supports implements it, and one
// conformance suite (test/store/) holds each implementation to it.

export interface UserRecord {
  id: string;
  username: string;
  /** Lower case. */
  email: string;
  passwordHash: string;
  /** Tokens carry the version they were issued under; bumping it revokes every earlier token. */
  tokenVersion: number;
  createdAt: string;
  updatedAt: string;
}

/** A user to insert: the store sets the token version to 0 and updatedAt to createdAt. */
export type NewUser = Pick<UserRecord, "id" | "username" | "email" | "passwordHash" | "createdAt">;

export type UserPatch = Partial<Pick<UserRecord, "username" | "email">>;

export interface UserPage {
  limit: number;
  /** Only users whose id sorts after this one (keyset paging). */
  after?: string;
}

export interface UserStore {
  /** Inserts the user. Throws AppError `username_taken` or `email_taken` on a clash. */
  create(user: NewUser): Promise<UserRecord>;
  /** null: no user has this id. */
  findById(id: string): Promise<UserRecord | null>;
  /** Finds by username without regard to case, or by e-mail when `login` holds an `@`. null: no match. */
  findByLogin(login: string): Promise<UserRecord | null>;
  /** Users in id order (oldest first), at most `limit` of them. */
  list(page: UserPage): Promise<UserRecord[]>;
  /** Applies the patch. null: no user has this id. Throws `username_taken` / `email_taken`. */
  update(id: string, patch: UserPatch, updatedAt: string): Promise<UserRecord | null>;
  /** Replaces the hash and bumps the token version. null: no user has this id. */
  setPassword(id: string, passwordHash: string, updatedAt: string): Promise<UserRecord | null>;
  /** Deletes the user; their categories stay with no creator. false: no user has this id. */
  delete(id: string): Promise<boolean>;
}

export interface CategoryRecord {
  id: string;
  name: string;
  description: string | null;
  /** "#RRGGBB", upper case. */
  colorHex: string;
  icon: string | null;
  /** null once the creator is deleted, or when created without authentication. */
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

/** A category to insert: the store sets updatedAt to createdAt. */
export type NewCategory = Omit<CategoryRecord, "updatedAt">;

export type CategoryPatch = Partial<Pick<CategoryRecord, "name" | "description" | "colorHex" | "icon">>;

export interface CategoryStore {
  /** Every category, by name without regard to case. */
  list(): Promise<CategoryRecord[]>;
  /** null: no category has this id. */
  findById(id: string): Promise<CategoryRecord | null>;
  /** Throws AppError `category_name_taken` when the name clashes without regard to case. */
  create(category: NewCategory): Promise<CategoryRecord>;
  /** null: no category has this id. Throws `category_name_taken`. */
  update(id: string, patch: CategoryPatch, updatedAt: string): Promise<CategoryRecord | null>;
  /** false: no category has this id. */
  delete(id: string): Promise<boolean>;
}

export interface Store {
  readonly users: UserStore;
  readonly categories: CategoryStore;
  /** Resolves when the database answers a trivial query; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The key uniqueness is decided on: case and surrounding space do not make a name new. */
export function nameKey(name: string): string {
  return name.trim().normalize("NFC").toLowerCase();
}
