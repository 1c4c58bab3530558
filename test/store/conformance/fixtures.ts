// What the conformance suite's files share: a clock the tests move (no test waits on the wall clock),
// records to create, audit events, and the check for an AppError's code.
import { expect } from "bun:test";
import { auditEvent, type AuditAction } from "../../../src/audit/model.ts";
import type { AuditEvent, NewCategory, NewUser, SessionRecord } from "../../../src/db/store.ts";
import { AppError } from "../../../src/errors/index.ts";

/** The suite's time, in ms: each tick moves it one second on, and a test may move it further. */
export const clock = { ms: Date.parse("2026-01-01T00:00:00.000Z") };
export const tick = () => new Date((clock.ms += 1000)).toISOString();

/** A user to create, named `username`, with an e-mail made from the name. */
export function newUser(username: string, overrides: Partial<NewUser> = {}): NewUser {
  return {
    id: Bun.randomUUIDv7(),
    username,
    email: `${username.toLowerCase()}@example.com`,
    passwordHash: `hash-of-${username}`,
    createdAt: tick(),
    ...overrides,
  };
}

export function newCategory(name: string, overrides: Partial<NewCategory> = {}): NewCategory {
  return {
    id: Bun.randomUUIDv7(),
    name,
    description: null,
    colorHex: "#64748B",
    icon: null,
    createdBy: null,
    createdAt: tick(),
    ...overrides,
  };
}

/** A session of the user's, started `at` (the clock's next tick), live for a day after the clock. */
export function newSession(userId: string, at = tick(), overrides: Partial<SessionRecord> = {}): SessionRecord {
  return {
    id: Bun.randomUUIDv7(),
    userId,
    createdAt: at,
    lastUsedAt: at,
    expiresAt: new Date(clock.ms + 86_400_000).toISOString(),
    userAgent: null,
    clientAddress: null,
    amr: "pwd",
    mfaAt: null,
    ...overrides,
  };
}

/** An audit event of the action, happening at the clock's next tick. */
export function event(action: AuditAction, overrides: Partial<AuditEvent> = {}): AuditEvent {
  return { ...auditEvent(action, { origin: { address: "192.0.2.9", requestId: "req-1" } }, tick()), ...overrides };
}

export async function expectCode(promise: Promise<unknown>, code: string): Promise<void> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code as AppError["code"]);
}
