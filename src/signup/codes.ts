// Invitation codes are written, read back and kept as reset codes are (auth/reset-codes.ts): 160 random
// bits in Crockford's base32, forgiving of case, dashes, spaces and look-alike letters, stored only as a
// SHA-256 digest.
export {
  canonicalResetCode as canonicalInvitationCode,
  newResetCode as newInvitationCode,
  resetDigest as invitationDigest,
} from "../auth/reset-codes.ts";
