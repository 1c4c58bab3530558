// Second factors as `svc copy` reads them: how many rows there are, and every app row, recovery code and
// passkey a page at a time, in key order.
import { count } from "drizzle-orm";
import type { Db, Dialect, Tables } from "./dialect.ts";
import {
  PASSKEY_FIELDS,
  RECOVERY_FIELDS,
  TOTP_FIELDS,
  type FactorCounts,
  type PasskeyRow,
  type RecoveryCodeRecord,
  type TotpRecord,
} from "./mfa-records.ts";
import { columns, pageAfter } from "./rows.ts";

export interface MfaCopy {
  /** For `svc copy`: how many app rows (pending too), recovery codes and passkeys there are. */
  counts(): Promise<FactorCounts>;
  /** For `svc copy`: every app row, every recovery code and every passkey, in key order after `after`. */
  totpPage(limit: number, after?: string): Promise<TotpRecord[]>;
  recoveryCodePage(limit: number, after?: string): Promise<RecoveryCodeRecord[]>;
  passkeyPage(limit: number, after?: string): Promise<PasskeyRow[]>;
}

/** The second-factor rows, within a transaction or not. */
export async function factorCountsIn(db: Db, { mfaTotp, mfaRecoveryCodes, passkeys }: Tables): Promise<FactorCounts> {
  const [totp] = await db.select({ n: count() }).from(mfaTotp);
  const [recoveryCodes] = await db.select({ n: count() }).from(mfaRecoveryCodes);
  const [keys] = await db.select({ n: count() }).from(passkeys);
  return { totp: totp!.n, recoveryCodes: recoveryCodes!.n, passkeys: keys!.n };
}

export function mfaCopy({ db, run, tables }: Dialect): MfaCopy {
  const { mfaTotp, mfaRecoveryCodes, passkeys } = tables;
  const [byId, byDigest] = [{ ids: true }, { ids: false }];
  return {
    counts: () => run(() => factorCountsIn(db, tables)),
    totpPage: (limit, after) =>
      run(() => pageAfter(db, mfaTotp, columns(mfaTotp, TOTP_FIELDS), mfaTotp.userId, limit, after, byId)),
    recoveryCodePage: (limit, after) =>
      run(() => {
        const fields = columns(mfaRecoveryCodes, RECOVERY_FIELDS);
        return pageAfter(db, mfaRecoveryCodes, fields, mfaRecoveryCodes.digest, limit, after, byDigest);
      }),
    passkeyPage: (limit, after) =>
      run(() => pageAfter(db, passkeys, columns(passkeys, PASSKEY_FIELDS), passkeys.id, limit, after, byId)),
  };
}
