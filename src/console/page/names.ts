// Usernames for the ids the console shows: the audit log's actors and targets, categories' creators.
// The first thousand accounts come in one request; an id past them is asked for on its own when it
// comes into view, so a box with more accounts names them all, at a request per account not seen yet.
import type { components } from "@svc/client";
import { request } from "./api.ts";

/** Accounts asked for by id at once: a page of the audit log can bring up to a hundred new ids. */
const AT_ONCE = 6;

export interface Names {
  /** The username of an id: the id itself until it is known, and for an account since deleted. */
  of(id: string): string;
  /** Asks for the names of these ids (nulls and ids asked for before are passed over); `changed` runs as they arrive. */
  want(ids: Iterable<string | null | undefined>): void;
}

type Account = components["schemas"]["User"];

export function names(changed: () => void): Names {
  const known = new Map<string, string>();
  const asked = new Set<string>();
  const queue: string[] = [];
  let running = 0;
  let first: Promise<void> | undefined;

  const learn = (accounts: Account[]) => {
    for (const account of accounts) known.set(account.id, account.username);
    changed();
  };
  function pump(): void {
    while (running < AT_ONCE && queue.length > 0) {
      const id = queue.shift()!;
      if (known.has(id)) continue;
      running++;
      request<Account>("GET", `/admin/users/${encodeURIComponent(id)}`)
        // Refused or gone (a deleted account is a 404): the id stays as it is.
        .then(
          (answer) => learn([answer.body]),
          () => {},
        )
        .finally(() => {
          running--;
          pump();
        });
    }
  }
  return {
    of: (id) => known.get(id) ?? id,
    want(ids) {
      const fresh = [...new Set(ids)].filter((id): id is string => !!id && !asked.has(id));
      if (fresh.length === 0) return;
      for (const id of fresh) asked.add(id);
      // Ids wait for the first thousand, which most often hold them.
      first ??= request<Account[]>("GET", "/admin/users?limit=1000").then(
        (answer) => learn(answer.body),
        () => {},
      );
      void first.then(() => {
        queue.push(...fresh);
        pump();
      });
    },
  };
}
