// auth.login's answer when the account has no second factor: the session (a second step would fail the test).
import type { LoginResult, SignedIn } from "../../client/src/index.ts";

export function signedIn(result: LoginResult): SignedIn {
  if (result.mfaRequired) throw new Error(`a second step was asked for (${result.methods.join(", ")})`);
  return result;
}
