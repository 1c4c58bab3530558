// Recording an event that goes with no change of its own (a refused login, a factor checked): its write
// failing (a full disk) must not change the answer, so the event goes to the log instead.
import type { AuditEvent, AuditStore } from "../db/store.ts";
import type { Logger } from "../observability/log.ts";

export type AuditNote = (event: AuditEvent) => Promise<void>;

export function auditNote(audit: Pick<AuditStore, "record">, logger: Pick<Logger, "warn">): AuditNote {
  return async (event) => {
    try {
      await audit.record(event);
    } catch (error) {
      logger.warn({ err: error, audit: event }, "audit event not recorded");
    }
  };
}
