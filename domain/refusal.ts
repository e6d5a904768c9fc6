/**
 * The codes a rule may refuse with. Each is in the error catalogue (lib/errors), which a test checks; the
 * catalogue gives each its status.
 */
export const REFUSAL_CODES = [
  'VALIDATION_FAILED',
  'INVALID_CURSOR',
  'FORBIDDEN',
  'SELF_APPROVAL_FORBIDDEN',
  'APPROVER_ALREADY_DECIDED',
  'ALREADY_DECIDED',
] as const;
export type RefusalCode = (typeof REFUSAL_CODES)[number];

/**
 * A rule's "no": the code of the answer and why, in words for the caller. A rule in domain/ answers one,
 * or null to let the request through. Whoever asked turns it into the error (`refusedWith` in lib/errors):
 * the API, or data/ inside the transaction that read the facts the rule needs. So the rule is written once,
 * here, and data/ only carries its answer.
 */
export interface Refusal {
  code: RefusalCode;
  why: string;
  /** The fields at fault, for a refused input. */
  fields?: Array<{ path: string; message: string }>;
}
